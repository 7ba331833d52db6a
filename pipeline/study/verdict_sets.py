"""The verdict's test sequences: three kinds of input at each length, drawn from the verdict's own
seed (study.verdict.seed), which no search row and no choice of recipe ever reads.

    uniform      every digit uniform (every sequence there is, where there are fewer than asked)
    repeats      1, 2 or 3 distinct digits (equally often), each position one of them: one digit
                 often has many copies, as test sets of uniform digits never hold
    long_counts  one digit holds most of the row (more than half of it, its count uniform up to the
                 whole row), the rest uniform over the other nine, in shuffled order

The sets are not filtered against any variant's training rows: the verdict's lengths up to 10 are the
trained ones, and a model is judged on them as on the rest.
"""

import numpy as np

from pipeline.study.params import VERDICT_KINDS
from pipeline.study.sets import every_sequence, long_count_row
from pipeline.tokens import DIGITS


def uniform(rng, size, n):
    if DIGITS**n <= size:
        return every_sequence(n)
    return rng.integers(0, DIGITS, size=(size, n), dtype=np.int8)


def repeats(rng, size, n):
    rows = np.empty((size, n), dtype=np.int8)
    for row in rows:
        k = int(rng.integers(1, min(n, 3) + 1))
        row[:] = rng.choice(rng.choice(DIGITS, size=k, replace=False), size=n)
    return rows


def long_counts(rng, size, n):
    rows = np.empty((size, n), dtype=np.int8)
    for row in rows:
        row[:] = long_count_row(rng, n)
    return rows


DRAW = {"uniform": uniform, "repeats": repeats, "long_counts": long_counts}
assert tuple(DRAW) == VERDICT_KINDS, "every kind study/params.yaml accepts is drawn here"


def verdict_set(kind, n, size, seed):
    """`size` sources (int8, (rows, n)) of one kind and length, a function of these four alone."""
    return DRAW[kind](np.random.default_rng([seed, VERDICT_KINDS.index(kind), n]), size, n)

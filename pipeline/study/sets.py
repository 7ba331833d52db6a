"""The study's sequences: each variant's training set, and the test sets that every model of
the study, the pipeline's checkpoints included, is tested on.

The test sets are a function of the study's own parameters only (not of the data stage), so that a
variant's results, cached by DVC, stay valid when the lesson's data or recipe change.
"""

import numpy as np

from pipeline.core.data import draw_test_set, random_sources, row_keys, sorted_targets
from pipeline.tokens import DIGITS


def every_sequence(length):
    """All DIGITS**length sources of one length, in counting order: (10**n, n) int8."""
    codes = np.arange(DIGITS**length)
    powers = DIGITS ** np.arange(length - 1, -1, -1)
    return (codes[:, None] // powers % DIGITS).astype(np.int8)


def training_set(lengths, size, seed, repeats=0.0, long_counts=0.0):
    """A variant's training sequences: `size` rows over `lengths` in equal shares (pipeline.core.data);
    a share `repeats` of them redrawn from k distinct digits, k uniform in 1..min(length, 10), and a
    share `long_counts`, from the others, redrawn with one digit most of the row (long_count_row).
    Each redraw has a generator of its own, so that adding one leaves the rows of the other alone."""
    rng = np.random.default_rng([seed, 0, *sorted(lengths)])
    source, row_lengths = random_sources(rng, size, lengths)
    redrawn = np.zeros(size, dtype=bool)
    if repeats:
        rng = np.random.default_rng([seed, 3, *sorted(lengths)])
        redrawn = repeat_heavy(rng, source, row_lengths, repeats)
    if long_counts:
        rng = np.random.default_rng([seed, 4, *sorted(lengths)])
        with_long_counts(rng, source, row_lengths, long_counts, redrawn)
    return {"source": source, "lengths": row_lengths, "target": sorted_targets(source, row_lengths)}


def repeat_heavy(rng, source, lengths, share):
    """Redraw a share of the rows, in place, from few distinct digits: k of them (k uniform in
    1..min(length, 10)), each position one of the k, so one digit often has many copies. Returns
    which rows it redrew (a boolean per row)."""
    rows = np.flatnonzero(rng.random(len(source)) < share)
    for i in rows:
        n = int(lengths[i])
        k = int(rng.integers(1, min(n, DIGITS) + 1))
        digits = rng.choice(DIGITS, size=k, replace=False)
        source[i, :n] = rng.choice(digits, size=n)
    return np.isin(np.arange(len(source)), rows)


def long_count_row(rng, n):
    """One row of n digits in which one digit (uniform) holds more than half (its count uniform up to
    all n), the rest uniform over the other nine, in shuffled order."""
    digit = int(rng.integers(DIGITS))
    count = int(rng.integers(n // 2 + 1, n + 1))
    others = (digit + rng.integers(1, DIGITS, size=n - count)) % DIGITS  # any digit but `digit`
    return rng.permutation(np.concatenate([np.full(count, digit), others]))


def with_long_counts(rng, source, lengths, share, redrawn):
    """Redraw, in place, a share of all the rows as long_count_row, chosen among the rows not
    `redrawn` before (each with probability share / their share)."""
    free = ~redrawn
    chance = share * len(source) / max(int(free.sum()), 1)
    for i in np.flatnonzero((rng.random(len(source)) < chance) & free):
        n = int(lengths[i])
        source[i, :n] = long_count_row(rng, n)


def training_keys(data):
    return set(row_keys(data["source"], data["lengths"]))


def make_test_sets(lengths, size, seed, train_keys):
    """Per length: its sources, and how many of them also occur in training (only where every
    sequence of that length is tested, or the space is nearly exhausted)."""
    sets, overlap = {}, {}
    for n in lengths:
        if DIGITS**n <= size:
            source = every_sequence(n)
            overlap[n] = sum(k in train_keys for k in row_keys(source, np.full(len(source), n)))
        else:
            source, _, overlap[n] = draw_test_set(np.random.default_rng([seed, 1, n]), size, n, train_keys)
        sets[n] = source
    return sets, overlap


def tested_lengths(max_length, diagnosis_lengths):
    """Every length the study tests (1..study.max_length) and the diagnosis lengths."""
    return sorted({*range(1, max_length + 1), *diagnosis_lengths})


def study_test_sets(train, data, seed, max_length, test_size, diagnosis_lengths):
    """The study's test sets ({length: sources}) and their overlap with training ({length: count}),
    from its sections (study.train, study.data) and values (study.seed, study.max_length,
    study.test_size, study.diagnosis_lengths).

    They leave out every training sequence of the study's own data (study.data, study.train), and
    depend on nothing of study.variants, so that every variant is tested on the same sequences; a
    variant that draws its own training rows has its overlap counted where it trains.
    """
    train_keys = training_keys(training_set(data.train_lengths, train.steps * train.batch_size, seed))
    return make_test_sets(tested_lengths(max_length, diagnosis_lengths), test_size, seed, train_keys)

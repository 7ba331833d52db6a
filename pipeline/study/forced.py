"""Exact sequences in one forward: the teacher-forced argmax at every position.

For a causal decoder that never outputs BOS, a row is sorted exactly under greedy decoding if and
only if every teacher-forced argmax is right: the step at t reads only the tokens before it, which are
the right ones up to the first wrong choice, and that choice is greedy's too. One forward a row, where
greedy decoding runs one a token (tests/test_verdict.py holds the two equal).
"""

from pipeline.core.decoding import shifted_targets, teacher_forced


def forced_greedy(model, src):
    """The teacher-forced argmax at every position (B, T): the sorted source exactly on the rows that
    greedy decoding sorts."""
    return teacher_forced(model, src, shifted_targets(src))

"""The hand-set counting sort (pipeline/study/counting_sort.py): the study's sums architecture, at the
lesson's size, can hold the counting algorithm exactly; what training should reach."""

import dataclasses

import numpy as np
import pytest

from pipeline.core.decoding import accuracy_by_length, sorted_tests
from pipeline.infra.errors import ConfigError
from pipeline.report.study.context import HANDSET_BREAKS, HANDSET_LONGEST  # the appendix says them too
from pipeline.study.counting_sort import SUMS, counting_sort_model
from pipeline.study.forced import forced_greedy
from pipeline.study.params import check_handset_fits


def exact(model, source, batch_size):
    """Greedy exact-sequence accuracy on equal-length rows `source`, against their sorted copies, in
    one teacher-forced forward a batch: a row is exact exactly where greedy decoding sorts it
    (pipeline/study/forced.py; tests/test_certificate.py holds the two equal row by row)."""
    tests = sorted_tests({source.shape[1]: source})
    rows, _ = accuracy_by_length(model, tests, batch_size, decoders={"greedy": forced_greedy})
    return rows[0]["seq_acc"]


def sequences(length, rows=1000, seed=0):
    """`rows` random sources of one length (every one of them where fewer exist)."""
    if 10**length <= rows:
        codes = np.arange(10**length)
        return codes[:, None] // 10 ** np.arange(length - 1, -1, -1) % 10
    return np.random.default_rng([seed, length]).integers(0, 10, (rows, length))


@pytest.mark.slow
def test_the_hand_set_model_sorts_every_length_from_1_to_40():
    model = counting_sort_model()
    accuracy = {n: exact(model, sequences(n), 1000) for n in range(1, HANDSET_LONGEST + 1)}
    assert all(a == 1.0 for a in accuracy.values()), {n: a for n, a in accuracy.items() if a < 1}


def test_it_sorts_the_inputs_that_break_trained_models():
    """Many copies of one digit (the counts training on lengths up to 10 never shows), at lengths
    the trained models fail at."""
    model = counting_sort_model()
    longest = HANDSET_LONGEST
    rows = [[d] * (longest - 1) + [e] for d in range(10) for e in range(10)]  # all but one a copy of d
    rows += [list(range(10)) + [7] * (longest - 10)]  # all ten digits, 7 filling the rest
    for length in (20, 40):
        assert exact(model, sequences(length, 200), 200) == 1.0
    assert exact(model, np.array(rows[:-1]), 100) == 1.0
    assert exact(model, np.array(rows[-1:]), 1) == 1.0


def test_without_its_constant_or_its_sink_layernorm_breaks_the_count():
    """Post-norm LayerNorm divides the stream by its norm: without a large constant part a growing
    count moves the normaliser, and without the sink a count leaks into every dimension's mean."""
    long = sequences(HANDSET_BREAKS, 200)
    assert exact(counting_sort_model(const=0.0), long, 200) < 0.5
    assert exact(counting_sort_model(sink=False), long, 200) < 0.5


def test_it_needs_the_sums_architecture():
    check_handset_fits(SUMS)
    with pytest.raises(ConfigError, match="handset needs d_model 32"):
        check_handset_fits(dataclasses.replace(SUMS, d_model=64))
    with pytest.raises(ConfigError, match="attention softmax"):
        check_handset_fits(dataclasses.replace(SUMS, attention="softmax"))

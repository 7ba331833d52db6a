"""The hand-set counting sort (pipeline/model/handset.py): the study's sums architecture, at the
lesson's size, can hold the counting algorithm exactly; what training should reach."""

import dataclasses

import numpy as np
import pytest

from pipeline.core.decoding import greedy_accuracy
from pipeline.infra.errors import ConfigError
from pipeline.model.handset import SUMS, counting_sort_model
from pipeline.model.options import check_handset_fits


def sequences(length, rows=1000, seed=0):
    """`rows` random sources of one length (every one of them where fewer exist)."""
    if 10**length <= rows:
        codes = np.arange(10**length)
        return codes[:, None] // 10 ** np.arange(length - 1, -1, -1) % 10
    return np.random.default_rng([seed, length]).integers(0, 10, (rows, length))


@pytest.mark.slow
def test_the_hand_set_model_sorts_every_length_from_1_to_40():
    model = counting_sort_model()
    accuracy = {n: greedy_accuracy(model, sequences(n), 1000)[0] for n in range(1, 41)}
    assert all(a == 1.0 for a in accuracy.values()), {n: a for n, a in accuracy.items() if a < 1}


def test_it_sorts_the_inputs_that_break_trained_models():
    """Many copies of one digit (the counts training on lengths up to 10 never shows), at lengths
    the trained models fail at."""
    model = counting_sort_model()
    rows = [[d] * 39 + [e] for d in range(10) for e in range(10)]  # 39 copies of one digit, one other
    rows += [list(range(10)) + [7] * 30]  # all ten digits, one of them 31 times
    for length in (20, 40):
        assert greedy_accuracy(model, sequences(length, 200), 200)[0] == 1.0
    assert greedy_accuracy(model, np.array(rows[:-1]), 100)[0] == 1.0
    assert greedy_accuracy(model, np.array(rows[-1:]), 1)[0] == 1.0


def test_without_its_constant_or_its_sink_layernorm_breaks_the_count():
    """Post-norm LayerNorm divides the stream by its norm: without a large constant part a growing
    count moves the normaliser, and without the sink a count leaks into every dimension's mean."""
    long = sequences(20, 200)
    assert greedy_accuracy(counting_sort_model(const=0.0), long, 200)[0] < 0.5
    assert greedy_accuracy(counting_sort_model(sink=False), long, 200)[0] < 0.5


def test_it_needs_the_sums_architecture():
    check_handset_fits(SUMS)
    with pytest.raises(ConfigError, match="handset needs d_model 32"):
        check_handset_fits(dataclasses.replace(SUMS, d_model=64))
    with pytest.raises(ConfigError, match="attention softmax"):
        check_handset_fits(dataclasses.replace(SUMS, attention="softmax"))

"""Batches: the order of rows each step trains on, mixed or one length a batch."""

import itertools

import numpy as np
import pytest

from pipeline.core.batching import batch_indices
from pipeline.core.data import make_datasets, random_sources
from tests.conftest import tiny_params, trained_alone


def take(size, batch_size, steps, seed, lengths=None):
    return [b.tolist() for b in batch_indices(size, batch_size, steps, seed, lengths)]


def test_mixed_batches_walk_a_seeded_permutation_per_pass():
    first_pass = take(100, 16, 6, seed=3)
    rows = list(itertools.chain(*first_pass))
    assert len(set(rows)) == 96 and all(len(b) == 16 for b in first_pass)  # 4 rows sit out the pass
    assert take(100, 16, 12, seed=3)[:6] == first_pass and take(100, 16, 6, seed=4) != first_pass


def test_batches_by_length_hold_one_length_and_cover_a_pass_once():
    _, lengths = random_sources(np.random.default_rng(0), 640, [2, 3, 5])
    one_pass = take(640, 16, 39, seed=0, lengths=lengths)  # 213 or 214 rows a length: 13 batches each
    for rows in one_pass:
        assert len(rows) == 16 and len(set(lengths[rows])) == 1
    assert len(set(itertools.chain(*one_pass))) == 39 * 16  # no row twice within the pass
    assert {int(lengths[b[0]]) for b in one_pass[:8]} == {2, 3, 5}  # the lengths are interleaved
    assert take(640, 16, 39, seed=0, lengths=lengths) == one_pass  # the same on every run


def test_a_length_too_rare_to_fill_a_batch_is_an_error():
    with pytest.raises(ValueError, match="no length has 16 rows"):
        take(10, 16, 1, seed=0, lengths=np.array([1] * 5 + [2] * 5))


def test_training_by_length_needs_no_padding_and_gives_other_batches():
    params = tiny_params(data={"train_lengths": (2, 3, 5)}, train={"steps": 6})
    data = make_datasets(params.data)[0]
    seen, rows, tp = [], len(data["source"]), params.train
    order = batch_indices(rows, tp.batch_size, tp.steps, 0, data["lengths"])
    _, by_length = trained_alone(params.model, tp, 0, data, on_step=lambda *a: seen.append(a), orders=[order])
    _, mixed = trained_alone(params.model, params.train, 0, data)
    assert len(seen) == 6 and by_length != mixed

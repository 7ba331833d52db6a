"""Seeds trained together (pipeline/core/loop.py, pipeline/core/seed_axis.py): a seed's bytes do not
depend on its companions, its step equals its model's called alone, and every stage's choice of batches
and models trains through it."""

import dataclasses
import io

import numpy as np
import pytest
import torch

from pipeline.core.batching import Batch, batch_indices
from pipeline.core.data import synthetic_rows
from pipeline.core.decoding import beam_search, decode_set, greedy_cached
from pipeline.core.loop import batch_loss, train
from pipeline.core.seed_axis import ModelsTogether, SeedStack, seed_groups, stacked_batch
from pipeline.model import draws
from pipeline.model.transformer import Transformer
from pipeline.params import lesson
from pipeline.study.model import StudyTransformer
from pipeline.study.sets import training_set
from pipeline.study.variant import train_variant
from tests.conftest import model_config, study_config, tiny_params


def weights_bytes(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return buffer.getvalue()


def assert_alone_equals_beside(train, seed, companions):
    """`train(seeds)` -> (models, losses): seed `seed` trained alone and among `companions` ends with
    the same losses and the same weights, bit for bit."""
    (alone,), (alone_losses,) = train([seed])
    models, losses = train(companions)
    i = companions.index(seed)
    assert losses[i] == alone_losses
    assert weights_bytes(models[i]) == weights_bytes(alone)
    assert len({weights_bytes(m) for m in models}) == len(companions)  # each seed its own


@pytest.mark.parametrize(
    "overrides",
    [
        {"model": {"dropout": 0.1, "layers": 2}},
        {"data": {"train_lengths": (3, 5, 7)}, "model": {"dropout": 0.1}},  # padded rows
    ],
    ids=["dropout", "padded rows"],
)
def test_a_seed_trains_to_the_same_bytes_alone_or_beside_others(overrides):
    from pipeline.core.data import make_datasets

    params = tiny_params(train={"steps": 8}, **overrides)
    data = make_datasets(params.data)[0]
    assert_alone_equals_beside(lambda seeds: train(params.model, params.train, seeds, data), 3, [0, 3, 5])


@pytest.mark.parametrize("positions", ["bos", "randomized", "offset"])
def test_a_study_seed_trains_to_the_same_bytes_alone_or_beside_others(positions):
    """The study's own training: one-length batches in one order of lengths, its schemes' random
    positions drawn per seed, and the count hint."""
    params = tiny_params()
    config = study_config(
        positions=positions, d_model=16, heads=2, layers=1, d_ff=32, dropout=0.1, max_len=24
    )
    recipe = dataclasses.replace(params.study.train, steps=6, count_hint=0.5)
    data = training_set((1, 2, 3, 4), recipe.steps * recipe.batch_size, 0, 0.0)
    assert_alone_equals_beside(
        lambda seeds: train_variant(config, recipe, data, seeds, "cpu"), 101, [100, 101]
    )


def test_the_batched_step_equals_each_seeds_model_called_alone():
    """One step of seeds 0 and 1 together, at the lesson's size, against each seed's model called
    alone on its own batch with its own dropout masks: the same loss and every weight's gradient the
    same, bit for bit (the model trains in the seed axis's steps, pipeline/model/transformer.py)."""
    config, seeds = lesson.MODEL, [0, 1]
    data = synthetic_rows(64 * 2, 10)
    orders = [[np.arange(64) + 64 * i] for i in range(2)]
    stack = SeedStack(Transformer, config, seeds)
    batch = stacked_batch(data, [o[0] for o in orders], data["source"].shape[1], "cpu")
    size = stack.numbers_drawn(batch_loss, 0.1, batch)
    numbers = draws.step_numbers(stack.generators, size, "cpu")
    loss = stack.batched_loss(batch_loss, 0.1, masked=False)(stack.weights, numbers, *batch)
    loss.sum().backward()
    for i, seed in enumerate(seeds):
        torch.manual_seed(seed)
        model = Transformer(config).train()
        with draws.from_block(numbers[i]):
            one = batch_loss(model, Batch(*(None if x is None else x[i] for x in batch)), 0.1)
        one.backward()
        assert torch.equal(one, loss[i])
        for name, w in model.named_parameters():
            assert torch.equal(stack.weights[name].grad[i], w.grad), name


def test_one_length_batches_come_in_one_order_of_lengths_for_every_seed():
    data = training_set((1, 2, 3, 4, 5), 64 * 40, 0, 0.0)
    orders = [list(batch_indices(len(data["source"]), 16, 60, s, data["lengths"])) for s in (0, 1)]
    for a, b in zip(*orders, strict=True):
        assert len(set(data["lengths"][a])) == 1 and set(data["lengths"][a]) == set(data["lengths"][b])
    assert any(not np.array_equal(a, b) for a, b in zip(*orders, strict=True))  # the rows are each seed's


def test_seeds_of_one_length_order_refuse_batches_of_two_widths():
    data = training_set((2, 3), 64, 0, 0.0)
    two = [np.flatnonzero(data["lengths"] == n)[:4] for n in (2, 3)]
    with pytest.raises(ValueError, match="one length at each step"):
        stacked_batch(data, two, None, "cpu")


@pytest.mark.parametrize(
    ("seeds", "processes", "together_from", "groups"),
    [
        (10, 2, 3, [5, 5]),  # five a process: together
        (7, 2, 3, [4, 3]),
        (5, 2, 3, [1] * 5),  # fewer than three a process: each alone, five processes on two cores
        (3, 2, 3, [1, 1, 1]),
        (4, 16, 3, [1, 1, 1, 1]),
        (2, 1, 3, [2]),  # one process (a GPU): every seed in it
        (5, 2, 1, [3, 2]),  # the search's groups of at most three
    ],
)
def test_seeds_split_into_groups_as_even_as_can_be(seeds, processes, together_from, groups):
    split = seed_groups(range(seeds), processes, together_from)
    assert [len(g) for g in split] == groups and [s for g in split for s in g] == list(range(seeds))


def test_a_model_that_draws_more_than_counted_is_refused():
    with draws.from_block(torch.zeros(5)), pytest.raises(RuntimeError, match="more numbers"):
        draws.uniform(torch.zeros(()), (2, 3))


def test_the_one_models_dropout_masks_are_the_blocks():
    """A seed's masks drawn as it goes (one model) and from its step's block (seeds together)."""
    config = model_config(dropout=0.5)
    x = torch.ones(4, 3, config.d_model)
    torch.manual_seed(9)
    model = Transformer(config).train()
    state = torch.get_rng_state()
    going = [model.drop(x), model.drop(x)]
    generator = torch.Generator()
    generator.set_state(state)
    with draws.from_block(draws.step_numbers([generator], 2 * x.numel(), "cpu")[0]):
        block = [model.drop(x), model.drop(x)]
    assert all(torch.equal(a, b) for a, b in zip(going, block, strict=True))


@pytest.mark.parametrize("positions", ["sinusoidal", "randomized"])
def test_models_decode_together_as_each_alone_one_by_one_or_batched(positions):
    """The evaluate stage's decoding of a group: every model's tokens as it decodes alone (randomized
    positions draw at test time: each model draws what it would alone), on the CPU's path (one by one)
    and the GPU's (batched under vmap)."""
    config = study_config(positions=positions, d_model=16, heads=2, layers=1, d_ff=32, max_len=24)
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        models.append(StudyTransformer(config).eval())
    source = np.random.default_rng(0).integers(0, 10, (40, 6))
    decoders = {"greedy": greedy_cached, "beam": lambda m, src: beam_search(m, src, 3, 0.6)}
    alone = [decode_set(m, source, 16, decoders) for m in models]
    for batched in (False, True):
        together = ModelsTogether(models, batched=batched)
        tokens = decode_set(together, source, 16, {n: together.decoder(d) for n, d in decoders.items()})
        for name in decoders:
            assert all(torch.equal(tokens[name][i], alone[i][name]) for i in range(3)), (name, batched)

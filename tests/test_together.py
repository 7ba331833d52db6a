"""Seeds trained together (pipeline/core/together.py): a seed's bytes do not depend on its
companions, its step equals the one-model loop's up to rounding, and every stage's choice of batches
and models trains through it."""

import dataclasses
import io

import numpy as np
import pytest
import torch

from pipeline.core.batching import Batch, batch_indices
from pipeline.core.data import synthetic_rows
from pipeline.core.decoding import beam_search, decode_set, greedy_cached
from pipeline.core.loop import batch_loss
from pipeline.core.together import ModelsTogether, SeedStack, seed_groups, stacked_batch, train_together
from pipeline.model import draws
from pipeline.model.transformer import Transformer
from pipeline.params import lesson
from pipeline.study.sets import training_set
from pipeline.study.variant import train_variant
from tests.conftest import model_config, tiny_params


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
    assert_alone_equals_beside(
        lambda seeds: train_together(params.model, params.train, seeds, data), 3, [0, 3, 5]
    )


@pytest.mark.parametrize("positions", ["bos", "randomized", "offset"])
def test_a_study_seed_trains_to_the_same_bytes_alone_or_beside_others(positions):
    """The study's own training: one-length batches in one order of lengths, its schemes' random
    positions drawn per seed, and the count hint."""
    params = tiny_params()
    config = model_config(
        positions=positions, d_model=16, heads=2, layers=1, d_ff=32, dropout=0.1, max_len=24
    )
    recipe = dataclasses.replace(params.study.train, steps=6, count_hint=0.5)
    data = training_set((1, 2, 3, 4), recipe.steps * recipe.batch_size, 0, 0.0)
    assert_alone_equals_beside(
        lambda seeds: train_variant(config, recipe, data, seeds, "cpu"), 101, [100, 101]
    )


def test_the_batched_step_equals_the_one_model_step_seed_by_seed():
    """One step of seeds 0 and 1 together against each seed's model alone on its own batch, dropout
    masks included: the loss and every weight's gradient agree up to float32 rounding in another
    order. The rule: a sum of n terms computed in two orders differs by at most n u times the sum of
    the terms' magnitudes (u = 2^-24); the longest sums are a weight's gradient over every row of the
    batch (n = B T = 640), and a gradient crosses at most 12 sublayers (2 encoder layers of 2, 2
    decoder layers of 3, the embedding and the logits), so each weight's gradient agrees within
    12 x 640 u of the whole gradient's norm (of the whole: a gradient whose terms cancel to 0, as the
    keys' bias under softmax, has no accuracy of its own), and the loss within 640 u of itself."""
    config, seeds = lesson.MODEL, [0, 1]
    data = synthetic_rows(64 * 2, 10)
    orders = [[np.arange(64) + 64 * i] for i in range(2)]
    stack = SeedStack(Transformer, config, seeds)
    batch = stacked_batch(data, [o[0] for o in orders], data["source"].shape[1], "cpu")
    size = stack.numbers_drawn(batch_loss, 0.1, batch)
    loss = stack.batched_loss(batch_loss, 0.1, masked=False)(
        stack.weights, draws.step_numbers(stack.generators, size, "cpu"), *batch
    )
    loss.sum().backward()
    u = 2.0**-24
    for i, seed in enumerate(seeds):
        torch.manual_seed(seed)
        model = Transformer(config).train()
        one = batch_loss(model, Batch(*(None if x is None else x[i] for x in batch)), 0.1)  # seed i's batch
        one.backward()
        assert abs(one.item() - loss[i].item()) <= 640 * u * one.item()
        whole = torch.cat([w.grad.flatten() for w in model.parameters()]).norm()
        for name, w in model.named_parameters():
            together = stack.weights[name].grad[i]
            assert (together - w.grad).norm() <= 12 * 640 * u * whole, name
            assert not torch.equal(together, torch.zeros_like(together)) or torch.equal(w.grad, together)


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
    ("seeds", "processes", "groups"),
    [(10, 2, [5, 5]), (5, 2, [3, 2]), (3, 2, [2, 1]), (1, 2, [1]), (4, 16, [1, 1, 1, 1])],
)
def test_seeds_split_into_groups_as_even_as_can_be(seeds, processes, groups):
    split = seed_groups(range(seeds), processes)
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
    config = model_config(positions=positions, d_model=16, heads=2, layers=1, d_ff=32, max_len=24)
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        models.append(Transformer(config).eval())
    source = np.random.default_rng(0).integers(0, 10, (40, 6))
    decoders = {"greedy": greedy_cached, "beam": lambda m, src: beam_search(m, src, 3, 0.6)}
    alone = [decode_set(m, source, 16, decoders) for m in models]
    for batched in (False, True):
        together = ModelsTogether(models, batched=batched)
        tokens = decode_set(together, source, 16, {n: together.decoder(d) for n, d in decoders.items()})
        for name in decoders:
            assert all(torch.equal(tokens[name][i], alone[i][name]) for i in range(3)), (name, batched)

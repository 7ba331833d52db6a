"""Fast decoding agrees with the plain one (the key/value cache, beam search)."""

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline.core.data import make_datasets, read_test_sets
from pipeline.core.decoding import beam_search, greedy, greedy_cached, length_penalty
from pipeline.core.evaluate import at_trained, evaluate_model
from pipeline.model.checkpoint import load_checkpoint
from pipeline.model.hooks import attention_weights
from pipeline.model.transformer import Transformer, padding_mask
from pipeline.tokens import BOS
from tests.conftest import model_config, tiny_params, trained_alone

CHECKPOINT, TEST_DATA = Path("models/seed_0.pt"), Path("data/test.npz")


def random_model(norm, seed=0, **config):
    """A tiny model with random weights, in eval mode (decoding never drops out)."""
    torch.manual_seed(seed)
    base = {"d_model": 16, "heads": 2, "layers": 2, "d_ff": 32, "dropout": 0.1, "max_len": 24, "norm": norm}
    return Transformer(model_config(**{**base, **config})).eval()


@pytest.fixture(scope="module")
def half_trained():
    """Tiny models after 100 steps on sorting lengths 4, 6 and 8 (about a second each). Random weights
    decode nearly every input to one repeated digit; these write varied outputs, where a cache that
    went wrong would show, and beam search often departs from greedy."""
    models = {}
    for norm in ("post", "pre"):
        params = tiny_params(
            data={"train_lengths": (4, 6, 8), "train_size": 2048},
            model={"norm": norm, "layers": 2, "max_len": 24},
            train={"steps": 100, "lr": 0.02, "warmup": 10},
        )
        models[norm] = trained_alone(params.model, params.train, 0, make_datasets(params.data)[0])[0].eval()
    return models


def random_sources(rows, length, padded, seed=1):
    """(src, src_mask): digits, and when `padded` a mask hiding a random tail of most rows."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, 10, (rows, length), generator=g)
    if not padded:
        return src, None
    lengths = torch.randint(2, length + 1, (rows,), generator=g)
    lengths[0] = length  # one full row, as make_batch trims to the longest
    src = src.masked_fill(torch.arange(length)[None, :] >= lengths[:, None], 0)
    return src, padding_mask(lengths, length)


CASES = list(itertools.product(["post", "pre"], [False, True]))


@pytest.mark.parametrize("norm, padded", CASES)
def test_cached_greedy_equals_uncached_token_for_token(norm, padded, half_trained):
    models = [random_model(norm, seed) for seed in range(3)] + [half_trained[norm]]
    for seed, model in enumerate(models):
        src, mask = random_sources(64, 8, padded, seed)
        for out_len in (8, 14):
            expected = greedy(model, src, out_len, mask)
            assert torch.equal(greedy_cached(model, src, out_len, mask), expected)
    assert expected.unique(dim=0).shape[0] > 10  # the half-trained model writes varied outputs


@pytest.mark.parametrize("norm, padded", CASES)
def test_each_cached_step_gives_the_last_row_of_full_decoding(norm, padded, half_trained):
    model = half_trained[norm]
    src, mask = random_sources(6, 8, padded)
    memory = model.encode(src, mask)
    cache = model.start_cache(memory, mask, steps=8)
    tgt_in = torch.cat([torch.full((6, 1), BOS), torch.randint(0, 10, (6, 7))], dim=1)
    with torch.no_grad():
        for t in range(8):
            with attention_weights(model.decoder) as every:
                full = model.decode(tgt_in[:, : t + 1], memory, mask)[:, -1]
            with attention_weights(model.decoder) as one:
                step = model.decode_step(tgt_in[:, t], cache)
            assert torch.allclose(step, full, atol=1e-5)
            crosses = [name for name in every if name.endswith("cross")]
            assert len(crosses) == len(model.decoder)
            for name in crosses:  # the cross-attention of the new row
                (b,), (a,) = every[name], one[name]
                assert b.shape == (6, 2, t + 1, 8)
                assert torch.allclose(a[:, :, 0], b[:, :, -1], atol=1e-6)
    with pytest.raises(ValueError, match="room for 8 tokens"):
        model.decode_step(tgt_in[:, 0], cache)


def test_a_full_cache_cannot_outgrow_the_positions():
    model = random_model("post", max_len=6)
    with pytest.raises(ValueError, match="exceed max_len"):
        model.start_cache(model.encode(torch.zeros(1, 3, dtype=torch.long)), steps=7)


@pytest.mark.skipif(not CHECKPOINT.exists(), reason="no trained checkpoint (run `dvc repro train`)")
def test_cached_greedy_equals_uncached_on_the_trained_model():
    model, _ = load_checkpoint(CHECKPOINT)
    if TEST_DATA.exists():
        test = read_test_sets(TEST_DATA, (10, 12))
        sources = [torch.as_tensor(test[n][0][:200], dtype=torch.long) for n in (10, 12)]
    else:
        sources = [
            torch.randint(0, 10, (200, n), generator=torch.Generator().manual_seed(n)) for n in (10, 12)
        ]
    for src in sources:
        assert torch.equal(greedy_cached(model, src), greedy(model, src))


@pytest.mark.parametrize("norm, padded", CASES)
def test_beam_of_one_is_greedy(norm, padded, half_trained):
    for model in (random_model(norm), half_trained[norm]):
        src, mask = random_sources(64, 8, padded)
        expected = greedy(model, src, src_mask=mask)
        assert torch.equal(beam_search(model, src, beam_size=1, src_mask=mask), expected)


def test_beam_search_finds_the_best_sequence_when_the_beam_holds_every_prefix(half_trained):
    """Two output tokens, ten digits: a beam of 10 keeps every first token, so it must return the
    most probable of all 100 outputs, found here by scoring each one with teacher forcing."""
    model = half_trained["post"]
    src, mask = random_sources(5, 6, padded=True)
    found = beam_search(model, src, beam_size=10, out_len=2, src_mask=mask)
    pairs = torch.tensor(list(itertools.product(range(10), repeat=2)))  # (100, 2)
    with torch.no_grad():
        for i in range(5):
            tgt_in = torch.cat([torch.full((100, 1), BOS), pairs[:, :1]], dim=1)
            logits = model(src[i : i + 1].expand(100, -1), tgt_in, mask[i : i + 1].expand(100, -1, -1, -1))
            logits[..., BOS] = float("-inf")
            logp = logits.log_softmax(-1).gather(2, pairs[:, :, None]).sum((1, 2))  # (100,)
            assert found[i].tolist() == pairs[logp.argmax()].tolist()


def test_beam_search_departs_from_greedy_on_some_inputs(half_trained):
    src, mask = random_sources(64, 8, padded=True)
    model = half_trained["pre"]
    assert (beam_search(model, src, 4, src_mask=mask) != greedy(model, src, src_mask=mask)).any(1).sum() > 5


def test_length_penalty_cannot_reorder_outputs_of_one_length(half_trained):
    assert length_penalty(1, 0.6) == pytest.approx(1.0)  # (5 + 1) / 6 = 1
    assert length_penalty(10, 0.6) == pytest.approx(2.5**0.6)
    assert length_penalty(10, 0.0) == 1.0
    model = half_trained["pre"]
    src, mask = random_sources(32, 9, padded=True)
    outputs = [beam_search(model, src, 4, alpha, src_mask=mask) for alpha in (0.0, 0.6, 2.0)]
    assert all(torch.equal(outputs[0], out) for out in outputs[1:])


def test_evaluate_reports_beam_search_and_teacher_forcing_at_the_trained_lengths_only(half_trained):
    model = half_trained["post"]
    g = np.random.default_rng(0)
    test = {}
    for n in (4, 6):
        source = g.integers(0, 10, (30, n)).astype(np.int8)
        test[n] = source, np.sort(source, axis=1)
    rows, _ = evaluate_model(model, test, (4, 6), 16, "cpu", trained=(6,), beam_size=3, length_penalty=0.6)
    measured = {(r["decoder"], r["length"]): r for r in rows}
    assert set(measured) == {("greedy", 4), ("greedy", 6), ("tf", 6), ("beam", 6)}
    top = at_trained(rows, (6,), (4, 6))
    assert top["beam_seq_acc"] == measured["beam", 6]["seq_acc"]
    assert top["greedy_seq_acc"] == measured["greedy", 6]["seq_acc"]


def test_greedy_runs_the_encoder_once_while_it_writes_the_whole_output(monkeypatch):
    """«El encoder corre una sola vez»: counted by a hook on the encoder's first layer, which would
    count a decoder that encoded the source again at every step."""
    from pipeline.core import decoding
    from pipeline.probes.architecture import greedy_encoder_runs

    model = Transformer(model_config()).eval()
    assert greedy_encoder_runs(model) == {"greedy_encoder_runs": 1, "greedy_tokens_written": 10}

    def encoding_every_step(m, src):
        return torch.stack([greedy(m, src, out_len=1)[:, 0] for _ in range(src.shape[1])], 1)

    monkeypatch.setitem(decoding.GREEDY, "greedy", encoding_every_step)
    assert greedy_encoder_runs(model)["greedy_encoder_runs"] == 10

"""The length study's positional and attention schemes: masks, caches, invariances, each scheme's shape."""

import math

import numpy as np
import pytest
import torch

from pipeline.core.batching import make_batch
from pipeline.core.data import make_datasets
from pipeline.core.decoding import beam_search, greedy, greedy_cached, seed_test_draws
from pipeline.core.loss import smoothed_loss
from pipeline.infra.errors import ConfigError
from pipeline.model.hooks import attention_weights
from pipeline.model.transformer import (
    MultiHeadAttention,
    additive_mask,
    causal_mask,
    count_parameters,
    padding_mask,
)
from pipeline.params.rules import as_dict, parse
from pipeline.study.attention import rounded_gates, visible_keys
from pipeline.study.diagnosis import diagnose, length_accuracy, mean_over_seeds, seed_rows
from pipeline.study.model import WEIGHTINGS, StudyTransformer, weighting
from pipeline.study.options import POSITIONS, StudyModelConfig, attention_kinds
from pipeline.study.positions import alibi_bias, random_positions
from pipeline.study.variant import at_plain_positions
from pipeline.tokens import BOS, IGNORE
from tests.conftest import study_config, tiny_params, trained_alone

TINY = {"d_model": 16, "heads": 2, "layers": 2, "d_ff": 32, "dropout": 0.1, "max_len": 24}


def random_model(positions, seed=0, **config):
    torch.manual_seed(seed)
    return StudyTransformer(study_config(**{**TINY, "positions": positions, **config})).eval()


@pytest.fixture(scope="module")
def trained():
    """Tiny models of every scheme after 80 steps on lengths 2-8: they write varied outputs."""
    models = {}
    for positions in POSITIONS:
        params = tiny_params(
            data={"train_lengths": (2, 4, 6, 8), "train_size": 1024},
            model={"layers": 2, "max_len": 24},
            train={"steps": 80, "lr": 0.02, "warmup": 10},
        )
        config = study_config(**{**as_dict(params.model), "positions": positions})  # a variant's scheme
        data = make_datasets(params.data)[0]
        model, _ = trained_alone(config, params.train, 0, data, build_model=StudyTransformer)
        models[positions] = model.eval()
    return models


@pytest.fixture
def first_positions(monkeypatch):
    """Randomized positions draw at evaluation too; here every draw is 0, 1, 2, ..., so the checks of
    padding and caching below test the scheme's plumbing rather than two different draws."""

    def first(like, batch, size, max_len):
        return torch.arange(size, device=like.device).expand(batch, size)

    monkeypatch.setattr("pipeline.study.positions.random_positions", first)


def assert_junk_after_the_end_changes_nothing(model):
    """Two rows of 4 real tokens padded with 5 of junk: the real positions' logits stay the same.
    Returns the unpadded inputs."""
    g = torch.Generator().manual_seed(3)
    src, tgt_in = torch.randint(0, 10, (2, 4), generator=g), torch.randint(0, 11, (2, 4), generator=g)
    tgt_in[:, 0] = BOS
    junk = torch.randint(0, 10, (2, 5), generator=g)
    mask = padding_mask(torch.tensor([4, 4]), 9)
    padded = model(torch.cat([src, junk], 1), torch.cat([tgt_in, junk], 1), mask)
    assert torch.allclose(padded[:, :4], model(src, tgt_in), atol=1e-5)
    return src, tgt_in


def padded_sources(rows, length, seed=1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, 10, (rows, length), generator=g)
    lengths = torch.randint(1, length + 1, (rows,), generator=g)
    lengths[0] = length
    return src.masked_fill(torch.arange(length)[None, :] >= lengths[:, None], 0), lengths


# ------------------------------------------------------------------------- every scheme


def test_the_default_model_is_the_lessons():
    assert study_config().positions == "sinusoidal"
    model = StudyTransformer(study_config())
    assert count_parameters(model) == 59_744
    assert not hasattr(model.positions, "table") and not hasattr(model.positions, "bias")


@pytest.mark.parametrize("positions", tuple(POSITIONS))
def test_parameter_counts(positions):
    extra = 64 * 32 if positions == "learned" else 0  # one learned vector per position
    assert count_parameters(StudyTransformer(study_config(positions=positions))) == 59_744 + extra


@pytest.mark.parametrize("positions", tuple(POSITIONS))
def test_cached_greedy_equals_uncached_for_every_scheme(positions, trained, first_positions):
    for model in (random_model(positions), trained[positions]):
        src, lengths = padded_sources(48, 9)
        mask = padding_mask(lengths, 9)
        for out_len in (9, 14) if positions != "randomized" else (9,):  # it decodes the source's length
            assert torch.equal(greedy_cached(model, src, out_len, mask), greedy(model, src, out_len, mask))
            assert torch.equal(greedy_cached(model, src, out_len), greedy(model, src, out_len))
    assert greedy(trained[positions], src).unique(dim=0).shape[0] > 5  # varied outputs


@pytest.mark.parametrize("positions", tuple(POSITIONS))
def test_padding_never_changes_outputs_at_real_positions(positions, trained, first_positions):
    """Junk after a row's end, hidden by the key-padding mask (encoder self-attention and
    cross-attention) and by the causal mask (decoder), leaves every real position's logits equal."""
    for model in (random_model(positions, dropout=0.0), trained[positions]):
        g = torch.Generator().manual_seed(3)
        for n in (1, 4, 7):
            src, tgt_in = torch.randint(0, 10, (2, n), generator=g), torch.randint(0, 11, (2, n), generator=g)
            tgt_in[:, 0] = BOS
            junk_src, junk_tgt = (
                torch.randint(0, 10, (2, 5), generator=g),
                torch.randint(0, 11, (2, 5), generator=g),
            )
            mask = padding_mask(torch.tensor([n, n]), n + 5)
            plain = model(src, tgt_in)
            padded = model(torch.cat([src, junk_src], 1), torch.cat([tgt_in, junk_tgt], 1), mask)
            assert torch.allclose(padded[:, :n], plain, atol=1e-5)


@pytest.mark.parametrize("positions", tuple(POSITIONS))
def test_the_loss_ignores_padding(positions, first_positions):
    """A batch of rows of lengths 3 and 6: its loss is the mean over the 9 real tokens, whatever sits
    in the padding; junk there changes nothing."""
    model = random_model(positions, dropout=0.0).train()  # randomized positions draw in training
    source = np.array([[4, 1, 3, 0, 0, 0], [9, 2, 2, 7, 0, 5]])
    lengths = np.array([3, 6])
    target = np.where(
        np.arange(6) < lengths[:, None], np.sort(np.where(np.arange(6) < lengths[:, None], source, 10)), 0
    )
    batch = make_batch(source, target, lengths)
    assert (batch.target[0, 3:] == IGNORE).all() and batch.src_mask[0, 0, 0].tolist() == [False] * 3 + [
        True
    ] * 3
    torch.manual_seed(5)
    loss = smoothed_loss(model(batch.src, batch.tgt_in, batch.src_mask), batch.target, 0.1)
    junk = make_batch(np.where(batch.src_mask[:, 0, 0].numpy(), 8, source), target, lengths)
    junk_in = batch.tgt_in.clone()
    junk_in[0, 4:] = 7  # decoder inputs after the row's end
    torch.manual_seed(5)
    assert torch.allclose(smoothed_loss(model(junk.src, junk_in, junk.src_mask), junk.target, 0.1), loss)
    model.eval()
    per_token = []
    for i, n in enumerate(lengths):
        logits = model(batch.src[i : i + 1, :n], batch.tgt_in[i : i + 1, :n])
        per_token.append(smoothed_loss(logits, batch.target[i : i + 1, :n], 0.1) * n)
    full = smoothed_loss(model(batch.src, batch.tgt_in, batch.src_mask), batch.target, 0.1)
    assert torch.allclose(full, sum(per_token) / lengths.sum(), atol=1e-6)


# ------------------------------------------------------------------- log-length attention


def test_visible_keys_counts_what_each_query_may_see():
    assert visible_keys(None, 7).item() == 7
    assert visible_keys(causal_mask(4), 4).flatten().tolist() == [1, 2, 3, 4]
    padded = padding_mask(torch.tensor([2, 5]), 5)
    assert visible_keys(padded, 5).flatten().tolist() == [2, 5]
    assert visible_keys(additive_mask(padded), 5).flatten().tolist() == [2, 5]


def test_log_length_keeps_one_keys_weight_among_more_keys():
    """One key scores s, n - 1 others 0: softmax gives it e^s / (e^s + n - 1), which falls as n grows;
    log-length attention gives n^s / (n^s + n - 1), which for s > 1 rises instead."""
    attention = {a: MultiHeadAttention(2, 1, weighting(a, 1, 0.0)) for a in ("softmax", "log_length")}
    for n in (5, 10, 40):
        q = torch.tensor([[[[2.0, 0.0]]]]) * math.sqrt(2)  # scores = q . k / sqrt(d_k) = 2 on key 0
        k = torch.zeros(1, 1, n, 2)
        k[..., 0, 0] = 1.0
        weights = {}
        for name, attn in attention.items():
            with attention_weights(attn) as found:
                attn.attend(q, k, torch.zeros(1, 1, n, 2))
            weights[name] = found[""][0][0, 0, 0, 0].item()
        assert weights["softmax"] == pytest.approx(math.exp(2) / (math.exp(2) + n - 1))
        assert weights["log_length"] == pytest.approx(n**2 / (n**2 + n - 1))


@pytest.mark.parametrize("positions", ["sinusoidal", "bos"])
def test_log_length_attention_decodes_and_pads_as_softmax_does(positions):
    model = random_model(positions, dropout=0.0, attention="log_length")
    assert count_parameters(model) == count_parameters(random_model(positions))  # no weights added
    src, lengths = padded_sources(48, 9)
    mask = padding_mask(lengths, 9)
    for out_len in (9, 14):
        assert torch.equal(greedy_cached(model, src, out_len, mask), greedy(model, src, out_len, mask))
    src, tgt_in = assert_junk_after_the_end_changes_nothing(model)
    assert not torch.allclose(model(src, tgt_in), random_model(positions, dropout=0.0)(src, tgt_in))


# ------------------------------------------------------------------------ sigmoid attention

PER_KIND = (
    "sigmoid",
    "softmax/sigmoid/sigmoid",
    "softmax/softmax/sigmoid",
    "none/sigmoid/sigmoid",
    "none/split/split",
)


def test_sigmoid_weights_padded_and_future_keys_exactly_zero():
    attn = MultiHeadAttention(8, 2, weighting("sigmoid", 2, -1.0))
    x = torch.randn(3, 6, 8)
    mask = padding_mask(torch.tensor([6, 4, 1]), 6) | causal_mask(6)  # (3, 1, 6, 6)
    with attention_weights(attn) as found:
        attn(x, x, mask)
    weights = found[""][0]  # (3, 2, 6, 6): the module itself is named ""
    hidden = mask.expand_as(weights)
    assert (weights[hidden] == 0).all() and (weights[~hidden] > 0).all()
    assert not torch.allclose(weights.sum(-1)[:, :, -1], torch.ones(3, 2))  # a sum, not an average
    assert count_parameters(attn) == count_parameters(MultiHeadAttention(8, 2)) + 2  # one bias per head


def test_sigmoid_attention_counts_what_softmax_averages():
    """n equal keys: softmax gives each 1/n, so their sum is 1 at every n; the sigmoid gives each the
    same weight at every n, so the output grows with the count of keys that match."""
    scores = torch.zeros(1, 1, 1, 1)
    out = {}
    for n in (2, 8, 32):
        s = scores.expand(1, 1, 1, n)
        out[n] = [float(weighting(a, 1, 0.0)(s, None).detach().sum()) for a in ("softmax", "sigmoid")]
    assert all(soft == pytest.approx(1.0) for soft, _ in out.values())
    assert [sig for _, sig in out.values()] == pytest.approx([1.0, 4.0, 16.0])


@pytest.mark.parametrize("attention", PER_KIND)
@pytest.mark.parametrize("positions", ["sinusoidal", "bos", "alibi"])
def test_sigmoid_attention_decodes_pads_and_searches_as_softmax_does(positions, attention):
    """Cached greedy equals uncached, padding never changes a real position's logits, and a beam of
    one is greedy, with the sigmoid in any of the three kinds of attention."""
    model = random_model(positions, dropout=0.0, attention=attention, sigmoid_bias=-2.0)
    kinds = attention_kinds(attention)
    enc, dec = model.encoder[0], model.decoder[0]
    assert [type(a.weights) for a in (enc.attn, dec.attn, dec.cross)] == [WEIGHTINGS[k] for k in kinds]
    src, lengths = padded_sources(48, 9)
    mask = padding_mask(lengths, 9)
    for out_len in (9, 14):
        expected = greedy(model, src, out_len, mask)
        assert torch.equal(greedy_cached(model, src, out_len, mask), expected)
        assert torch.equal(beam_search(model, src, beam_size=1, out_len=out_len, src_mask=mask), expected)
    assert_junk_after_the_end_changes_nothing(model)


def test_no_attention_leaves_each_token_on_its_own():
    attn = MultiHeadAttention(8, 2, weighting("none", 2, 0.0))
    x = torch.randn(1, 5, 8)
    alone = attn(x[:, :1], x[:, :1])
    assert torch.allclose(attn(x, x)[:, :1], alone) and torch.allclose(alone[0, 0], attn.wo.bias)


def test_attention_parameter_takes_one_name_or_one_per_kind():
    assert attention_kinds("sigmoid") == ("sigmoid",) * 3
    assert attention_kinds("softmax/sigmoid/sigmoid") == ("softmax", "sigmoid", "sigmoid")
    assert study_config().attention == "softmax"
    fields = as_dict(study_config())

    def attention(value):
        return parse(StudyModelConfig, {**fields, "attention": value}, "model").attention

    assert attention("sigmoid/sigmoid/sigmoid") == "sigmoid"
    for bad in ("sigmoid/softmax", "softmax/sigmoid/relu", "", 3):
        with pytest.raises(ConfigError, match="model.attention"):
            attention(bad)


# ------------------------------------------------------------------------ each scheme


def test_without_positions_the_encoder_cannot_tell_a_sequence_from_itself_twice():
    """Attention averages: with no positions in the encoder, the memory of x and of x twice over are
    the same set of vectors, so every decoder output is the same, although sorted(1 2) is 1 2 and
    the first two of sorted(1 2 1 2) are 1 1. A start token (bos) breaks the tie."""
    x = torch.tensor([[1, 2, 7]])
    twice = torch.cat([x, x], 1)
    tgt_in = torch.tensor([[BOS, 1, 2]])
    for positions in ("none_encoder", "alibi"):
        model = random_model(positions)
        same = torch.allclose(
            model.decode(tgt_in, model.encode(x)), model.decode(tgt_in, model.encode(twice))
        )
        assert same == (positions == "none_encoder")
    model = random_model("bos")
    assert not torch.allclose(
        model.decode(tgt_in, model.encode(x)), model.decode(tgt_in, model.encode(twice))
    )


def test_none_encoder_and_bos_memories_are_order_free():
    x = torch.tensor([[5, 1, 8, 1, 3]])
    perm = torch.tensor([3, 0, 4, 2, 1])
    for positions in ("none_encoder", "bos"):
        model = random_model(positions)
        memory, shuffled = model.encode(x), model.encode(x[:, perm])
        offset = memory.shape[1] - x.shape[1]  # bos: its row comes first
        assert torch.allclose(shuffled[:, offset:], memory[:, offset:][:, perm], atol=1e-5)


def test_bos_memory_opens_with_bos_and_masks_follow():
    model = random_model("bos")
    src, lengths = padded_sources(4, 6)
    mask = padding_mask(lengths, 6)
    memory = model.encode(src, mask)
    assert memory.shape == (4, 7, 16)
    assert (
        model.positions.memory_mask(mask).shape == (4, 1, 1, 7)
        and not model.positions.memory_mask(mask)[..., 0].any()
    )
    cache = model.start_cache(memory, mask, steps=6)
    assert cache.memory_mask.shape[-1] == 7


def test_alibi_bias_and_reflection():
    bias = alibi_bias(4, 5)
    assert bias.shape == (4, 5, 5)
    assert torch.allclose(bias[:, 0, 3], -3 * torch.tensor([1 / 4, 1 / 16, 1 / 64, 1 / 256]))
    assert torch.equal(bias, bias.transpose(1, 2)) and (bias.diagonal(dim1=1, dim2=2) == 0).all()
    model = random_model("alibi")  # a symmetric bias and no position vectors: mirror in, mirror out
    x = torch.tensor([[5, 1, 8, 1, 3, 3]])
    assert torch.allclose(model.encode(x.flip(1)), model.encode(x).flip(1), atol=1e-5)
    assert not torch.allclose(model.encode(x[:, [1, 0, 2, 3, 4, 5]])[:, 1], model.encode(x)[:, 0], atol=1e-3)


def test_randomized_positions_are_sorted_subsets_in_training_and_in_evaluation():
    torch.manual_seed(0)
    rows = random_positions(torch.zeros(()), 500, 10, 24)
    assert rows.shape == (500, 10) and rows.min() >= 0 and rows.max() < 24
    assert (rows.diff(dim=1) > 0).all()  # sorted, no repeats
    assert len(set(rows[:, 0].tolist())) > 5 and rows.max() > 20  # the whole range is used
    model = random_model("randomized", dropout=0.0)
    tokens = torch.randint(0, 10, (3, 7))
    model.train()
    assert not torch.equal(model.embed(tokens), model.embed(tokens))  # fresh positions each call
    model.eval()
    plain = random_model("sinusoidal", dropout=0.0).embed(tokens)
    encoded = model.embed(tokens, encoder=True)  # evaluation draws too (Ruoss et al.), not 0, 1, 2, ...
    assert not torch.equal(encoded, plain) and not torch.equal(encoded, model.embed(tokens, encoder=True))
    decoder = model.decoder_positions(torch.zeros(3, 7, 16))  # a session's, handed to every step
    assert decoder.shape == (3, 7) and (decoder.diff(dim=1) > 0).all()
    steps = model.embed(tokens[:, 2:5], start=2, drawn=decoder)
    assert torch.equal(steps, model.embed(tokens, drawn=decoder)[:, 2:5])
    with pytest.raises(ValueError, match="at most as many tokens as the source"):
        model.embed(torch.randint(0, 10, (3, 8)), drawn=decoder)
    with pytest.raises(ValueError, match="at the positions decoder_draw drew"):
        model.embed(tokens)  # a decoder without its session's positions
    model.train()
    assert model.decoder_positions(torch.zeros(3, 7, 16)) is None  # training draws at every call


def test_learned_positions_are_trained_vectors():
    model = random_model("learned", dropout=0.0)
    tokens = torch.tensor([[3, 3]])
    expected = model.embedding.weight[3] * 4 + model.positions.table.weight[:2]
    assert torch.allclose(model.embed(tokens)[0], expected)
    assert model.embed(tokens[:, :1], start=5)[0, 0].allclose(
        model.embedding.weight[3] * 4 + model.positions.table.weight[5]
    )


def test_test_model_and_diagnosis_on_a_tiny_model(trained):
    model = trained["bos"]
    tests = {n: np.random.default_rng(n).integers(0, 10, (30, n)).astype(np.int8) for n in (3, 6)}
    accuracy = length_accuracy(model, tests, 16, "cpu")
    assert [r["length"] for r in accuracy] == [3, 6]  # one row a length, no length in a key
    assert all(r.keys() == {"length", "seq_acc", "digit_acc"} and 0 <= r["seq_acc"] <= 1 for r in accuracy)
    d = diagnose(model, tests[6])
    assert len(d["acc_by_position"]) == 6 and np.array(d["attention_by_rank"]).shape == (6, 6)
    assert 0 <= d["missing_digit"] <= 1 and d["rank_speed"] == pytest.approx(d["rank_speed"])
    assert sum(d["first_error"].values()) == pytest.approx(1 - d["seq_acc"])
    merged = mean_over_seeds({0: d, 1: d})
    assert merged["seq_acc"] == d["seq_acc"] and merged["seq_acc_std"] == 0.0
    assert not any("_seed" in key for key in merged)  # each seed's value is a row, not a key
    rows = seed_rows("bos", 6, {0: d, 1: d})
    assert [(r["model"], r["length"], r["seed"]) for r in rows] == [("bos", 6, 0), ("bos", 6, 1)]
    assert rows[1]["seq_acc"] == d["seq_acc"] and "acc_by_position" not in rows[1]


def test_split_attention_picks_with_half_the_heads_and_counts_with_the_other_half():
    scores = torch.randn(2, 4, 3, 5)
    mask = additive_mask(causal_mask(5)[:3, :5])
    weights = WEIGHTINGS["split"](4, -1.0)(scores, mask)
    assert torch.allclose(weights[:, :2].sum(-1), torch.ones(2, 2, 3))  # softmax heads average
    sums = WEIGHTINGS["sigmoid"](4, -1.0)(scores, mask)[:, 2:]
    assert torch.equal(weights[:, 2:], sums)  # sigmoid heads sum


def test_randomized_positions_drawn_at_test_time_decode_alike_cached_uncached_and_in_a_beam():
    """With real draws (no patch): the same seed gives the same positions, so cached and uncached
    greedy and a beam of one agree; a beam of four runs (each beam keeps its row's positions)."""
    model = random_model("randomized", dropout=0.0)
    src = torch.randint(0, 10, (32, 9), generator=torch.Generator().manual_seed(4))
    outputs = []
    for decode in (greedy, greedy_cached, lambda m, s: beam_search(m, s, beam_size=1)):
        seed_test_draws(9)
        outputs.append(decode(model, src))
    assert torch.equal(outputs[0], outputs[1]) and torch.equal(outputs[0], outputs[2])
    seed_test_draws(9)
    assert beam_search(model, src, beam_size=4).shape == (32, 9)
    seed_test_draws(10)
    assert not torch.equal(greedy(model, src), outputs[0])  # other draws, other outputs


def test_offset_positions_are_consecutive_from_a_random_start_in_training_and_from_0_in_evaluation():
    model = random_model("offset", dropout=0.0)
    pe = model.positions.pe  # (max_len, d_model)
    tokens = torch.randint(0, 10, (400, 7))
    model.train()
    torch.manual_seed(0)
    vectors = model.positions.vectors(tokens, 0, encoder=True)  # (B, T, d_model)
    starts = [int((pe == row[0]).all(-1).nonzero()) for row in vectors]
    assert min(starts) == 0 and max(starts) == TINY["max_len"] - 7  # every start in [0, max_len - T]
    for row, k in zip(vectors, starts, strict=True):
        assert torch.equal(row, pe[k : k + 7])  # consecutive: only the start is drawn
    model.eval()
    assert torch.equal(model.positions.vectors(tokens, 2, encoder=False), pe[2:9])
    bos = random_model("bos_offset", dropout=0.0).train()
    assert bos.positions.vectors(tokens, 0, encoder=True) is None  # bos's encoder: BOS, no vectors
    assert bos.positions.source(tokens)[:, 0].eq(BOS).all()
    assert not torch.equal(bos.positions.vectors(tokens, 0, False), bos.positions.vectors(tokens, 0, False))


def test_sigmoid_log_gates_sharpen_with_the_keys_a_query_sees():
    """sigmoid(log n * score + b): the same score opens a gate further, or shuts it tighter, among
    more keys; with a causal mask n counts each query's own keys."""
    attn = WEIGHTINGS["sigmoid_log"](1, -1.0)
    for n in (2, 8, 32):
        for score in (1.0, -1.0):
            gate = attn(torch.full((1, 1, 1, n), score), None)
            expected = 1 / (1 + math.exp(1.0 - math.log(n) * score))
            assert gate.detach().flatten().tolist() == pytest.approx([expected] * n, rel=1e-6)
    mask = additive_mask(causal_mask(4))
    gates = attn(torch.ones(1, 1, 4, 4), mask).detach()[0, 0]
    expected = torch.sigmoid(torch.log(torch.arange(1.0, 5.0)) - 1.0)  # row i sees i + 1 keys
    assert torch.allclose(gates.diagonal(), expected) and (gates.triu(1) == 0).all()


# ------------------------------------------------------------------------ test-time readings


@pytest.mark.parametrize("attention", ["sigmoid", "split"])
def test_rounded_gates_round_every_gate_inside_the_block_and_no_other_weight(attention):
    torch.manual_seed(0)
    model = StudyTransformer(study_config(attention=attention, sigmoid_bias=0.0, dropout=0.0)).eval()
    src = torch.randint(1, 11, (4, 6))
    with torch.no_grad(), attention_weights(model) as soft:
        model(src, src)
    with torch.no_grad(), rounded_gates(model) as gated, attention_weights(model) as hard:
        model(src, src)
    assert gated == 3 * model.config.layers  # every attention of both stacks
    half = model.config.heads // 2 if attention == "split" else 0  # split's softmax heads come first
    for name, (w_hard,) in hard.items():
        assert set(w_hard[:, half:].unique().tolist()) == {0.0, 1.0}, name
    (first,), (first_hard,) = soft["encoder.0.attn"], hard["encoder.0.attn"]  # the same input in both runs
    assert torch.equal(first_hard[:, half:], (first[:, half:] > 0.5).float())
    assert torch.equal(first_hard[:, :half], first[:, :half])  # the softmax heads are no gates: untouched
    with torch.no_grad(), attention_weights(model) as after:
        model(src, src)
    assert all(torch.equal(after[n][0], soft[n][0]) for n in soft)  # the hooks are gone


def test_a_softmax_model_has_no_gates_to_round():
    with rounded_gates(StudyTransformer(study_config())) as gated:
        assert gated == 0


def test_randomized_weights_read_at_plain_positions_draw_nothing():
    torch.manual_seed(0)
    model = StudyTransformer(study_config(positions="randomized", dropout=0.0)).eval()
    src = torch.randint(1, 11, (4, 6))
    plain = at_plain_positions(model)
    assert plain.config.positions == "sinusoidal" and not plain.training
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), plain.parameters(), strict=True))
    with torch.no_grad():
        drawn = [model(src, src) for _ in range(2)]
        fixed = [plain(src, src) for _ in range(2)]
    assert not torch.equal(*drawn) and torch.equal(*fixed)

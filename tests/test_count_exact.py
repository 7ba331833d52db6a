"""The length study's options for a count exact by construction (ReZero residuals, the signed count,
hard-limited gates, a softened hand-set start, weight decay, a floored learning rate) and the
measurement of why a trained count fails (pipeline/study/count_margin.py)."""

import dataclasses

import numpy as np
import pytest
import torch

from pipeline.core.loop import build_optimizer
from pipeline.core.recipe import learning_rate
from pipeline.infra.errors import ConfigError
from pipeline.params.rules import as_dict
from pipeline.study.attention import HardSigmoid
from pipeline.study.count_margin import (
    LayerNormDivisors,
    decisions,
    fixed_count_sources,
    measure,
    measured_lengths,
    summary,
)
from pipeline.study.counting_sort import SUMS, counting_sort_model
from pipeline.study.model import StudyTransformer
from pipeline.study.params import check_signed_count
from pipeline.study.signed_count import SignedCountLayer, signed_count
from pipeline.study.variant import start_from_soft_counting
from pipeline.tokens import BOS
from tests.conftest import study_config, tiny_params

SIGNED = dataclasses.replace(SUMS, attention="none/none/signed", sigmoid_bias=-1.0)


def built(config, seed=0):
    torch.manual_seed(seed)
    return StudyTransformer(config).eval()


def test_rezero_sublayers_start_as_the_identity_and_close_the_stack_with_one_layernorm():
    model = built(dataclasses.replace(SUMS, norm="rezero", attention="none/sigmoid/sigmoid"))
    src = torch.randint(0, 10, (4, 7))
    x = model.embed(model.positions.source(src), encoder=True)
    for layer in model.encoder:  # every learned scale starts at 0: the stack passes its input on
        assert torch.equal(layer(x), x)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert norms == [model.encoder_norm, model.decoder_norm]


def test_the_signed_count_is_zero_when_every_input_token_has_been_written():
    """One query, key, value and gate read the input and the tokens written: at the step that has
    written the whole input (BOS included), the two sums are the same rows and cancel exactly."""
    model = built(SIGNED)
    assert all(isinstance(layer, SignedCountLayer) for layer in model.decoder)
    src = torch.randint(0, 10, (5, 9))
    memory = model.encode(src)
    written = model.rows_fed(torch.cat([torch.full((5, 1), BOS), src], 1))  # BOS + every digit
    torch.testing.assert_close(written, memory, rtol=0, atol=1e-6)  # the same rows, the same way
    cross = model.decoder[0].cross
    q = cross.project_q(torch.randn(5, 1, SIGNED.d_model))
    out = signed_count(cross, q, cross.project_kv(memory), cross.project_kv(written))
    torch.testing.assert_close(out[:, 0], cross.wo.bias.expand(5, -1), rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    "norm, attention", [("post", "none/none/signed"), ("rezero", "none/hard_sigmoid/signed")]
)
def test_decoding_token_by_token_equals_the_whole_sequence_at_once(norm, attention):
    model = built(dataclasses.replace(SUMS, norm=norm, attention=attention, sigmoid_bias=-1.0))
    with torch.no_grad():  # trained-like weights: move every learned scale off 0
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    src = torch.randint(0, 10, (3, 8))
    memory = model.encode(src)
    tgt_in = torch.cat([torch.full((3, 1), BOS), src.sort(1).values[:, :-1]], 1)
    whole = model.decode(tgt_in, memory)
    cache = model.start_cache(memory)
    stepped = torch.stack([model.decode_step(tgt_in[:, t], cache) for t in range(tgt_in.shape[1])], 1)
    torch.testing.assert_close(stepped, whole, rtol=1e-5, atol=1e-5)


def test_the_signed_count_needs_an_encoder_that_sees_each_token_alone():
    for config in (
        dataclasses.replace(SIGNED, attention="softmax/none/signed"),
        dataclasses.replace(SIGNED, positions="sinusoidal"),
    ):
        with pytest.raises(ConfigError, match="signed count reads the tokens written through the encoder"):
            check_signed_count("study.variants.v.model", config)
    with pytest.raises(ConfigError, match="'signed' is a cross-attention"):
        check_signed_count(
            "study.variants.v.model", dataclasses.replace(SIGNED, attention="none/signed/signed")
        )


def test_hard_gates_are_exactly_zero_and_one_outside_their_ramp():
    gates = HardSigmoid(1, 0.0)(torch.tensor([[[[-9.0, -2.0, 0.0, 2.0, 9.0]]]]), None)
    assert gates.flatten().tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]


def test_the_soft_hand_set_start_still_sorts_and_its_gates_are_a_few_units_wide():
    model = start_from_soft_counting(SUMS)
    for count in (1, 6, 12):  # its constant of 10 holds a count exactly to about a dozen copies
        source, digit = fixed_count_sources(count, 30, 50, np.random.default_rng(count))
        owed, margin, _ = decisions(model, source, digit)
        assert ((margin > 0) == (owed > 0)).all()  # every decision the right way, at 3 times length 10
    assert model.decoder[0].attn.weights.bias.abs().max() <= 1000  # only the unused heads' shut gates
    assert model.decoder[0].attn.weights.bias[:2].abs().max() == 4.0


def test_weight_decay_is_adamws_update_bit_for_bit():
    params = tiny_params()
    recipe = dataclasses.replace(params.study.train, weight_decay=0.1)
    lesson_sized = study_config(**as_dict(params.model))
    ours, theirs = built(lesson_sized), built(lesson_sized)
    adam = build_optimizer(ours.parameters(), recipe)
    reference = torch.optim.AdamW(
        theirs.parameters(), lr=1e-3, betas=tuple(recipe.betas), eps=recipe.eps, weight_decay=0.1, fused=True
    )
    src, tgt = torch.randint(0, 10, (4, 5)), torch.randint(0, 10, (4, 5))
    for model in (ours, theirs):
        model(src, tgt).square().mean().backward()
    adam.step(1e-3)
    reference.step()
    adam.release()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)


def test_the_learning_rate_floor_holds_after_the_warm_up_only():
    assert learning_rate(50, 2e-3, 100, floor=1e-3) == learning_rate(50, 2e-3, 100)  # warming up
    assert learning_rate(8000, 2e-3, 100) < 1e-3 and learning_rate(8000, 2e-3, 100, floor=1e-3) == 1e-3
    assert learning_rate(200, 2e-3, 100, floor=1e-3) == learning_rate(200, 2e-3, 100)  # above it


def test_fixed_count_inputs_hold_the_count_and_a_next_digit():
    source, digit = fixed_count_sources(7, 20, 200, np.random.default_rng(1))
    assert source.shape == (200, 20)
    assert ((source == digit[:, None]).sum(1) == 7).all()
    assert (source > digit[:, None]).any(1).all()


def test_the_layernorm_divisor_read_is_the_one_layernorm_divides_by():
    """Each sublayer's LayerNorm is read; a stack's closing LayerNorm (pre-norm's) is not."""
    model = StudyTransformer(study_config(d_model=8, heads=2, layers=1, d_ff=16, norm="pre"))
    ln = model.decoder[0].sub[1].ln
    x = torch.randn(3, 4, 8) * 5
    with LayerNormDivisors(model) as found:
        out = ln(x)
    assert set(found) == {"decoder.0.sub.1.ln"}
    centred = x - x.mean(-1, keepdim=True)
    expected = centred / found["decoder.0.sub.1.ln"][..., None] * ln.weight + ln.bias
    torch.testing.assert_close(expected, out, rtol=1e-5, atol=1e-5)
    with LayerNormDivisors(model) as found:
        model(torch.randint(0, 10, (2, 5)), torch.randint(0, 10, (2, 5)))
    assert "decoder_norm" not in found and "encoder_norm" not in found and len(found) == 5


def test_the_hand_set_model_decides_right_at_every_count_and_length():
    margins, divisors = measure(counting_sort_model(), measured_lengths(10, 40))
    assert all(r["wrong_share"] == 0.0 for r in margins)
    assert {r["length"] for r in margins} == {10, 15, 20, 25, 30, 35, 40}
    assert {r["layer"] for r in divisors} >= {"decoder.0.sub.0.ln", "encoder.0.sub.0.ln"}


def test_the_margins_are_read_from_the_longest_trained_length_to_the_longest_tested():
    assert measured_lengths(10, 40) == [10, 15, 20, 25, 30, 35, 40]
    assert measured_lengths(5, 8) == [5, 8]  # the longest tested closes the list
    assert measured_lengths(10, 10) == [10]
    assert measured_lengths(10, 3) == [3]  # tested no further than trained: the longest tested alone


def test_a_count_read_at_one_length_has_no_drift_and_is_left_out_of_the_summary():
    rows = [
        {"variant": "v", "seed": 0, "count": c, "length": n, "owed": k, "margin": 1.0, "wrong_share": 0.0}
        for n in (5, 8)
        for c in (2, 4, 6)
        if c < n
        for k in (0, 1)
    ]
    shown = summary(rows, [])["v"]["margins"]
    assert set(shown) == {"count_2_owed_0", "count_2_owed_1", "count_4_owed_0", "count_4_owed_1"}


def test_a_model_read_at_one_length_only_is_left_out_of_the_summary():
    rows = [
        {"variant": "v", "seed": 0, "count": 2, "length": 5, "owed": k, "margin": 1.0, "wrong_share": 0.0}
        for k in (0, 1)
    ]
    assert (
        summary(
            rows, [{"variant": "v", "seed": 0, "length": 5, "layer": "decoder.0.sub.0.ln", "divisor": 1.0}]
        )
        == {}
    )

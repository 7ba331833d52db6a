"""Lesson 6's probes: the NumPy cells to the digits the lesson prints, exact parameter counts, the
2^N expansion, finite differences against autograd, and the depth probes on tiny models."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from pipeline.core.batching import make_batch
from pipeline.core.data import arrays_of_test_sets, make_datasets
from pipeline.infra import files
from pipeline.infra.errors import DataError
from pipeline.infra.outputs import one, read_table
from pipeline.model.checkpoint import save_checkpoint
from pipeline.model.transformer import Transformer
from pipeline.params.rules import as_dict
from pipeline.probes import depth as depth_probes
from pipeline.probes import lesson6, probe
from pipeline.probes import lesson6 as accounting
from pipeline.probes.probe import HEADLINE
from pipeline.stages import probe as probe_stage
from tests.conftest import model_config

ROOT = Path(__file__).resolve().parents[1]
TINY_MODEL = model_config(d_model=16, heads=2, layers=2, d_ff=32, dropout=0.0, max_len=16)


@pytest.fixture(scope="module")
def cell():
    return lesson6.residual_cell()


@pytest.fixture(scope="module")
def table(cell):
    return {row["layers"]: row for row in lesson6.residual_table(cell, (1, 2, 4, 6, 8, 12))}


def tiny_batch(rows=4, length=6):
    """Seeded random digits and their sorted targets, as a model batch."""
    rng = np.random.default_rng(0)
    source = rng.integers(0, 10, size=(rows, length))
    return make_batch(source, np.sort(source, axis=1), np.full(rows, length))


# ------------------------------------------------------------------------------- NumPy cells


def test_layernorm_cell_prints_the_lessons_digits():
    ln = lesson6.layernorm_cell()
    assert np.round(ln.in_mean, 3).tolist() == [2.772, 2.894, 0.984, 1.743, 2.656]
    assert np.all(np.round(ln.out_mean, 3) == 0.0) and np.all(np.round(ln.out_std, 3) == 1.0)
    assert np.all(np.round(ln.affine_mean, 3) == -1.0) and np.all(np.round(ln.affine_std, 3) == 4.0)
    assert round(ln.row0_shift_per_row, 12) == 0.0
    assert round(ln.row0_shift_per_column, 3) == 1.889


def test_model_layernorm_is_the_lessons_per_row_layernorm():
    ln = lesson6.layernorm_cell()
    assert lesson6.torch_layernorm_gap(ln.X) < 1e-12
    assert torch.nn.LayerNorm(8).eps == 1e-5  # "1e-5 in almost every implementation"


def test_residual_cell_prints_the_lessons_digits(table):
    assert round(table[1]["without_sum_fd"], 3) == 0.109
    assert f"{table[12]['without_sum_fd']:.3e}" == "5.182e-07"
    for row in table.values():  # "between 1.00 and 1.80", to the two decimals the lesson writes
        assert 1.00 <= round(row["with_sum_fd"], 2) <= 1.80


def test_extra_layers_are_drawn_after_x_and_keep_the_lessons_numbers(cell):
    deeper = lesson6.residual_cell(extra_layers=2)
    assert len(deeper.weights) == 14 and np.array_equal(deeper.X, cell.X)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(deeper.weights, cell.weights, strict=False))


def test_finite_differences_agree_with_autograd_at_the_lessons_step(table):
    for row in table.values():
        assert row["with_sum_rel_diff"] < 1e-8 and row["without_sum_rel_diff"] < 1e-8


def test_finite_differences_lose_digits_away_from_a_good_step(cell):
    rows = {r["h"]: r for r in lesson6.step_sweep(cell, 12, (1e-1, 1e-5, 1e-12))}
    assert rows[1e-1]["without_sum_rel_err"] > 1e-2  # a big step crosses ReLU kinks
    assert rows[1e-12]["with_sum_rel_err"] > 100 * rows[1e-5]["with_sum_rel_err"]  # rounding
    assert rows[1e-5]["without_sum_rel_err_float32"] > 1e-3  # float32 cannot resolve the step


# ---------------------------------------------------------------------------- paths and counts


def test_two_blocks_expand_into_four_terms():
    A1, A2 = lesson6.random_blocks(np.random.default_rng(1), 2)
    total, terms, through_none = lesson6.path_expansion([A1, A2])
    identity = np.eye(len(A1))
    assert terms == 4 and through_none == 1
    assert np.allclose(total, identity + A1 + A2 + A2 @ A1)
    assert np.allclose(total, (identity + A2) @ (identity + A1))


def test_n_blocks_expand_into_two_to_the_n_terms():
    for row in lesson6.path_check(np.random.default_rng(0), (1, 3, 5, 7)):
        assert row["terms"] == 2 ** row["blocks"] and row["terms_through_no_sublayer"] == 1
        assert row["max_abs_error"] < 1e-12


def test_parameter_counts_at_the_papers_size():
    acct = accounting.parameter_accounting()
    assert acct["ffn_weights"] == 2 * 512 * 2048 == 2_097_152
    assert acct["attention_weights"] == 4 * 512**2 == 1_048_576
    assert acct["encoder_block_without_attention_biases"] == 3_150_336
    assert acct["encoder_block"] - 3_150_336 == acct["attention_biases"] == 2_048
    assert round(6 * acct["encoder_block_without_attention_biases"] / 1e6, 1) == 18.9
    assert accounting.parameter_accounting(32, 128, 4)["encoder_block"] == 12_704  # lesson 10's layer


def test_base_model_count():
    base = accounting.model_params(vocab=37000)
    assert base["embedding"] == 37000 * 512
    assert base["total"] == 37000 * 512 + 6 * 3_152_384 + 6 * accounting.decoder_block_params() == 63_082_496


# ------------------------------------------------------------------------------ depth probes


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_probe_forward_with_the_sum_is_the_models_forward(norm):
    model = depth_probes.seeded_model(dataclasses.replace(TINY_MODEL, norm=norm), seed=0)
    batch = tiny_batch()
    with torch.no_grad():
        x0, y0 = depth_probes.embedded_inputs(model, batch.src, batch.tgt_in)
        memory = depth_probes.encoder_stack(model, x0, with_sum=True)
        hidden = depth_probes.decoder_stack(model, y0, memory, with_sum=True)
        assert torch.allclose(memory, model.encode(batch.src), atol=1e-6)
        logits = hidden @ model.embedding.weight.T  # (B, T, vocab)
        assert torch.allclose(logits, model(batch.src, batch.tgt_in), atol=1e-5)


def test_seeded_model_is_the_training_init_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    model = depth_probes.seeded_model(TINY_MODEL, seed=0)
    assert torch.equal(torch.rand(1), expected_next)
    torch.manual_seed(0)
    reference = Transformer(TINY_MODEL)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), reference.parameters(), strict=True))


def test_removing_the_residual_sum_shrinks_the_jacobian_with_depth():
    batch = tiny_batch()
    shallow, deep = depth_probes.depth_sweep(TINY_MODEL, (1, 12), batch.src, batch.tgt_in, seed=0)
    for norm in ("post", "pre"):  # from 1 to 12 layers: kept with the sum, lost without it
        with_sum = deep[f"encoder_{norm}_with_sum"] / shallow[f"encoder_{norm}_with_sum"]
        without = deep[f"encoder_{norm}_without_sum"] / shallow[f"encoder_{norm}_without_sum"]
        assert without < 0.1 and with_sum > 0.5, (norm, with_sum, without)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_gradient_probe_runs_and_removes_its_hooks(norm):
    model = depth_probes.seeded_model(dataclasses.replace(TINY_MODEL, norm=norm), seed=0)
    rows = depth_probes.sublayer_grad_norms(model, tiny_batch(), label_smoothing=0.1)
    assert [r["position"] for r in rows] == list(range(2 * 2 + 2 * 3))
    assert [r["sublayer"] for r in rows[4:7]] == ["self_attn", "cross_attn", "ffn"]
    assert all(math.isfinite(r["grad_norm"]) and r["grad_norm"] > 0 for r in rows)
    assert not any(m._forward_pre_hooks for m in model.modules())


def test_pre_norm_gradients_are_flat_within_each_stack_at_init():
    model = depth_probes.seeded_model(dataclasses.replace(TINY_MODEL, norm="pre"), seed=0)
    rows = depth_probes.sublayer_grad_norms(model, tiny_batch(), label_smoothing=0.1)
    for stack in ("encoder", "decoder"):
        values = [r["grad_norm"] for r in rows if r["stack"] == stack]
        assert max(values) / min(values) < 1.5


# ------------------------------------------------------------------------------------ stage


def test_missing_length_is_one_clear_error():
    with pytest.raises(DataError, match="no sequences of length 7"):
        probe.probe_batch({5: (np.zeros((2, 5)), np.zeros((2, 5)))}, 7, 4, "data/test.npz")


def test_stage_writes_metrics_and_tables(tmp_path, monkeypatch):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["data"].update({"train_lengths": [5], "train_size": 64, "test_lengths": [5], "test_size": 8})
    params["model"].update({"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32, "max_len": 16})
    params["train"].update({"seeds": [0], "batch_size": 8})
    params["probe"].update({"depths": [1, 2, 12], "sweep_layers": [1, 2]})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    from pipeline.params.lesson_load import load_lesson_params

    p = load_lesson_params()
    _, test, _ = make_datasets(p.data)
    files.write_npz("data/test.npz", **arrays_of_test_sets(test))
    save_checkpoint("models/seed_0.pt", Transformer(p.model), seed=0, steps=1, train=as_dict(p.train))
    monkeypatch.setattr(
        "sys.argv",
        ["probe", "--models", "models", "--test", "data/test.npz", "--metrics", "metrics/probe.json"],
    )
    probe_stage.main()
    headline = json.loads(Path("metrics/probe.json").read_text())
    metrics = json.loads(Path("metrics/probe/summary.json").read_text())
    assert set(headline) == set(HEADLINE) and all(headline[k] == metrics[k] for k in headline)
    assert metrics["layernorm_row0_shift_per_column"] == pytest.approx(1.889, abs=5e-4)
    residual = read_table("metrics/probe/residual_table.csv")  # each depth a row, every float exact
    assert f"{one(residual, 'without_sum_fd', layers=12):.3e}" == "5.182e-07"
    assert list(residual.columns[:3]) == ["layers", "with_sum_fd", "with_sum_autograd"]
    assert metrics["encoder_block_params_lesson6"] == 3_150_336
    assert metrics["base_model_params"] == 63_082_496
    assert "grad_pre_init_bottom_over_top" in metrics and not any(
        k.startswith("residual_with_sum_1") for k in metrics
    )
    grads = read_table("metrics/probe/grad_norms.csv")
    assert set(grads.columns) >= {"stack", "layer", "sublayer", "post_init", "pre_init", "post_trained"}
    tables = {path.name for path in Path("metrics/probe").iterdir()}
    assert {
        "residual_table.csv",
        "grad_norms.csv",
        "jacobian_sweep.csv",
        "paths.csv",
        "layernorm_cell.csv",
    } <= tables


@pytest.mark.parametrize("positions", ["sinusoidal", "learned"])
def test_each_of_the_lessons_positions_gives_the_probes_their_inputs(positions):
    """The depth probes embed source and decoder input as the model does, the same twice."""
    model = depth_probes.seeded_model(dataclasses.replace(TINY_MODEL, positions=positions), seed=0).eval()
    src, tgt_in = torch.randint(1, 11, (3, 6)), torch.randint(0, 11, (3, 6))
    first, again = (depth_probes.embedded_inputs(model, src, tgt_in) for _ in range(2))
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert first[1].shape == (3, 6, TINY_MODEL.d_model)

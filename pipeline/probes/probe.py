"""The probe stage's work: lesson 6's claims ("Apilar sin perder lo de abajo") measured with numbers
it regenerates: metrics, tables and notes from its two NumPy cells, their derivative by autograd, the
2^N paths, the parameter accounting at the paper's size, and gradients and Jacobians through the
depth of real models (the first seed's checkpoint, and fresh models at initialisation)."""

import dataclasses
import math

import numpy as np
import torch

from pipeline.core.batching import make_batch
from pipeline.core.data import read_test_sets
from pipeline.infra.errors import DataError
from pipeline.model.checkpoint import check_fits, checkpoint_path, load_checkpoint
from pipeline.params.sections import ProbeParams
from pipeline.probes import depth as depth_probes
from pipeline.probes import lesson6

HEADLINE = (
    "residual_without_sum_orders_of_magnitude",
    "residual_sum_gap_orders_of_magnitude",
    "grad_post_init_bottom_over_top",
    "grad_pre_init_bottom_over_top",
    "grad_post_trained_bottom_over_top",
)
LESSON_N = 12  # the lesson's residual cell stacks N = 12 FFNs; deeper probe.depths are drawn after X
MAX_PATH_BLOCKS = 14  # the 2^N expansion is summed term by term: 2^14 products at most
FD_STEPS = tuple(10.0**-k for k in range(1, 14))  # finite-difference steps h for the step sweep
GRAD_BATCH, SWEEP_BATCH = 64, 16  # test rows for the gradient probe and the Jacobian sweep
OTHER_NORM = {"post": "pre", "pre": "post"}
PAPER_VOCAB = 37000  # the paper's shared source-target vocabulary, "about 37000 tokens" (section 5.1)

# ------------------------------------------------------------------------------- measurements


def model_free_probes(p: ProbeParams):
    """Lesson 6's cells and counts: its LayerNorm cell, the residual table at `probe.depths`, the
    finite-difference steps, the paths check, the parameter accounting."""
    ln = lesson6.layernorm_cell()
    cell = lesson6.residual_cell(N=LESSON_N, extra_layers=max(0, max(p.depths) - LESSON_N))
    table = lesson6.residual_table(cell, sorted(p.depths))
    steps = lesson6.step_sweep(cell, max(p.depths), FD_STEPS)
    path_blocks = sorted({2, *(n for n in p.depths if n <= MAX_PATH_BLOCKS)})
    paths = lesson6.path_check(np.random.default_rng(p.seed), path_blocks)
    acct, acct_32 = lesson6.parameter_accounting(), lesson6.parameter_accounting(32, 128, 4)
    decoder_block, base = lesson6.decoder_block_params(), lesson6.model_params(vocab=PAPER_VOCAB)
    return ln, table, steps, paths, acct, acct_32, decoder_block, base


def model_probes(p: ProbeParams, seed, length, models_dir, test_path):
    """Real models: the checkpoint of `seed` and fresh models at initialisation, on test rows of the
    trained `length`, their gradients through depth and the Jacobian sweep; (model, gradient runs,
    their table, the sweep)."""
    path = checkpoint_path(models_dir, seed)
    model, record = load_checkpoint(path)
    check_fits(model, [length], path)
    batch = probe_batch(read_test_sets(test_path), length, GRAD_BATCH, test_path)
    smoothing = record["train"]["label_smoothing"]
    trained_norm = model.config.norm
    runs = {}
    for norm in ("post", "pre"):
        init = depth_probes.seeded_model(dataclasses.replace(model.config, norm=norm), seed)
        runs[f"{norm}_init"] = depth_probes.sublayer_grad_norms(init, batch, smoothing)
    runs[f"{trained_norm}_trained"] = depth_probes.sublayer_grad_norms(model, batch, smoothing)
    grads = grad_table(runs)
    sweep = depth_probes.depth_sweep(
        model.config, sorted(p.sweep_layers), batch.src[:SWEEP_BATCH], batch.tgt_in[:SWEEP_BATCH], p.seed
    )
    return model, runs, grads, sweep


def run_probes(p: ProbeParams, seed, length, models_dir, test_path):
    """Every probe: (the single numbers, {table name: rows}), printing the tables as it goes."""
    ln, table, steps, paths, acct, acct_32, decoder_block, base = model_free_probes(p)
    model, runs, grads, sweep = model_probes(p, seed, length, models_dir, test_path)
    metrics = lesson6_metrics(ln, table, steps, paths, acct, decoder_block, base, acct_32)
    metrics.update(grad_metrics(grads, runs))
    metrics.update(sweep_metrics(sweep))
    metrics["layernorm_eps_model"] = next(m.eps for m in model.modules() if isinstance(m, torch.nn.LayerNorm))
    metrics["grad_trained_is_post"] = model.config.norm == "post"
    metrics["grad_other_norm_trained"] = False
    metrics["jacobian_sweep_sequences"] = SWEEP_BATCH  # the pages say how many rows the sweep read

    tables = {
        "layernorm_cell.csv": layernorm_rows(ln),
        "residual_table.csv": table,
        "fd_steps.csv": steps,
        "paths.csv": paths,
        "grad_norms.csv": grads,
        "jacobian_sweep.csv": sweep,
    }
    print_tables(ln, table, steps, paths, acct, base, grads, sweep)
    return finite(metrics), tables


def lesson6_metrics(ln, table, steps, paths, acct, decoder_block, base, paper_acct_32):
    """The model-free claims' single numbers, by readable names."""
    m = {}  # each row, depth and block of the cells: their tables (layernorm_cell, residual_table, paths)
    m["layernorm_row0_shift_per_row"] = ln.row0_shift_per_row
    m["layernorm_row0_shift_per_column"] = ln.row0_shift_per_column
    m["layernorm_torch_vs_numpy_max_abs"] = lesson6.torch_layernorm_gap(ln.X)
    with_sum = [r["with_sum_fd"] for r in table]
    m["residual_with_sum_min"], m["residual_with_sum_max"] = min(with_sum), max(with_sum)
    first, last = table[0]["without_sum_fd"], table[-1]["without_sum_fd"]
    m["residual_without_sum_orders_of_magnitude"] = math.log10(first / last)  # the fall, 1 to N layers
    m["residual_sum_gap_orders_of_magnitude"] = math.log10(table[-1]["with_sum_fd"] / last)  # at N layers
    m["residual_fd_max_rel_diff"] = max(max(r["with_sum_rel_diff"], r["without_sum_rel_diff"]) for r in table)
    at_lesson_h = min(steps, key=lambda r: abs(math.log10(r["h"] / 1e-5)))
    m["residual_fd_float32_rel_err_without_sum"] = at_lesson_h["without_sum_rel_err_float32"]
    m["residual_fd_float32_rel_err_with_sum"] = at_lesson_h["with_sum_rel_err_float32"]
    m["paths_max_abs_error"] = max(r["max_abs_error"] for r in paths)
    m.update(
        {
            "ffn_weights_paper": acct["ffn_weights"],
            "attention_weights_paper": acct["attention_weights"],
            "ffn_to_attention_weights": acct["ffn_weights"] / acct["attention_weights"],
            "attention_biases_paper": acct["attention_biases"],
            "ffn_biases_paper": acct["ffn_bias_b1"] + acct["ffn_bias_b2"],
            "layernorm_vectors_paper": acct["layernorm_vectors"],
            "encoder_block_params_paper": acct["encoder_block"],
            "encoder_block_params_lesson6": acct["encoder_block_without_attention_biases"],
            "encoder_block_params_lesson6_claimed": lesson6.LESSON6_BLOCK_PARAMS,
            "encoder_block_params_difference": acct["difference_to_lesson6"],
            "encoder_block_params_lesson10_size": paper_acct_32["encoder_block"],
            "encoder_params_paper_6": 6 * acct["encoder_block"],
            "encoder_params_lesson6_6": 6 * acct["encoder_block_without_attention_biases"],
            "decoder_block_params_paper": decoder_block,
            "embedding_params_paper": base["embedding"],
            "base_model_params": base["total"],
            "base_model_params_claimed": lesson6.PAPER_BASE_PARAMS,
            "base_model_params_ratio": base["total"] / lesson6.PAPER_BASE_PARAMS,
        }
    )
    return m


def probe_batch(test, length, rows, test_path):
    """The first `rows` test sequences of one length (`test`: {length: (sources, targets)}), as a
    model batch."""
    if length not in test:
        raise DataError(
            f"{test_path} has no sequences of length {length} (data.train_lengths[0]): "
            "add it to data.test_lengths"
        )
    source, target = (a[:rows] for a in test[length])
    return make_batch(source, target, np.full(len(source), length))


def grad_table(runs):
    """One row per sublayer position, one grad-norm column per (norm, state) run."""
    rows = []
    for i, base in enumerate(next(iter(runs.values()))):
        row = {k: base[k] for k in ("position", "stack", "layer", "sublayer")}
        row.update({name: run[i]["grad_norm"] for name, run in runs.items()})
        rows.append(row)
    return rows


def grad_metrics(rows, runs):
    """Per run: bottom over top and the spread within each stack (each sublayer's norm: grad_norms)."""
    m = {}
    for name in runs:
        bottom, top = rows[0][name], rows[-1][name]
        m[f"grad_{name}_bottom_over_top"] = ratio(bottom, top)
        for stack in ("encoder", "decoder"):
            values = [r[name] for r in rows if r["stack"] == stack]
            m[f"grad_{name}_{stack}_max_over_min"] = ratio(max(values), min(values))
    return m


def ratio(a, b):
    """a / b, infinite where b is 0 (a gradient stopped dead: gates shut exactly, ReZero's scale at 0)."""
    return a / b if b else math.inf


def sweep_metrics(sweep):
    """Per variant: the Jacobian norm's factor per layer, from the shallowest stack to the deepest
    (each depth's norm: jacobian_sweep)."""
    m, first, last = {}, sweep[0], sweep[-1]
    for column in first:
        if column == "layers":
            continue
        m[f"jacobian_{column}_per_layer"] = depth_probes.decay_per_layer(
            first[column], last[column], first["layers"], last["layers"]
        )
    return m


# ---------------------------------------------------------------------------------- output


def finite(obj):
    """JSON has no NaN: an undefined ratio (a Jacobian that underflowed to 0) is left out."""
    return {k: v for k, v in obj.items() if not (isinstance(v, float) and not math.isfinite(v))}


def layernorm_rows(ln):
    """One row per position of the LayerNorm cell: statistics in, out, and after gamma, beta."""
    return [
        {
            "row": i,
            "in_mean": float(ln.in_mean[i]),
            "in_std": float(ln.in_std[i]),
            "out_mean": float(ln.out_mean[i]),
            "out_std": float(ln.out_std[i]),
            "affine_mean": float(ln.affine_mean[i]),
            "affine_std": float(ln.affine_std[i]),
        }
        for i in range(len(ln.in_mean))
    ]


def print_tables(ln, table, steps, paths, acct, base, grads, sweep):
    """Readable tables on stdout, in the lesson's order."""
    np.set_printoptions(precision=3, suppress=True)
    print("LayerNorm cell (default_rng(7), X 5 x 8):")
    print(f"  in   means {np.round(ln.in_mean, 3)}  deviations {np.round(ln.in_std, 3)}")
    print(f"  out  means {np.round(ln.out_mean, 3)}  deviations {np.round(ln.out_std, 3)}")
    print(f"  gamma 4, beta -1: means {np.round(ln.affine_mean, 3)}  deviations {np.round(ln.affine_std, 3)}")
    print(
        f"  row 4 += 10 moves row 0 by {round(ln.row0_shift_per_row, 12)} per row, "
        f"{ln.row0_shift_per_column:.3f} per column"
    )
    print("\nresidual cell (default_rng(0)): finite difference h = 1e-5 vs autograd")
    print("layers   with sum   autograd    rel diff    without sum   autograd     rel diff")
    for r in table:
        print(
            f"{r['layers']:6d}  {r['with_sum_fd']:9.4f}  {r['with_sum_autograd']:9.4f}  "
            f"{r['with_sum_rel_diff']:9.1e}   {r['without_sum_fd']:11.3e}  {r['without_sum_autograd']:10.3e}"
            f"  {r['without_sum_rel_diff']:9.1e}"
        )
    print(f"\nfinite-difference step at {LESSON_N} layers: relative error against autograd")
    print("      h   with sum  (float32)   without sum  (float32)")
    for r in steps:
        print(
            f"{r['h']:7.0e}  {r['with_sum_rel_err']:8.1e}  {r['with_sum_rel_err_float32']:9.1e}"
            f"   {r['without_sum_rel_err']:11.1e}  {r['without_sum_rel_err_float32']:9.1e}"
        )
    print("\n2^N paths: N, terms, terms through no sublayer, max |expansion - product|")
    for r in paths:
        errors = f"{r['terms_through_no_sublayer']}  {r['max_abs_error']:.1e}"
        print(f"  {r['blocks']:3d}  {r['terms']:6d}  {errors}")
    print("\nparameters at d_model 512, d_ff 2048, 8 heads:")
    lines = [(k, acct[k]) for k in ("ffn_weights", "attention_weights", "attention_biases")]
    lines += [(k, acct[k]) for k in ("ffn_bias_b1", "ffn_bias_b2", "layernorm_vectors")]
    lines += [
        ("EncoderLayer (ours)", acct["encoder_block"]),
        ("... without attention biases (lesson 6)", acct["encoder_block_without_attention_biases"]),
        ("base model, shared 37,000 vocabulary", base["total"]),
    ]
    for name, value in lines:
        print(f"  {name:40s} {value:>12,}")
    print("  (lesson 6: 3,150,336 per block; paper: 65 M for the base model)")
    print("\ngradient norm of the loss at each sublayer's input (bottom of encoder to top of decoder)")
    names = [k for k in grads[0] if k not in ("position", "stack", "layer", "sublayer")]
    print("  stack    layer sublayer    " + "".join(f"{n:>14s}" for n in names))
    for r in grads:
        print(
            f"  {r['stack']:8s} {r['layer']:5d} {r['sublayer']:11s} "
            + "".join(f"{r[n]:14.3e}" for n in names)
        )
    print("\nJacobian norm ||J v|| at initialisation by layers a side, per path")
    variants = [f"{n}_{s}" for n in ("post", "pre") for s in ("with_sum", "without_sum")]
    print("  layers " + "".join(f"{v:>20s}" for v in variants))
    for path in depth_probes.PATHS:
        print(f"  [{path}]")
        for r in sweep:
            print(f"  {r['layers']:6d} " + "".join(f"{r[f'{path}_{v}']:20.3e}" for v in variants))

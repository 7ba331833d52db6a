"""Stage `probe`: lesson 6's claims ("Apilar sin perder lo de abajo") measured with numbers this stage
regenerates: its two NumPy cells, their derivative by autograd, the 2^N paths, the parameter
accounting at the paper's size, and gradients and Jacobians through the depth of real models.

Reads params.yaml (probe, train.seeds, data.train_lengths), the first seed's checkpoint and the
test set; writes metrics/probe.json and the plot tables under metrics/probe/.
"""

import math
from pathlib import Path

import numpy as np

from pipeline.core.batching import make_batch
from pipeline.core.data import TEST_PATH
from pipeline.infra.errors import DataError
from pipeline.probes import depth as depth_probes
from pipeline.probes import lesson6

METRICS_PATH, TABLES_DIR = "metrics/probe.json", Path("metrics/probe")
LESSON_N = 12  # the lesson's residual cell stacks N = 12 FFNs; deeper probe.depths are drawn after X
MAX_PATH_BLOCKS = 14  # the 2^N expansion is summed term by term: 2^14 products at most
FD_STEPS = tuple(10.0**-k for k in range(1, 14))  # finite-difference steps h for the step sweep
GRAD_BATCH, SWEEP_BATCH = 64, 16  # test rows for the gradient probe and the Jacobian sweep
OTHER_NORM = {"post": "pre", "pre": "post"}
PAPER_VOCAB = 37000  # the paper's shared source-target vocabulary, "about 37000 tokens" (section 5.1)

NOTES = {
    "encoder_block_difference": (
        "Our EncoderLayer at d_model 512, d_ff 2048, 8 heads has {ours:,} parameters, the lesson "
        "{lesson:,}: {diff:,} fewer. Three groups of our layer hold exactly {diff:,} each "
        "({groups}), so the count alone does not decide. The lesson's own text does: its FFN formula "
        "has b1 and b2, its LayerNorm formula gamma and beta, and it says 'biases and normalisation "
        "vectors included'; its attention is the paper's MultiHead (section 3.2.2), four projection "
        "matrices W^Q, W^K, W^V, W^O with no biases (its 4 d_model^2 = {attn:,}). Our EncoderLayer "
        "without the four attention projections' biases has {lesson_style:,} = the lesson's figure. "
        "Lesson 10's layer (nn.Linear with bias, 12,704 at d_model 32: attention 4,224 = 4*32^2 + "
        "4*32) keeps those biases, which is why the two lessons' block counts differ by 4*d_model."
    ),
    "base_model": (
        "Our Transformer at the paper's base size (6+6 layers, d_model 512, d_ff 2048, 8 heads, "
        "one shared embedding of 37,000 tokens, sinusoidal positions) has {total:,} parameters "
        "(embedding {embedding:,}, encoder {encoder:,}, decoder {decoder:,}), {ratio:.3f} x the "
        "paper's 65 M. Dropping every attention bias would remove only {attn_biases:,}; matching "
        "65 M would need a vocabulary of about {vocab_for_65m:,} tokens, so the paper's 65 M is "
        "most likely a rounded figure for a slightly different accounting or vocabulary: a note, "
        "not a failure."
    ),
    "residual_with_sum_range": (
        "With the sum the finite differences run from {low:.4f} to {high:.4f}: the lesson's 'between "
        "1.00 and 1.80' holds to the two decimals it writes ({high:.4f} rounds to 1.80)."
    ),
    "orders_of_magnitude": (
        "The lesson calls the fall from {first:.3f} (1 layer) to {last:.3e} ({n} layers) 'seven orders "
        "of magnitude'. The fall itself is {fall:.2f} orders (a factor {factor:.2e}); the value at {n} "
        "layers is {below_one:.2f} orders below 1 and {gap:.2f} below the with-sum value there. 'Seven' "
        "reads as the exponent of {last:.3e}, not as the ratio: a prose approximation, noted."
    ),
    "finite_differences": (
        "At the lesson's h = 1e-5 (float64) the finite differences agree with the exact Jacobian-"
        "vector product to a relative {max_rel:.1e} at worst, far below the 4 digits printed. Larger "
        "steps cross ReLU kinks and curvature (h = 0.1: {big_h_err:.1%} off without the sum); "
        "smaller ones lose digits to rounding; in float32 (the model's precision) the same probe "
        "at h = 1e-5 is {f32_err:.1%} off without the sum at {n} layers."
    ),
    "grad_probe": (
        "Gradient of the label-smoothed loss (the checkpoint's label smoothing) on {rows} test "
        "sequences of length {length}, eval mode, with respect to the input x of every sublayer "
        "wrapper (the residual stream entering it: LayerNorm(x + Sublayer(x)) for post-norm, "
        "x + Sublayer(LayerNorm(x)) for pre-norm); Frobenius norm over the batch. 'init' models are "
        "built with the first training seed exactly as the training stage builds them."
    ),
    "grad_probe_trained": (
        "Trained: models/seed_{seed}.pt ({norm}-norm, {steps} steps). {other}-norm is probed at "
        "initialisation only: the probe trains nothing, since training the other placement with "
        "the checkpoint's recipe would repeat the train stage's {steps} steps inside it. "
        "`dvc exp run -S model.norm={other}` trains one, and the probe then reads it."
    ),
    "jacobian_sweep": (
        "||J v|| for a fixed seeded unit direction v (float64, forward-mode torch.func.jvp) at "
        "initialisation, {rows} test sequences, the checkpoint's d_model / heads / d_ff with 1..L "
        "layers a side. encoder: source embedding (sqrt(d) E + PE) to memory; decoder: decoder "
        "embedding to its last hidden state, memory held fixed; source_to_output: source embedding "
        "to the decoder's last hidden state through the memory. 'without_sum' is this probe's own "
        "forward over the same layers with every x + Sublayer replaced by Sublayer (LayerNorms "
        "kept in place). Without the sum the decoder's own input reaches its output only through "
        "the cross-attention's queries, which is why the decoder path collapses there."
    ),
}

# ------------------------------------------------------------------------------- measurements


def lesson6_metrics(ln, table, steps, paths, acct, decoder_block, base, paper_acct_32):
    """The model-free claims as flat, readable keys."""
    m = {}
    for name, values in [
        ("in_mean", ln.in_mean),
        ("in_std", ln.in_std),
        ("out_mean", ln.out_mean),
        ("out_std", ln.out_std),
        ("affine_mean", ln.affine_mean),
        ("affine_std", ln.affine_std),
    ]:
        m.update({f"layernorm_{name}_row{i}": float(v) for i, v in enumerate(values)})
    m["layernorm_row0_shift_per_row"] = ln.row0_shift_per_row
    m["layernorm_row0_shift_per_column"] = ln.row0_shift_per_column
    m["layernorm_torch_vs_numpy_max_abs"] = lesson6.torch_layernorm_gap(ln.X)
    for row in table:
        n = row["layers"]
        for kind in ("with_sum", "without_sum"):
            m[f"residual_{kind}_{n}"] = row[f"{kind}_fd"]
            m[f"residual_{kind}_{n}_autograd"] = row[f"{kind}_autograd"]
            m[f"residual_{kind}_{n}_rel_diff"] = row[f"{kind}_rel_diff"]
    with_sum = [r["with_sum_fd"] for r in table]
    m["residual_with_sum_min"], m["residual_with_sum_max"] = min(with_sum), max(with_sum)
    first, last = table[0]["without_sum_fd"], table[-1]["without_sum_fd"]
    m["residual_without_sum_orders_of_magnitude"] = math.log10(first / last)  # the fall, 1 to N layers
    m["residual_sum_gap_orders_of_magnitude"] = math.log10(table[-1]["with_sum_fd"] / last)  # at N layers
    m["residual_fd_max_rel_diff"] = max(max(r["with_sum_rel_diff"], r["without_sum_rel_diff"]) for r in table)
    at_lesson_h = min(steps, key=lambda r: abs(math.log10(r["h"] / 1e-5)))
    m["residual_fd_float32_rel_err_without_sum"] = at_lesson_h["without_sum_rel_err_float32"]
    m["residual_fd_float32_rel_err_with_sum"] = at_lesson_h["with_sum_rel_err_float32"]
    for row in paths:
        m[f"paths_terms_{row['blocks']}"] = row["terms"]
        m[f"paths_through_no_sublayer_{row['blocks']}"] = row["terms_through_no_sublayer"]
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


def probe_batch(test, length, rows):
    """The first `rows` test sequences of one length, as a model batch."""
    key = f"source_{length}"
    if key not in test:
        raise DataError(
            f"{TEST_PATH} has no sequences of length {length} (data.train_lengths[0]): "
            "add it to data.test_lengths"
        )
    source, target = test[key][:rows], test[f"target_{length}"][:rows]
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
    """Per run: every sublayer's gradient norm, bottom over top, and the spread within each stack."""
    m = {}
    for name in runs:
        for r in rows:
            m[f"grad_{name}_{r['stack']}{r['layer']}_{r['sublayer']}"] = r[name]
        bottom, top = rows[0][name], rows[-1][name]
        m[f"grad_{name}_bottom_over_top"] = bottom / top
        for stack in ("encoder", "decoder"):
            values = [r[name] for r in rows if r["stack"] == stack]
            m[f"grad_{name}_{stack}_max_over_min"] = max(values) / min(values)
    return m


def sweep_metrics(sweep):
    """Per variant: the Jacobian norm at the shallowest and deepest stack, and the factor per layer."""
    m, first, last = {}, sweep[0], sweep[-1]
    for column in first:
        if column == "layers":
            continue
        m[f"jacobian_{column}_{first['layers']}"] = first[column]
        m[f"jacobian_{column}_{last['layers']}"] = last[column]
        m[f"jacobian_{column}_per_layer"] = depth_probes.decay_per_layer(
            first[column], last[column], first["layers"], last["layers"]
        )
    return m


# ---------------------------------------------------------------------------------- output


def to_csv(rows):
    """Rows of dicts with the same keys as CSV text; floats with 12 significant digits."""
    header = list(rows[0])
    lines = [",".join(header)]
    for row in rows:
        lines.append(",".join(f"{row[k]:.12g}" if isinstance(row[k], float) else str(row[k]) for k in header))
    return "\n".join(lines) + "\n"


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


def notes_for(metrics, acct, base, table, steps, record, seed, trained_norm, length):
    """The explanations that go with the numbers (metrics/probe/notes.json)."""
    big_h = max(steps, key=lambda r: r["h"])
    per_token = base["embedding"] // PAPER_VOCAB  # one shared embedding row per vocabulary token
    vocab_for_65m = PAPER_VOCAB + round((lesson6.PAPER_BASE_PARAMS - base["total"]) / per_token)
    other = OTHER_NORM[trained_norm]
    return {
        "encoder_block_difference": NOTES["encoder_block_difference"].format(
            ours=acct["encoder_block"],
            lesson=lesson6.LESSON6_BLOCK_PARAMS,
            diff=acct["difference_to_lesson6"],
            groups=", ".join(acct["groups_matching_difference"]),
            attn=acct["attention_weights"],
            lesson_style=acct["encoder_block_without_attention_biases"],
        ),
        "base_model": NOTES["base_model"].format(
            **base,
            ratio=metrics["base_model_params_ratio"],
            attn_biases=6 * 3 * acct["attention_biases"],
            vocab_for_65m=vocab_for_65m,
        ),
        "residual_with_sum_range": NOTES["residual_with_sum_range"].format(
            low=metrics["residual_with_sum_min"], high=metrics["residual_with_sum_max"]
        ),
        "orders_of_magnitude": NOTES["orders_of_magnitude"].format(
            first=table[0]["without_sum_fd"],
            last=table[-1]["without_sum_fd"],
            n=table[-1]["layers"],
            fall=metrics["residual_without_sum_orders_of_magnitude"],
            factor=table[0]["without_sum_fd"] / table[-1]["without_sum_fd"],
            below_one=-math.log10(table[-1]["without_sum_fd"]),
            gap=metrics["residual_sum_gap_orders_of_magnitude"],
        ),
        "finite_differences": NOTES["finite_differences"].format(
            max_rel=metrics["residual_fd_max_rel_diff"],
            big_h_err=big_h["without_sum_rel_err"],
            f32_err=metrics["residual_fd_float32_rel_err_without_sum"],
            n=max(r["layers"] for r in table),
        ),
        "grad_probe": NOTES["grad_probe"].format(rows=GRAD_BATCH, length=length),
        "grad_probe_trained": NOTES["grad_probe_trained"].format(
            seed=seed,
            norm=trained_norm,
            other=other,
            steps=record["steps"],
        ),
        "jacobian_sweep": NOTES["jacobian_sweep"].format(rows=SWEEP_BATCH),
    }


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

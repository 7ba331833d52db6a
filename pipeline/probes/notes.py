"""The probe's notes in words: what each measurement is and how to read it, filled in from the
numbers the probe stage measured (metrics/probe/notes.json; the report prints them)."""

import math

from pipeline.probes import lesson6
from pipeline.probes.summary import GRAD_BATCH, OTHER_NORM, PAPER_VOCAB, SWEEP_BATCH

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

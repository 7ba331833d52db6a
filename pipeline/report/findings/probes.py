"""Findings on lesson 6 and the depth probes: the residual cell, the LayerNorm cell, the gradient
through the real model, the Jacobian as layers are stacked (metrics/probe/summary.json)."""

from pipeline.core import lesson
from pipeline.report.findings.finding import Figure, Finding, plural


def residual(p):
    depth = lesson.RESIDUAL_CELL_LAYERS
    caption = "Lesson 6's residual cell: with the sum the derivative stays near 1; without it, it vanishes."
    figures = (Figure("residual.png", caption),)
    title = "Lesson 6: the residual sum keeps the derivative near 1"
    if f"residual_without_sum_{depth}" not in p:
        return Finding(
            title, "This run's probe did not reach the lesson's 12 layers; the figure shows it.", figures
        )
    one, deepest = p["residual_without_sum_1"], p[f"residual_without_sum_{depth}"]
    as_printed = (
        f"{one:.2e}" == lesson.WITHOUT_SUM_ONE_LAYER and f"{deepest:.3e}" == lesson.WITHOUT_SUM_TWELVE_LAYERS
    )
    text = (
        f"Rerunning lesson 6's NumPy cell ({depth} stacked FFNs): with the residual sum the derivative "
        "of the output with respect to one input coordinate stays between "
        f"{p['residual_with_sum_min']:.2f} and {p['residual_with_sum_max']:.2f}; without it, it falls "
        f"from {one:.3g} at one layer to {deepest:.4g} at {depth}"
        + (", the lesson's numbers to every digit it prints. " if as_printed else ". ")
        + f"Finite differences agree with autograd to a relative {p['residual_fd_max_rel_diff']:.1e}."
    )
    return Finding(title, text, figures)


def layernorm(p):
    per_row, per_column = p["layernorm_row0_shift_per_row"], p["layernorm_row0_shift_per_column"]
    text = (
        "Lesson 6's LayerNorm cell, rerun: every row leaves with mean 0 and deviation 1, whatever it "
        f"came in with. Adding 10 to row 4 moves row 0 by {per_row:.1f} when each row is normalised on "
        f"its own (LayerNorm) and by {per_column:.3f} when each column is (as a batch norm would)"
        + (": a position's output depends on that position only." if per_row == 0 else ".")
    )
    caption = "Lesson 6's LayerNorm cell: per-row statistics, and per row against per column."
    return Finding("Lesson 6: LayerNorm works row by row", text, (Figure("layernorm.png", caption),))


def gradient_depth(layers, p):
    """Where the loss gradient arrives in the real model: the bottom against the top, and how even
    it is across the encoder's sublayers."""
    trained = p.get("grad_post_trained_encoder_max_over_min")
    text = (
        f"In the real model ({plural(layers, 'layer')} a side), the loss gradient reaching the encoder's "
        f"first sublayer is {p['grad_post_init_bottom_over_top']:.3f} times the one at the decoder's "
        f"last, post-norm at initialisation (pre-norm {p['grad_pre_init_bottom_over_top']:.3f}). Across "
        "the encoder's sublayers, the largest gradient over the smallest is "
        f"{p['grad_pre_init_encoder_max_over_min']:.2f} pre-norm and "
        f"{p['grad_post_init_encoder_max_over_min']:.1f} post-norm at initialisation"
        + (f", {trained:.1f} post-norm after training." if trained is not None else ".")
    )
    caption = "The loss gradient at every sublayer's input of the real model, post- and pre-norm."
    return Finding("Gradients through the real model", text, (Figure("gradient_depth.png", caption),))


def jacobian_sweep(p):
    factor = {
        (norm, sums): p.get(f"jacobian_encoder_{norm}_{sums}_per_layer")
        for norm in ("post", "pre")
        for sums in ("with_sum", "without_sum")
    }
    if None in factor.values():
        text = "This run's sweep has too few depths to fit a factor per layer; the figure shows it."
    else:
        # The lesson's argument holds here when, for both norms, the sum keeps the factor nearer 1.
        nearer_one = all(
            abs(factor[n, "with_sum"] - 1) < abs(factor[n, "without_sum"] - 1) for n in ("post", "pre")
        )
        text = (
            "At initialisation, each layer stacked on the encoder multiplies the norm of its input-output "
            f"Jacobian (along a fixed direction) by {factor['post', 'with_sum']:.3f} with the residual sum "
            f"and by {factor['post', 'without_sum']:.3f} without it (post-norm; pre-norm "
            f"{factor['pre', 'with_sum']:.3f} and {factor['pre', 'without_sum']:.3f})"
            + (
                ": the sum is what lets depth leave the signal's size alone, as lesson 6 argues."
                if nearer_one
                else "."
            )
        )
    caption = "Input-output Jacobian norms at initialisation from 1 to 12 layers a side."
    return Finding("Depth at initialisation", text, (Figure("jacobian_sweep.png", caption),))

"""Claims on lesson 6 (and the paper's base size): the residual paths, the weight counts, the
LayerNorm cell and the residual cell (metrics/probe/summary.json)."""

from pipeline.core import lesson
from pipeline.report.claims.rules import L6, L10, about, exact, note, printed, printed_sci

BASE_MODEL_CLAIM = "the paper's base model has 65 million parameters (shared 37,000 vocabulary)"
ORDERS_CLAIM = 'without the sum: "seven orders of magnitude" from 1 to 12 layers'
ORDERS_REASON = (
    "an error in the lesson: its own two numbers (0.109 and 5.182e-07, both reproduced to every "
    "digit) span 5.32 orders of magnitude (6.29 from an input scale of 1), not seven"
)
DEPTHS_REASON = "probe.depths lacks 1 or 12 in this run: those claims are not checked"


def probe_claims(p):
    return [*count_claims(p), *layernorm_claims(p), *residual_claims(p)]


def count_claims(p):
    """Paths through a stack and where the weights are: counts, exact (or within 5 % in prose)."""
    block = p["encoder_block_params_lesson6"]
    block_shown = f"{block:,} (ours with attention biases: {p['encoder_block_params_paper']:,}; see note)"
    # fmt: off
    return [
        exact("l6-paths-2", L6, "(I + A2)(I + A1) expands into four terms",
              lesson.PATHS_TWO_BLOCKS, p["paths_terms_2"]),
        exact("l6-ln-eps", L6, 'LayerNorm eps = 1e-5 "in almost every implementation" (ours)',
              lesson.LAYERNORM_EPS, p["layernorm_eps_model"]),
        exact("l6-ffn-weights", L6, "FFN weights 2 d_model d_ff (512, 2,048)",
              lesson.FFN_WEIGHTS, p["ffn_weights_paper"]),
        exact("l6-attn-weights", L6, "attention weights 4 d_model^2",
              lesson.ATTENTION_WEIGHTS, p["attention_weights_paper"]),
        exact("l6-quiz-ffn", L6, "quiz: the FFN's two matrices hold",
              lesson.FFN_WEIGHTS, p["ffn_weights_paper"]),
        exact("l6-block", L6, "parameters per encoder block, biases and norms included",
              lesson.ENCODER_BLOCK_PARAMS, block, block_shown),
        about("l6-six-blocks", L6, "six encoder blocks: about 18.9 million",
              lesson.SIX_ENCODER_BLOCKS_PARAMS, p["encoder_params_lesson6_6"], " M", 1e6),
        about("paper-base", L10, BASE_MODEL_CLAIM,
              lesson.PAPER_BASE_MODEL_PARAMS, p["base_model_params"], " M", 1e6),
    ]
    # fmt: on


def layernorm_claims(p):
    """Lesson 6's LayerNorm cell, rerun: its printed numbers at the precision it prints them."""
    means = rows_of(p, "in_mean")
    entering = f"{min(means):.2f} to {max(means):.2f}"  # the lesson states the range, at 2 decimals
    claim = "LayerNorm cell: the five rows enter with means between 0.98 and 2.89"
    rows = [exact("l6-ln-in-means", L6, claim, lesson.LAYERNORM_INPUT_MEAN_RANGE, entering)]
    out = f"{span(rows_of(p, 'out_mean'))}, {span(rows_of(p, 'out_std'))}"
    affine = f"{span(rows_of(p, 'affine_mean'))}, {span(rows_of(p, 'affine_std'))}"
    # fmt: off
    return rows + [
        exact("l6-ln-out", L6, "LayerNorm cell: every row leaves with mean 0 and deviation 1",
              lesson.LAYERNORM_OUTPUT_MEAN_STD, out),
        exact("l6-ln-affine", L6, "LayerNorm cell: gamma 4, beta -1 give mean -1 and deviation 4",
              lesson.LAYERNORM_AFFINE_MEAN_STD, affine),
        printed("l6-ln-row", L6, "touching row 4 moves row 0 (normalising per row)",
                lesson.ROW0_SHIFT_PER_ROW, p["layernorm_row0_shift_per_row"], 1),
        printed("l6-ln-col", L6, "touching row 4 moves row 0 (normalising per column)",
                lesson.ROW0_SHIFT_PER_COLUMN, p["layernorm_row0_shift_per_column"], 3),
    ]
    # fmt: on


def residual_claims(p):
    """Lesson 6's residual cell at 1 and 12 layers, when the probe measured both depths."""
    depths = (1, lesson.RESIDUAL_CELL_LAYERS)
    if not all(f"{k}_{n}" in p for k in ("residual_without_sum", "paths_terms") for n in depths):
        return [note("l6-depths", L6, "lesson 6's residual cell and paths at 1 and 12 layers",
                     "1 and 12 layers", "not measured", DEPTHS_REASON)]  # fmt: skip
    n = lesson.RESIDUAL_CELL_LAYERS
    paths = f"{2**n} terms, {lesson.PATHS_THROUGH_NO_SUBLAYER} identity"
    measured_paths = f"{p[f'paths_terms_{n}']} terms, {p[f'paths_through_no_sublayer_{n}']} identity"
    orders = f"{p['residual_without_sum_orders_of_magnitude']:.2f} orders"
    with_sum = f"{p['residual_with_sum_min']:.2f} to {p['residual_with_sum_max']:.2f}"
    # fmt: off
    return [
        exact("l6-paths-n", L6, "N blocks give 2^N terms, exactly one through no sublayer (N = 12)",
              paths, measured_paths),
        printed_sci("l6-res-without-1", L6, "residual cell: one FFN without the sum",
                    lesson.WITHOUT_SUM_ONE_LAYER, p["residual_without_sum_1"], 2),
        printed_sci("l6-res-without-12", L6, "residual cell: twelve FFNs without the sum",
                    lesson.WITHOUT_SUM_TWELVE_LAYERS, p[f"residual_without_sum_{n}"], 3),
        note("l6-res-orders", L6, ORDERS_CLAIM,
             lesson.WITHOUT_SUM_ORDERS_OF_MAGNITUDE, orders, ORDERS_REASON),
        exact("l6-res-with", L6, 'residual cell: with the sum "between 1.00 and 1.80" all the way',
              lesson.WITH_SUM_RANGE, with_sum),
    ]
    # fmt: on


def rows_of(p, key):
    """One LayerNorm-cell statistic for each of the cell's five rows."""
    return [p[f"layernorm_{key}_row{i}"] for i in range(5)]


def span(values):
    """Values that print alike (at 3 decimals) shown once; otherwise their range."""
    low, high = (f"{v:.3f}".replace("-0.000", "0.000") for v in (min(values), max(values)))
    text = low if low == high else f"{low}..{high}"
    return text.rstrip("0").rstrip(".") if "." in text and ".." not in text else text

"""What the claims read: every stage's measured numbers by `<stage>.<key>`, a trained result as its
seeds' values, and the few quantities a claim states in a form of its own (`q.<name>`). Numbers
only: the sentences are the templates'."""

import statistics

from pipeline.core import lesson
from pipeline.core.recipe import loss_floor, smoothed_target
from pipeline.tokens import VOCAB

STAGES = ("architecture", "data", "train", "evaluate", "norm", "probe")


class Measured(dict):
    """{name: value, or how to compute it}, each computed when a claim reads it, so that a run which
    does not measure its inputs (a claim that does not apply) never computes it. `<stage>.<key>` is
    looked up in that stage's metrics: a key measured per seed (<key>_seed<s>) comes back as
    {"values": [one per seed], "items": test sequences}."""

    def __init__(self, metrics, seeds, test_size, computed):
        super().__init__(computed)
        self.metrics, self.seeds, self.test_size = metrics, seeds, test_size

    def lookup(self, name):
        stage, _, key = name.partition(".")
        m = self.metrics.get(stage, {})
        if f"{key}_seed{self.seeds[0]}" in m:
            return {"values": [m[f"{key}_seed{s}"] for s in self.seeds], "items": self.test_size}
        return m.get(key, KeyError)

    def __contains__(self, name):
        return super().__contains__(name) or self.lookup(name) is not KeyError

    def __getitem__(self, name):
        if not super().__contains__(name):
            return self.lookup(name)
        value = super().__getitem__(name)
        return value() if callable(value) else value


def shape(values):
    return str(tuple(values))


def span(values, decimals=3):
    """Values that print alike shown once, as the lesson does ("0", "1"); otherwise their range."""
    low, high = (f"{v:.{decimals}f}".replace("-0.000", "0.000") for v in (min(values), max(values)))
    return (low.rstrip("0").rstrip(".") if "." in low else low) if low == high else f"{low}..{high}"


def rows_of(p, key):
    """One LayerNorm-cell statistic for each of the cell's five rows."""
    return [p[f"layernorm_{key}_row{i}"] for i in range(5)]


def lazily(**computations):
    return {f"q.{name}": compute for name, compute in computations.items()}


def architecture_quantities(a):
    def extra():
        enc, dec = a["encoder_layer_params"], a["decoder_layer_params"]
        one_ln = a["decoder_layer_layernorm_params"] // a["decoder_layer_layernorms"]
        attention = a["encoder_layer_attention_params"]
        return f"{dec:,} - {enc:,} = {dec - enc:,} = {attention:,} + {one_ln} (one LayerNorm)"

    def by_heads(key, same):
        values = set(a[key])
        return same(values.pop()) if len(values) == 1 else f"{sorted(values)} by h"

    return lazily(
        mask_demo_shape=lambda: shape(a["mask_demo_output_shape"]),
        encoder_layer_shape=lambda: shape(a["encoder_layer_output_shape"]),
        decoder_layer_shape=lambda: shape(a["decoder_layer_output_shape"]),
        decoder_extra=extra,
        cross_table=lambda: " x ".join(map(str, a["cross_attention_table_shape"])),
        decoder_layernorms=lambda: f"{a['decoder_layer_layernorms']} ({a['decoder_layer_layernorm_params']})",
        logits_per_position=lambda: a["logits_shape"][-1],
        paper_width_shapes=lambda: ", ".join(shape(x) for x in a["paper_width_output_shapes"]),
        weights_without_t=lambda: len(set(a["paper_width_params_by_length"])) == 1,
        params_by_heads=lambda: by_heads("attention_params_heads_1_to_32", lambda v: f"{v} for every h"),
        mults_by_heads=lambda: by_heads("attention_mults_heads_1_to_32", lambda v: "the same for every h"),
        ln_quiz=lambda: ", ".join(str(option).lower() for option in a["layernorm_quiz"]),
        layer_boxes=lambda: f"{a['boxes_per_layer_pair']} in one encoder and one decoder layer",
        other_boxes=lambda: LESSON_BOXES - a["sublayers_mixing_positions"],
    )


def probe_quantities(p):
    return lazily(
        base_model_millions=lambda: f"{p['base_model_params'] / 1e6:.1f} M",
        paths_12=lambda: f"{p['paths_terms_12']} terms, {p['paths_through_no_sublayer_12']} identity",
        six_blocks_millions=lambda: p["encoder_params_lesson6_6"] / 1e6,
        ln_in_means=lambda: (
            f"{min(rows_of(p, 'in_mean')):.2f} to {max(rows_of(p, 'in_mean')):.2f}"
        ),  # a range
        ln_out=lambda: f"{span(rows_of(p, 'out_mean'))}, {span(rows_of(p, 'out_std'))}",
        ln_affine=lambda: f"{span(rows_of(p, 'affine_mean'))}, {span(rows_of(p, 'affine_std'))}",
        orders=lambda: (
            f"{p['residual_without_sum_orders_of_magnitude']:.2f} orders from 1 to 12 layers; "
            f"{p['residual_sum_gap_orders_of_magnitude']:.2f} with against without the sum at 12"
        ),
        with_sum_range=lambda: f"{p['residual_with_sum_min']:.2f} to {p['residual_with_sum_max']:.2f}",
    )


def training_quantities(t, seeds, label_smoothing):
    floor, correct_share, others_share = loss_floor(label_smoothing, VOCAB)
    correct, other = smoothed_target(label_smoothing, VOCAB)
    shares = {"smoothed_correct": correct, "smoothed_other": other}
    shares |= {"floor_correct": correct_share, "floor_others": others_share}

    def gap():  # the lesson's gap is at its last step, 1,200; judged on the loss's scale, not the gap's
        losses = [t[f"loss_step_1200_seed{s}"] for s in seeds]
        return {"values": [x - floor for x in losses], "items": None, "level": statistics.fmean(losses)}

    return {f"q.{k}": v for k, v in shares.items()} | lazily(gap=gap)


def evaluation_quantities(e, example, seeds):
    def reference():  # absent where nn.Transformer cannot hold the model: the claim is a note then
        if f"reference_max_diff_float64_seed{seeds[0]}" not in e:
            return None
        pairs = [(k, dtype) for k in ("max_diff", "logit_max") for dtype in ("float64", "float32")]
        found = {f"{k}_{dtype}": [e[f"reference_{k}_{dtype}_seed{s}"] for s in seeds] for k, dtype in pairs}
        return {"dot_length": e[f"reference_dot_length_seed{seeds[0]}"], **found}

    def example_outputs():  # the lesson's claim applies where the model reads its whole example
        outputs = example["outputs_by_seed"].values()
        return {"same": sum(out == lesson.EXAMPLE_OUTPUT for out in outputs), "seeds": len(outputs)}

    beam = lambda: f"beam {100 * e['beam_seq_acc']:.1f} %, greedy {100 * e['greedy_seq_acc']:.1f} %"  # noqa: E731
    return {"evaluate.reference": reference()} | lazily(
        beam_against_greedy=beam, example_outputs=example_outputs
    )


def norm_quantities(n, seeds):
    diffs = [n[f"post_seq_acc_seed{s}"] - n[f"pre_seq_acc_seed{s}"] for s in seeds]
    return {"norm": {**n, "diffs": diffs}}


LESSON_BOXES = 15  # lesson 6: «tres de las quince cajas», the diagram's boxes
# Gemma 2 2B as published (Gemma Team, 2024, "Gemma 2", table 1; its config.json): the lesson's «dos
# mil seiscientos millones» counted from the shapes, a gated FFN and grouped keys and values
GEMMA_2B = {"vocab": 256_000, "d_model": 2304, "layers": 26, "heads": 8, "kv_heads": 4, "head": 256}
GEMMA_2B_FFN = 9216  # each of the gate's and the up projection's widths (18,432 together)


def gemma_parameters(c=GEMMA_2B, ffn=GEMMA_2B_FFN):
    attention = c["d_model"] * c["head"] * (2 * c["heads"] + 2 * c["kv_heads"])  # W^Q, W^O; W^K, W^V
    layer = attention + 3 * c["d_model"] * ffn + 4 * c["d_model"]  # 4 RMSNorm scales a layer
    return c["vocab"] * c["d_model"] + c["layers"] * layer + c["d_model"]  # tied embedding, final norm


POSITIONLESS_ROW = "bos_fixed_confirm"  # the frozen search's row the claim «no es por la posición» reads


def positionless_failure(search, test_lengths, bar):
    """The search's model with no position vectors trained on the lesson's length alone: each seed's
    exact sequences at the lesson's other lengths (those the row did not train on), against the bar."""
    row = next((r for r in search["rows"] if r["name"] == POSITIONLESS_ROW), None)
    if row is None:
        raise KeyError(f"the search's row {POSITIONLESS_ROW}")
    lengths = [n for n in test_lengths if n not in row["recipe"]["train_lengths"]]
    by_length = {n: [row["accuracy"][str(s)][str(n)] for s in row["seeds"]] for n in lengths}
    return {"by_length": by_length, "bar": bar.accuracy}


def configuration(params):
    m, t = params.model, params.train
    return {
        "lesson_config": f"d_model {m.d_model}, {m.heads} heads, {m.layers} layers each side, d_ff {m.d_ff}, "
        f"dropout {m.dropout}",
        "adam_betas": str(tuple(t.betas)),
    }


def quantities(params, m, benchmark):
    """Every quantity a claim reads, from the stages' metrics (`m`: {stage: its summary.json, and
    "example"}) and the benchmark's."""
    seeds = params.train.seeds
    computed = {
        **architecture_quantities(m["architecture"]),
        **probe_quantities(m["probe"]),
        **training_quantities(m["train"], seeds, params.train.label_smoothing),
        **evaluation_quantities(m["evaluate"], m.get("example"), seeds),
        **norm_quantities(m["norm"], seeds[: params.norm.count]),
        "q.chance_of_a_zero": 1 - 0.9**10,
        "q.gemma_parameters": gemma_parameters(),
        **{f"q.{k}": v for k, v in configuration(params).items()},
        **lazily(
            positionless=lambda: positionless_failure(m["search"], params.data.test_lengths, params.study.bar)
        ),
    }
    if "train_step_ms_ours" in benchmark:
        ms = benchmark["train_step_ms_ours"]
        computed["q.seconds_for_1200_steps"] = f"{1.2 * ms:.1f} s (1,200 x {ms:.2f} ms, one CPU thread)"
    return Measured({k: m[k] for k in STAGES}, seeds, params.data.test_size, computed)

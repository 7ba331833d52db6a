"""What the claims read: every stage's measured numbers by `<stage>.<key>`, a trained result as its
seeds' values, and the few quantities a claim states in a form of its own (`q.<name>`). Numbers
only: the sentences are the templates'."""

from pipeline.core import lesson
from pipeline.core.recipe import loss_floor, smoothed_target
from pipeline.tokens import VOCAB

STAGES = ("architecture", "data", "train", "evaluate", "norm", "probe")


class Measured(dict):
    """{name: value}; `<stage>.<key>` is looked up in that stage's metrics on demand: a key measured
    per seed (<key>_seed<s>) comes back as {"values": [one per seed], "items": test sequences}."""

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
        return super().__getitem__(name) if super().__contains__(name) else self.lookup(name)


def shape(values):
    return str(tuple(values))


def span(values, decimals=3):
    """Values that print alike shown once, as the lesson does ("0", "1"); otherwise their range."""
    low, high = (f"{v:.{decimals}f}".replace("-0.000", "0.000") for v in (min(values), max(values)))
    return (low.rstrip("0").rstrip(".") if "." in low else low) if low == high else f"{low}..{high}"


def rows_of(p, key):
    """One LayerNorm-cell statistic for each of the cell's five rows."""
    return [p[f"layernorm_{key}_row{i}"] for i in range(5)]


def architecture_quantities(a):
    enc, dec = a["encoder_layer_params"], a["decoder_layer_params"]
    one_ln = a["decoder_layer_layernorm_params"] // a["decoder_layer_layernorms"]
    mults = set(a["attention_mults_heads_1_to_32"])
    params = set(a["attention_params_heads_1_to_32"])
    return {
        "q.mask_demo_shape": shape(a["mask_demo_output_shape"]),
        "q.encoder_layer_shape": shape(a["encoder_layer_output_shape"]),
        "q.decoder_layer_shape": shape(a["decoder_layer_output_shape"]),
        "q.decoder_extra": f"{dec:,} - {enc:,} = {dec - enc:,} = {a['encoder_layer_attention_params']:,} + "
        f"{one_ln} (one LayerNorm)",
        "q.cross_table": " x ".join(map(str, a["cross_attention_table_shape"])),
        "q.decoder_layernorms": f"{a['decoder_layer_layernorms']} ({a['decoder_layer_layernorm_params']})",
        "q.logits_per_position": a["logits_shape"][-1],
        "q.paper_width_shapes": ", ".join(shape(x) for x in a["paper_width_output_shapes"]),
        "q.weights_without_t": len(set(a["paper_width_params_by_length"])) == 1,
        "q.params_by_heads": f"{params.pop()} for every h" if len(params) == 1 else f"{sorted(params)} by h",
        "q.mults_by_heads": "the same for every h" if len(mults) == 1 else f"{sorted(mults)} by h",
    }


def probe_quantities(p):
    means = rows_of(p, "in_mean")
    return {
        "q.base_model_millions": f"{p['base_model_params'] / 1e6:.1f} M",
        "q.paths_12": f"{p['paths_terms_12']} terms, {p['paths_through_no_sublayer_12']} identity",
        "q.six_blocks_millions": p["encoder_params_lesson6_6"] / 1e6,
        "q.ln_in_means": f"{min(means):.2f} to {max(means):.2f}",  # the lesson states the range
        "q.ln_out": f"{span(rows_of(p, 'out_mean'))}, {span(rows_of(p, 'out_std'))}",
        "q.ln_affine": f"{span(rows_of(p, 'affine_mean'))}, {span(rows_of(p, 'affine_std'))}",
        "q.orders": f"{p['residual_without_sum_orders_of_magnitude']:.2f} orders",
        "q.with_sum_range": f"{p['residual_with_sum_min']:.2f} to {p['residual_with_sum_max']:.2f}",
    }


def training_quantities(t, seeds, label_smoothing):
    floor, correct_share, others_share = loss_floor(label_smoothing, VOCAB)
    correct, other = smoothed_target(label_smoothing, VOCAB)
    gaps = (
        [t[f"loss_step_1200_seed{s}"] - floor for s in seeds]
        if f"loss_step_1200_seed{seeds[0]}" in t
        else None
    )
    return {
        "q.smoothed_correct": correct,
        "q.smoothed_other": other,
        "q.floor_correct": correct_share,
        "q.floor_others": others_share,
        **({"q.gap": {"values": gaps, "items": None}} if gaps else {}),
    }


def evaluation_quantities(e, example, seeds):
    found = {}
    if f"reference_max_diff_float64_seed{seeds[0]}" in e:
        found["evaluate.reference"] = {
            "dot_length": e[f"reference_dot_length_seed{seeds[0]}"],
            **{
                f"{k}_{dtype}": [e[f"reference_{k}_{dtype}_seed{s}"] for s in seeds]
                for k in ("max_diff", "logit_max")
                for dtype in ("float64", "float32")
            },
        }
    else:
        found["evaluate.reference"] = None
    if "beam_seq_acc" in e:
        found["q.beam_against_greedy"] = (
            f"beam {100 * e['beam_seq_acc']:.1f} %, greedy {100 * e['greedy_seq_acc']:.1f} %"
        )
    if example and example["input"] == lesson.EXAMPLE_INPUT:
        outputs = example["outputs_by_seed"].values()
        found["q.example_outputs"] = {
            "same": sum(out == lesson.EXAMPLE_OUTPUT for out in outputs),
            "seeds": len(outputs),
        }
    return found


def norm_quantities(n, seeds):
    diffs = [n[f"post_seq_acc_seed{s}"] - n[f"pre_seq_acc_seed{s}"] for s in seeds]
    return {"norm": {**n, "diffs": diffs}}


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
    }
    if "train_step_ms_ours" in benchmark:
        ms = benchmark["train_step_ms_ours"]
        computed["q.seconds_for_1200_steps"] = f"{1.2 * ms:.1f} s (1,200 x {ms:.2f} ms, one CPU thread)"
    return Measured({k: m[k] for k in STAGES}, seeds, params.data.test_size, computed)

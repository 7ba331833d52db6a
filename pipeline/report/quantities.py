"""What the claims read: a stage's measured number by `<stage>.<key>`, a trained result as a query
of a tidy table that returns its seeds' values, and the few quantities a claim states in a form of
its own (`q.<name>`). Numbers only: the sentences are the templates'."""

import statistics

from pipeline.core.recipe import loss_floor, smoothed_target
from pipeline.infra.locale import Phrase, joined
from pipeline.infra.outputs import by_seed, one, paired_difference
from pipeline.params import lesson
from pipeline.report.inputs import ReportParams
from pipeline.tokens import VOCAB

STAGES = ("architecture", "data", "train", "probe")  # those whose single numbers claims read


class Measured(dict):
    """{name: value, or how to compute it}, each computed when a claim reads it, so that a run which
    does not measure its inputs (a claim that does not apply) never computes it. `<stage>.<key>` is
    looked up in that stage's metrics; a query ({table, column, and the rows' other columns' values})
    of a table with seeds comes back as {"values": [the column, one per seed], "items": test
    sequences}, and of one without them as the one row's number."""

    def __init__(self, metrics, tables, seeds, test_size, computed):
        super().__init__(computed)
        self.metrics, self.tables, self.seeds, self.test_size = metrics, tables, seeds, test_size

    def query(self, spec):
        """A trained result's seeds' values; a table, column or row that is not there is a KeyError."""
        spec = dict(spec)
        table, column = spec.pop("table", None), spec.pop("column", None)
        if table not in self.tables:
            raise KeyError(f"table {table}")
        frame = self.tables[table]
        if "seed" not in frame.columns:  # a table of the data, not of trained seeds: one number
            return one(frame, column, **spec)
        return {"values": by_seed(frame, column, self.seeds, **spec), "items": self.test_size}

    def lookup(self, name):
        stage, _, key = name.partition(".")
        return self.metrics.get(stage, {}).get(key, KeyError)

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
    low, high = (round(v, decimals) + 0.0 for v in (min(values), max(values)))  # + 0.0: no -0
    return Phrase("{:g}", low) if low == high else Phrase(f"{{:.{decimals}f}}..{{:.{decimals}f}}", low, high)


def lazily(**computations):
    return {f"q.{name}": compute for name, compute in computations.items()}


def architecture_quantities(a, heads):
    """`a`: the architecture's single numbers; `heads`: its table by head count."""

    def extra():
        enc, dec = a["encoder_layer_params"], a["decoder_layer_params"]
        one_ln = a["decoder_layer_layernorm_params"] // a["decoder_layer_layernorms"]
        attention = a["encoder_layer_attention_params"]
        said = "{:,} - {:,} = {:,} = {:,} + {} (one LayerNorm)"
        return Phrase(said, dec, enc, dec - enc, attention, one_ln)

    def by_heads(column, same):
        values = set(heads[column].tolist())
        return same(values.pop()) if len(values) == 1 else Phrase("{} by h", str(sorted(values)))

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
        params_by_heads=lambda: by_heads("attention_params", lambda v: Phrase("{} for every h", v)),
        mults_by_heads=lambda: by_heads("attention_mults", lambda v: Phrase("the same for every h")),
        ln_quiz=lambda: joined(", ", [Phrase(str(option).lower()) for option in a["layernorm_quiz"]]),
        layer_boxes=lambda: Phrase("{} in one encoder and one decoder layer", a["boxes_per_layer_pair"]),
        other_boxes=lambda: LESSON_BOXES - a["sublayers_mixing_positions"],
    )


def probe_quantities(p, tables):
    cell, paths = tables["probe/layernorm_cell"], tables["probe/paths"]  # a column: one value per row of X
    twelve = lambda column: one(paths, column, blocks=12)  # noqa: E731
    return lazily(
        base_model_millions=lambda: Phrase("{:.1f} M", p["base_model_params"] / 1e6),
        paths_12=lambda: Phrase(
            "{} terms, {} identity", *map(twelve, ("terms", "terms_through_no_sublayer"))
        ),
        six_blocks_millions=lambda: p["encoder_params_lesson6_6"] / 1e6,
        ln_in_means=lambda: Phrase("{:.2f} to {:.2f}", cell["in_mean"].min(), cell["in_mean"].max()),
        ln_out=lambda: Phrase("{}, {}", span(cell["out_mean"]), span(cell["out_std"])),
        ln_affine=lambda: Phrase("{}, {}", span(cell["affine_mean"]), span(cell["affine_std"])),
        orders=lambda: Phrase(
            "{:.2f} orders from 1 to 12 layers; {:.2f} with against without the sum at 12",
            *(p[f"residual_{k}_orders_of_magnitude"] for k in ("without_sum", "sum_gap")),
        ),
        with_sum_range=lambda: Phrase(
            "{:.2f} to {:.2f}", p["residual_with_sum_min"], p["residual_with_sum_max"]
        ),
    )


def training_quantities(losses, seeds, label_smoothing):
    floor, correct_share, others_share = loss_floor(label_smoothing, VOCAB)
    correct, other = smoothed_target(label_smoothing, VOCAB)
    shares = {"smoothed_correct": correct, "smoothed_other": other}
    shares |= {"floor_correct": correct_share, "floor_others": others_share}

    def gap():  # the lesson's gap is at its last step, 1,200; judged on the loss's scale, not the gap's
        last = by_seed(losses, "loss", seeds, steps=1200)
        return {"values": [x - floor for x in last], "items": None, "level": statistics.fmean(last)}

    return {f"q.{k}": v for k, v in shares.items()} | lazily(gap=gap)


def evaluation_quantities(e, reference_table, example, seeds, test_size):
    def reference():  # absent where nn.Transformer cannot hold the model: the claim is a note then
        if reference_table.empty:
            return None
        pairs = [(k, dtype) for k in ("max_diff", "logit_max") for dtype in ("float64", "float32")]
        found = {f"{k}_{dtype}": by_seed(reference_table, k, seeds, dtype=dtype) for k, dtype in pairs}
        return {"dot_length": by_seed(reference_table, "dot_length", seeds[:1], dtype="float64")[0], **found}

    def example_outputs():  # the lesson's claim applies where the model reads its whole example
        outputs = example["outputs_by_seed"].values()
        return {"same": sum(out == lesson.EXAMPLE_OUTPUT for out in outputs), "seeds": len(outputs)}

    # beam search reads the trained length's first rows, as many as the lesson's test (evaluate.py)
    rows = min(lesson.LESSON_TEST_SIZE, test_size)
    beam = (100 * e["beam_seq_acc"], rows, 100 * e["greedy_seq_acc"], test_size)
    said = "beam {:.1f} % on the first {:,} rows, greedy {:.1f} % on {:,}"
    return {"evaluate.reference": reference()} | lazily(
        beam_against_greedy=lambda: Phrase(said, *beam),
        example_outputs=example_outputs,
    )


def norm_quantities(table, seeds):
    post, pre = (by_seed(table, "seq_acc", seeds, norm=norm) for norm in ("post", "pre"))
    paired = paired_difference(post, pre)
    means = {"post_seq_acc": statistics.fmean(post), "pre_seq_acc": statistics.fmean(pre)}
    return {
        "norm": {**means, "post_minus_pre": paired["mean"], "post_minus_pre_2se": paired["two_se"], **paired}
    }


LESSON_BOXES = 15  # lesson 6: «tres de las quince cajas», the diagram's boxes
# Gemma 2 2B as published (Gemma Team, 2024, "Gemma 2", table 1; its config.json): the lesson's «dos
# mil seiscientos millones» counted from the shapes, a gated FFN and grouped keys and values
GEMMA_2B = {"vocab": 256_000, "d_model": 2304, "layers": 26, "heads": 8, "kv_heads": 4, "head": 256}
GEMMA_2B_FFN = 9216  # each of the gate's and the up projection's widths (18,432 together)


def gemma_parameters(c=GEMMA_2B, ffn=GEMMA_2B_FFN):
    attention = c["d_model"] * c["head"] * (2 * c["heads"] + 2 * c["kv_heads"])  # W^Q, W^O; W^K, W^V
    layer = attention + 3 * c["d_model"] * ffn + 4 * c["d_model"]  # 4 RMSNorm scales a layer
    return c["vocab"] * c["d_model"] + c["layers"] * layer + c["d_model"]  # tied embedding, final norm


LESSON_CONFIG = "d_model {d_model}, {heads} heads, {layers} layers each side, d_ff {d_ff}, dropout {dropout}"
RECIPE = "lr {lr}, eps {eps}, warmup {warmup}, label smoothing {label_smoothing}, batch {batch_size}"


def configuration(params: ReportParams):
    m, t = vars(params.model), vars(params.train)
    return {
        "lesson_config": Phrase(LESSON_CONFIG, **m),
        "adam_betas": Phrase("({}, {})", *t["betas"]),
        "recipe": Phrase(RECIPE, **t),
    }


def quantities(params: ReportParams, m, benchmark):
    """Every quantity a claim reads, from the stages' metrics (`m`: {stage: its summary.json, "tables":
    the tidy tables, "example"}) and the benchmark's."""
    seeds, tables = params.train.seeds, m["tables"]
    computed = {
        **architecture_quantities(m["architecture"], m["tables"]["architecture/by_heads"]),
        **probe_quantities(m["probe"], tables),
        **training_quantities(tables["train/losses"], seeds, params.train.label_smoothing),
        **evaluation_quantities(
            m["evaluate"], tables["evaluate/reference"], m.get("example"), seeds, params.data.test_size
        ),
        **norm_quantities(tables["norm/by_seed"], seeds[: params.norm_count]),
        "q.chance_of_a_zero": 1 - 0.9**10,
        "q.gemma_parameters": gemma_parameters(),
        **{f"q.{k}": v for k, v in configuration(params).items()},
    }
    if "train_step_ms_ours" in benchmark:
        ms = benchmark["train_step_ms_ours"]
        computed["q.seconds_for_1200_steps"] = Phrase(
            "{:.1f} s ({:,} × {:.2f} ms, one CPU thread)", 1.2 * ms, 1200, ms
        )
    return Measured({k: m[k] for k in STAGES}, tables, seeds, params.data.test_size, computed)

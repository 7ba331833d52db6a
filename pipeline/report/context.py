"""The numbers the lesson's report templates write sentences around: computed here from the lesson's
saved metrics, never phrased here (pipeline/report/templates/ holds every sentence)."""

import math
import statistics
from pathlib import Path

import yaml

from pipeline.infra.locale import SIGNIFICANT, joined
from pipeline.infra.outputs import by_seed, one, paired_difference, select
from pipeline.params.lesson import LESSON_TEST_SIZE
from pipeline.report.claims import counts, load_claims
from pipeline.report.inputs import ReportParams
from pipeline.report.judging import WIDEST, t_975

# The numbers lesson 10 prints that the first screen sets against ours, in the lesson's order; then
# the digits of its length table, which the figure below the first table draws beside.
SUMMARY = """
    l10-loss-300 l10-loss-600 l10-loss-900 l10-loss-1200 l10-greedy-seq l10-greedy-digit l10-tf-seq
    l10-length-6-seq l10-length-8-seq l10-length-12-seq l10-length-14-seq l10-example
""".split()


DIGITS_SUMMARY = "l10-length-6-digit l10-length-8-digit l10-length-12-digit l10-length-14-digit".split()


LESSON_MAP = Path(__file__).with_name("lesson_map.yaml")


def lesson_map(by_id):
    """Every code listing of the lessons (lesson_map.yaml), each printed line beside our values."""
    listings = yaml.safe_load(LESSON_MAP.read_text())
    for listing in listings:
        for printed in listing["prints"]:
            judged = [by_id[c] for c in printed["claims"] if c in by_id]  # those this run judges
            printed["ours"] = joined(" · ", [c.reproduced for c in judged])
            printed["claims"] = [c.id for c in judged]
    return listings


def seed_values(values):
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values), "values": values}


def attention_on_written(example):
    """Where the lesson's example looks as it is written: in the last decoder layer, the mean of its
    heads, each step's cross-attention on the input positions that hold the digit that step writes
    (its share), against what attention spread evenly over the input would put there."""
    last = example["cross_attention"][-1]  # [head][step][input position]
    source, written = example["input"], example["output"]
    shares, evens = [], []
    for step, digit in enumerate(written):
        holding = [i for i, d in enumerate(source) if d == digit]
        weights = [statistics.fmean(head[step][i] for head in last) for i in range(len(source))]
        shares.append(sum(weights[i] for i in holding))
        evens.append(len(holding) / len(source))
    return {
        "share": statistics.fmean(shares),
        "low": min(shares),
        "high": max(shares),
        "even": statistics.fmean(evens),
        "most": sum(s > 0.5 for s in shares),
        "steps": len(shares),
        "heads": len(last),
    }


def greedy_gap(greedy, seeds):
    """The lesson's two measurements of its one model at length 10 (99.5 % and 99.3 %, 1,000
    sequences each), pooled, against our seeds: how far above our mean and our best it lies."""
    entries = {e["id"]: e["expected"] for e in load_claims()}
    pooled = (entries["l10-greedy-seq"] + entries["l10-length-10-seq"]) / 2
    se = (pooled * (1 - pooled) / (2 * LESSON_TEST_SIZE)) ** 0.5
    ours = seed_values(greedy)
    n = len(seeds)  # one more run, as the trained claims' prediction interval has it, on the lesson's test
    sd = statistics.stdev(ours["values"]) if n > 1 else 0.0
    spread = math.hypot(sd * math.sqrt(1 + 1 / n), se)
    above = {"above_mean_se": (pooled - ours["mean"]) / se, "above_best_se": (pooled - ours["max"]) / se}
    z = (pooled - ours["mean"]) / spread
    tail = 0.5 * math.erfc(z / math.sqrt(2))  # a run at least this good, were runs normal
    above |= {"above_mean_sd": z, "one_in": 1 / tail if tail > 1e-3 else None, "t": t_975(n), "df": n - 1}
    return {"pooled": pooled, "se": se, "right": round(pooled * 2 * LESSON_TEST_SIZE), **ours, **above}


FLAT = 1.05  # a stack whose strongest sublayer gradient is under this many times its weakest is flat


def gradient_stacks(probe):
    """Each norm's gradient at initialisation, stack by stack: the strongest sublayer's over the
    weakest's in the encoder and in the decoder, and whether both stacks are flat (then the whole
    fall from top to bottom sits where the gradient crosses from the decoder into the encoder)."""
    out = {}
    for norm in ("post", "pre"):
        spread = {s: probe.get(f"grad_{norm}_init_{s}_max_over_min") for s in ("encoder", "decoder")}
        if None not in spread.values():
            out[norm] = {**spread, "flat": all(v < FLAT for v in spread.values())}
    return out


def residual_depths(table, depths):
    """Lesson 6's residual cell at the shallowest and the deepest stack: the derivative without the
    sum (finite differences, as the lesson takes it)."""
    first, deepest = min(depths), max(depths)
    without = {n: one(table, "without_sum_fd", layers=n) for n in (first, deepest)}
    return {
        "first": first,
        "deepest": deepest,
        "without_first": without[first],
        "without_deepest": without[deepest],
    }


def norm_context(tables, seeds, steps):
    """The pre-norm comparison as the report words it: how many seeds, each norm's mean exact
    sequences, and each norm's training loss over its last 100 steps (post-norm's from the train
    stage's logs, pre-norm's retrained here), the recipe-bound reason pre-norm scores lower."""
    rows = tables["norm/by_seed"]
    by_norm = {norm: by_seed(rows, "seq_acc", seeds, norm=norm) for norm in ("post", "pre")}
    acc = {norm: statistics.fmean(values) for norm, values in by_norm.items()}
    diffs = paired_difference(by_norm["post"], by_norm["pre"])["diffs"]  # seed by seed
    logs = tables["train/losses"]  # the train stage's, for the norm the pipeline's model has
    loss = {
        norm: select(rows, retrained=True, norm=norm)["loss_last100_mean"].tolist()
        or [statistics.fmean(select(logs, seed=s)["loss"].tolist()[-100:]) for s in seeds]
        for norm in ("post", "pre")
    }
    post, pre = loss["post"], loss["pre"]
    return {
        "seeds": len(seeds),
        "steps": steps,
        **acc,
        "post_loss": (min(post), max(post)),
        "pre_loss": (min(pre), max(pre)),
        "diffs": (min(diffs), max(diffs)),
    }


def jacobian_context(sweep):
    """The whole model's Jacobian at the shallowest stack, with and without the sum, per norm (the right
    panel's left end, where the lines without the sum sit above those with it), and the encoder's
    without the sum at the shallowest and the deepest stack (post-norm)."""
    first, last = sweep.iloc[0], sweep.iloc[-1]
    return {
        norm: {k: float(first[f"source_to_output_{norm}_{k}"]) for k in ("with_sum", "without_sum")}
        for norm in ("post", "pre")
    } | {
        "layers": int(first["layers"]),
        "deepest": int(last["layers"]),
        "encoder_without": [float(row["encoder_post_without_sum"]) for row in (first, last)],
    }


def report_context(params: ReportParams, m, claims, environment):
    """Everything the templates need: `m` holds each stage's summary and the files the report reads."""
    seeds = params.train.seeds
    by_id = {c.id: c for c in claims}
    tables, trained = m["tables"], max(params.data.train_lengths)
    accuracy, greedy = tables["evaluate/accuracy"], tables["evaluate/by_seed"]
    final = by_seed(tables["train/losses"], "loss", seeds, steps=params.train.steps)
    return {
        "counts": counts(claims),
        "claims": claims,
        "by_id": by_id,
        "lesson": {e["id"]: e["expected"] for e in load_claims()},
        "summary": [by_id[i] for i in SUMMARY if i in by_id],
        "digits_summary": [by_id[i] for i in DIGITS_SUMMARY if i in by_id],
        "norm": norm_context(tables, seeds[: params.norm_count], params.train.steps),
        "jacobian": jacobian_context(tables["probe/jacobian_sweep"]),
        "widest_points": round(100 * WIDEST["accuracy"]),  # an accuracy's band wider than this says nothing
        "significant": SIGNIFICANT,  # the digits a number is read to before it is rounded
        "lesson_map": lesson_map(by_id),
        "seeds": list(seeds),
        "test_size": params.data.test_size,
        "test_lengths": list(params.data.test_lengths),
        "trained": trained,
        "steps": params.train.steps,
        "loss": {**seed_values(final), "floor": m["train"]["loss_floor"]},
        "lengths": {
            n: seed_values(by_seed(accuracy, "seq_acc", seeds, decoder="greedy", length=n))
            for n in params.data.test_lengths
        },
        "gap": greedy_gap(by_seed(greedy, "greedy_seq_acc", seeds), seeds),
        "example": m["example"],
        "attention": attention_on_written(m["example"]),
        "gradient_stacks": gradient_stacks(m["probe"]),
        "probe": m["probe"],
        "depths": residual_depths(tables["probe/residual_table"], params.probe_depths),
        "benchmark": m["benchmark"],
        "model_params": m["architecture"]["model_params"],
        "environment": environment,
        "params": params,
    }

"""The length-generalisation study gathered ("sort any length"): why the lesson's model fails
away from the length it was trained on, and which positional scheme and training lengths make a
model that does not.

Each variant of `study.variants` is trained and tested by its own stage (`variant@<name>`,
pipeline.study.variant): a positional scheme and attention with the study's recipe and whatever
values the variant changes. This stage tests the pipeline's own checkpoints (models/, the row
`pipeline`) on the same test sets (pipeline.study.sets), diagnoses them at `study.diagnosis_lengths`
(pipeline.study.diagnosis), and gathers every variant into one table, the bar's verdict and the
files the report draws and `dvc plots` reads (CSV), where every row comes from (meta.json) and the
diagnosis (diagnosis.json).
"""

import json
import statistics
import time
from pathlib import Path

import numpy as np

from pipeline.core.data import load_npz, row_keys
from pipeline.infra.errors import PipelineError
from pipeline.infra.outputs import csv_text, spread
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import resolve_device, set_up_worker
from pipeline.model.checkpoint import checkpoint_path
from pipeline.study.bar import bar_lengths, bar_standing, best_variant, held_out
from pipeline.study.certificate import has_finite_state
from pipeline.study.count_margin import measure, measured_checkpoint, measured_lengths
from pipeline.study.count_margin import summary as count_summary
from pipeline.study.counting_sort import counting_sort_model
from pipeline.study.diagnosis import (
    VARIANT_DIAGNOSIS,
    diagnose,
    gate_biases,
    length_accuracy,
    mean_over_seeds,
    seed_rows,
)
from pipeline.study.model import load_model
from pipeline.study.params import StudyParams
from pipeline.study.sets import study_test_sets
from pipeline.study.variant import description, with_seeds
from pipeline.tokens import DIGITS

ACCURACY_COLUMNS = ["variant", "seed", "length", "seq_acc", "digit_acc"]
BAR_COLUMNS = [
    "bar_min_seq_acc",
    "bar_worst_length",
    "bar_min_seed_seq_acc",
    "meets_bar",
    "bar_up_to_length",
    "mean_seq_acc_beyond_bar",
]


def with_variant(variant, rows):
    """The study's accuracy rows (one per variant, seed and tested length) of one variant's
    {seed, length, seq_acc, digit_acc} rows."""
    return [{"variant": variant, **row} for row in rows]


def by_length(rows, variant, column="seq_acc"):
    """{length: [one value per seed]} of one variant's rows, lengths ascending."""
    out = {}
    for r in rows:
        if r["variant"] == variant:
            out.setdefault(r["length"], []).append(r[column])
    return dict(sorted(out.items()))


def length_table(rows, variants, lengths):
    """Wide CSV: per length, each variant's mean, std, min and max over seeds (blank where untested)."""
    tested = {v: by_length(rows, v) for v in variants}
    table = []
    for n in lengths:
        row = {"length": n}
        for v in variants:
            values = tested[v].get(n)
            mean, std = spread(values) if values else (None, None)
            row |= {
                v: mean,
                f"{v}_std": std,
                f"{v}_min": values and min(values),
                f"{v}_max": values and max(values),
            }
        table.append(row)
    return csv_text(table, float_format="%.6f")


def variant_table(rows, variant):
    """One variant's CSV for `dvc plots` (one plot per variant, comparable across experiments)."""
    seq, digit = by_length(rows, variant), by_length(rows, variant, "digit_acc")
    table = [
        {"length": n, "seq_acc": mean, "seq_acc_std": std, "digit_acc": spread(digit[n])[0]}
        for n, (mean, std) in ((n, spread(values)) for n, values in seq.items())
    ]
    return csv_text(table, ["length", "seq_acc", "seq_acc_std", "digit_acc"], float_format="%.6f")


def rank_table(diagnosis):
    columns = ["emitted_rank", "correct_rank", "attended_rank", "acc_by_position"]
    rows = [(n, t, *(d[c][t] for c in columns)) for n, d in diagnosis.items() for t in range(int(n))]
    return csv_text(rows, ["length", "step", *columns], float_format="%.4f")


def mean_gate_biases(by_seed):
    """Each gated attention's learned bias per head, mean over seeds: {attention: [per head]}."""
    seeds = list(by_seed.values())
    if not seeds or not seeds[0]:
        return {}
    return {k: np.mean([s[k] for s in seeds], axis=0).tolist() for k in seeds[0]}


def study_meta(s: StudyParams, pipeline_row, records, variants_dir, test_sets, met):
    """meta.json: where each row of the study comes from, the test sets (`test_sets`: the sets, each
    length's overlap with the variants' training, the totals), the bar and who met it."""
    tests, overlap, overlap_totals = test_sets
    return {
        "variants": {
            "pipeline": pipeline_row,
            **{
                v: {k: rec[k] for k in ("positions", "attention", "train_lengths", "steps", "seeds")}
                | {
                    "source": f"{Path(variants_dir) / f'{v}.json'} (stage variant@{v})"
                    if v != "handset"
                    else "pipeline/study/counting_sort.py (weights set by hand, not trained)"
                }
                for v, rec in records.items()
            },
        },
        "test_sets": {
            str(n): {
                "size": len(tests[n]),
                "every_sequence": DIGITS**n <= s.test_size,
                "in_training": overlap[n],
            }
            for n in range(1, s.max_length + 1)
        },
        **overlap_totals,
        "bar": {
            "accuracy": s.bar.accuracy,
            "seed_floor": s.bar.seed_floor,
            "lengths": list(s.bar.lengths),
            "min_seeds": s.bar.min_seeds,
            "held_out": held_out(s),  # no search row trained the study's seeds
            "met_by": met,
        },
        # the count margins are not read where nothing can drift with the length at a fixed count
        "margins_finite_state": [v for v in records if v in s.variants and has_finite_state(s.recipes[v][0])],
    }


def diagnosis_file(seeds, diagnosis_lengths, models_dir, pipeline_lengths, tests, diagnosis, records):
    """diagnosis.json: the pipeline's diagnosis by length, every variant's, their gates' biases."""
    return {
        "models": f"{models_dir}/seed_*.pt",
        "seeds": list(seeds),
        "trained_lengths": list(pipeline_lengths),
        "test_sequences": {str(n): len(tests[n]) for n in diagnosis_lengths},
        "lengths": diagnosis,
        "variants": {
            v: {n: mean_over_seeds({seed: runs[seed][n] for seed in runs}) for n in next(iter(runs.values()))}
            for v, runs in ((v, rec["diagnosis"]) for v, rec in records.items())
        },
        "gates": {v: mean_gate_biases(rec.get("gate_biases", {})) for v, rec in records.items()},
    }


# ---------------------------------------------------------------------------------- gathered


def test_checkpoint(path, tests, batch_size, device, diagnosis_lengths):
    """Worker: one of the pipeline's checkpoints, tested at every length and diagnosed."""
    set_up_worker(device)
    model = load_model(path, device)[0]
    accuracy = length_accuracy(model, tests, batch_size, device)
    model.cpu()
    readable = [n for n in diagnosis_lengths if n <= model.longest_source]
    return accuracy, {str(n): diagnose(model, tests[n]) for n in readable}


def load_variant(study: StudyParams, variant, path):
    """A variant's record as its stage wrote it, checked against what the parameters now ask for."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise PipelineError(f"{path} is missing: run `dvc repro variant@{variant}`") from None
    expected = description(*study.recipes[variant])
    stale = [k for k, v in expected.items() if record.get(k) != v]
    if stale:
        raise PipelineError(
            f"{path} is stale ({', '.join(f'{k} {record.get(k)} != {expected[k]}' for k in stale)}): "
            f"run `dvc repro variant@{variant}`"
        )
    return record


def overlap_with_training(train_path, tests):
    """How many of the study's test sequences the pipeline's own training set holds."""
    train = load_npz(train_path, ["source", "lengths"])
    keys = set(row_keys(train["source"], train["lengths"]))
    return sum(k in keys for n, src in tests.items() for k in row_keys(src, [n] * len(src)))


def test_pipeline_checkpoints(seeds, device, batch_size, diagnosis_lengths, models_dir, tests, workers):
    """{seed: (accuracy by length, diagnosis by length)} of the pipeline's checkpoints, side by side."""
    device = resolve_device(device)
    jobs = [
        (checkpoint_path(models_dir, seed), tests, batch_size, device, diagnosis_lengths) for seed in seeds
    ]
    start = time.perf_counter()
    checked = dict(zip(seeds, run_jobs(test_checkpoint, jobs, workers), strict=True))
    print(f"study: tested and diagnosed models/ in {time.perf_counter() - start:.0f} s", flush=True)
    return checked


def handset_run(tests, batch_size, diagnosis_lengths):
    """The algorithm set by hand, what training would have to reach: (its accuracy, its record
    in a variant's format)."""
    handset = counting_sort_model()
    accuracy = length_accuracy(handset, tests, batch_size)
    record = {
        "diagnosis": {
            "0": {
                n: {k: v for k, v in diagnose(handset, tests[int(n)]).items() if k in VARIANT_DIAGNOSIS}
                for n in map(str, diagnosis_lengths)
            }
        },
        "gate_biases": {"0": gate_biases(handset)},
        **{k: getattr(handset.config, k) for k in ("positions", "attention")},
        "train_lengths": [],
        "steps": 0,
        "seeds": [0],
    }
    return accuracy, record


MARGIN_COLUMNS = ["variant", "seed", "count", "length", "owed", "margin", "wrong_share", "steps"]
DIVISOR_COLUMNS = ["variant", "seed", "length", "layer", "divisor"]


def count_margins(records, variants_dir, workers, lengths, drifting):
    """The checkpoints of every trained variant named in `drifting` and the hand-set model measured
    at a fixed count at each of `lengths` (pipeline.study.count_margin): (margin rows, divisor rows),
    each with its variant and seed."""
    runs = [(v, seed) for v, rec in records.items() if v in drifting for seed in rec["seeds"]]
    jobs = [(checkpoint_path(Path(variants_dir) / v, seed), lengths) for v, seed in runs]
    start = time.perf_counter()
    measured = run_jobs(measured_checkpoint, jobs, workers)
    measured.append(measure(counting_sort_model(), lengths))
    runs.append(("handset", 0))
    margins, divisors = [], []
    for (v, seed), (margin_rows, divisor_rows) in zip(runs, measured, strict=True):
        margins += [{"variant": v, "seed": seed, **r} for r in margin_rows]
        divisors += [{"variant": v, "seed": seed, **r} for r in divisor_rows]
    print(f"study: count margins of {len(runs)} models in {time.perf_counter() - start:.0f} s", flush=True)
    return margins, divisors


def run_study(s: StudyParams, seeds, device, batch_size, models_dir, train_path, variants_dir, workers=None):
    """Every variant's accuracy and standing, and the diagnosis of the pipeline's checkpoints (its
    `seeds`, tested on `device`, `batch_size` rows at a time): (the standings, the tidy tables {file
    name: (rows, columns)}, the other outputs {file name: text or JSON})."""
    lengths = list(range(1, s.max_length + 1))
    tests, overlap = study_test_sets(s.train, s.data, s.seed, s.max_length, s.test_size, s.diagnosis_lengths)
    records = {v: load_variant(s, v, Path(variants_dir) / f"{v}.json") for v in s.variants}
    pipeline_overlap = overlap_with_training(train_path, tests)
    checked = test_pipeline_checkpoints(
        seeds, device, batch_size, s.diagnosis_lengths, models_dir, tests, workers
    )
    diagnosed = {seed: d for seed, (_, d) in checked.items()}
    read = diagnosed[seeds[0]]  # the lengths diagnosed
    diagnosis = {n: mean_over_seeds({seed: d[n] for seed, d in diagnosed.items()}) for n in read}

    rows = with_variant("pipeline", with_seeds({seed: accuracy for seed, (accuracy, _) in checked.items()}))
    for v, rec in records.items():
        rows += with_variant(v, rec["accuracy"])
    margin_lengths = measured_lengths(max(s.data.train_lengths), s.max_length)
    # a variant whose step is a function of the token fed and the digits owed has nothing that could
    # drift with the length at a fixed count (pipeline/study/certificate.py): its margins are not read
    drifting = [v for v in records if not has_finite_state(s.recipes[v][0])]
    margin_rows, divisor_rows = count_margins(records, variants_dir, workers, margin_lengths, drifting)
    handset_accuracy, records["handset"] = handset_run(tests, batch_size, s.diagnosis_lengths)
    rows += with_variant("handset", with_seeds({0: handset_accuracy}))
    variants = ["pipeline", *s.variants, "handset"]
    standings = [{"variant": v, **standing_of(rows, v, s.bar)} for v in variants]
    overlaps = {
        "test_overlap_total": int(sum(overlap.values())),
        "pipeline_test_overlap_total": int(pipeline_overlap),
    }
    # What the train stage recorded in the checkpoints: their configuration, lengths and steps.
    pipeline_model, record = load_model(checkpoint_path(models_dir, seeds[0]))
    pipeline_lengths = record["train_lengths"]
    pipeline_row = {
        "positions": pipeline_model.config.positions,
        "attention": "softmax",  # the paper's: the lesson's model takes no other
        "train_lengths": list(pipeline_lengths),
        "steps": record["steps"],
        "seeds": list(seeds),
        "source": "models/ (the pipeline's train stage)",
    }
    met = [r["variant"] for r in standings if r["meets_bar"] and r["variant"] in s.variants]
    outputs = {
        "length_accuracy.csv": length_table(rows, variants, lengths),
        **{f"lengths/{v}.csv": variant_table(rows, v) for v in variants},
        "meta.json": study_meta(s, pipeline_row, records, variants_dir, (tests, overlap, overlaps), met),
        "diagnosis.json": diagnosis_file(
            seeds, s.diagnosis_lengths, models_dir, pipeline_lengths, tests, diagnosis, records
        ),
        "rank_by_step.csv": rank_table(diagnosis),
        "count_margin.json": count_summary(margin_rows, divisor_rows),
    }
    tables = {
        "per_seed.csv": (rows, ACCURACY_COLUMNS),
        "bar.csv": (standings, ["variant", *BAR_COLUMNS]),
        "diagnosis_by_seed.csv": diagnosis_table(diagnosed, records),
        "count_margin.csv": (margin_rows, MARGIN_COLUMNS),
        "layernorm_divisors.csv": (divisor_rows, DIVISOR_COLUMNS),
        "loss_curves.csv": (loss_curve_rows(records), LOSS_COLUMNS),
    }
    return standings, tables, outputs


LOSS_COLUMNS = ["variant", "seed", "step", "loss"]


def loss_curve_rows(records):
    """Every trained variant's loss curve as its stage recorded it (each point the mean over the
    steps up to `step`): how many steps each recipe needs, where its training time goes."""
    rows = []
    for v, rec in records.items():
        curves = dict(rec.get("loss_curve", {}))
        every = curves.pop("every", None)
        for seed, curve in curves.items():
            rows += [
                {"variant": v, "seed": int(seed), "step": every * (i + 1), "loss": loss}
                for i, loss in enumerate(curve)
            ]
    return rows


def diagnosis_table(diagnosed, records):
    """(rows, columns): each seed's single numbers of the diagnosis, for the pipeline's checkpoints
    (`diagnosed`: {seed: {length: diagnosis}}) and every variant's record, by model and length."""
    runs_by_model = {"pipeline": diagnosed} | {v: rec["diagnosis"] for v, rec in records.items()}
    rows = []
    for model, runs in runs_by_model.items():
        for n in next(iter(runs.values())):
            rows += seed_rows(model, n, {seed: runs[seed][n] for seed in runs})
    columns = list(dict.fromkeys(c for row in rows for c in row))
    return [{c: row.get(c) for c in columns} for row in rows], columns


def standing_of(rows, variant, bar):
    """One variant's standing against the bar, from the study's accuracy rows."""
    seeds = {r["seed"] for r in rows if r["variant"] == variant}
    return bar_standing(by_length(rows, variant), len(seeds), bar)


def headline(standings, variants, held_out_seeds):
    """What `dvc exp show` compares: the best variant, how far it reaches, the bar, the lesson's model."""
    by_variant = {r["variant"]: r for r in standings}
    best = best_variant(by_variant, variants)
    return {
        "best_variant": best,
        "best_bar_min_seq_acc": by_variant[best]["bar_min_seq_acc"],
        "best_bar_up_to_length": by_variant[best]["bar_up_to_length"],
        "bar_met": any(by_variant[v]["meets_bar"] for v in variants),
        "bar_seeds_held_out": held_out_seeds,  # no search row trained the seeds judged
        "pipeline_bar_min_seq_acc": by_variant["pipeline"]["bar_min_seq_acc"],
    }


def print_standings(standings, rows, study: StudyParams):
    """Each model's mean exact sequences at the bar's lengths, and who met the bar, on stdout."""
    bar = study.bar
    low, high = bar.lengths
    print(
        f"study: exact-sequence accuracy, mean over seeds (lengths {low}-{high}; the bar is "
        f">= {100 * bar.accuracy:g} % at each)"
    )
    for r in standings[:-1]:  # every trained variant and the pipeline's model; not the hand-set one
        seq_acc = by_length(rows, r["variant"])
        shown = " ".join(
            f"{100 * statistics.fmean(seq_acc[n]):.0f}" for n in bar_lengths(bar) if n in seq_acc
        )
        print(f"  {r['variant']:22s} {shown}  min {100 * r['bar_min_seq_acc']:.1f} %")
    met = [r["variant"] for r in standings if r["meets_bar"] and r["variant"] in study.variants]
    seeds = "held-out seeds" if held_out(study) else "seeds the search trains too"
    print(f"study: bar met by {', '.join(met) or 'no variant'}, judged on {seeds}")

"""The length-generalisation study gathered ("sort any length"): why the lesson's model fails
away from the length it was trained on, and which positional scheme and training lengths make a
model that does not.

Each variant of `study.variants` is trained and tested by its own stage (`variant@<name>`,
pipeline.study.variant): a positional scheme and attention with the study's recipe and whatever
values the variant changes. This stage tests the pipeline's own checkpoints (models/, the row `pipeline`)
on the same test sets (pipeline.study.sets), diagnoses them at `study.diagnosis_lengths`
(pipeline.study.diagnosis), and gathers every variant into one table, the bar's verdict and the
files the report draws.
"""

import json
import statistics
import time
from pathlib import Path

from pipeline.core.data import load_npz, row_keys
from pipeline.core.params import Params
from pipeline.infra.device import resolve_device, set_up_worker
from pipeline.infra.errors import PipelineError
from pipeline.infra.pool import run_jobs
from pipeline.infra.results import write_detail
from pipeline.model.checkpoint import checkpoint_path, load_checkpoint
from pipeline.model.config import longest_source
from pipeline.model.handset import counting_sort_model
from pipeline.study.confirmation import held_out
from pipeline.study.diagnosis import (
    VARIANT_DIAGNOSIS,
    accuracy_by_length,
    diagnose,
    gate_biases,
    mean_over_seeds,
    seed_rows,
)
from pipeline.study.outputs import (
    ACCURACY_COLUMNS,
    BAR_COLUMNS,
    by_length,
    diagnosis_file,
    length_table,
    rank_table,
    study_meta,
    variant_table,
    with_variant,
)
from pipeline.study.ranking import bar_lengths, best_variant
from pipeline.study.sets import study_test_sets
from pipeline.study.variant import variant_description, with_seeds


def test_checkpoint(path, tests, batch_size, device, diagnosis_lengths):
    """Worker: one of the pipeline's checkpoints, tested at every length and diagnosed."""
    set_up_worker(device)
    model = load_checkpoint(path, device)[0]
    accuracy = accuracy_by_length(model, tests, batch_size, device)
    model.cpu()
    readable = [n for n in diagnosis_lengths if n <= longest_source(model.config)]
    return accuracy, {str(n): diagnose(model, tests[n]) for n in readable}


def load_variant(params: Params, variant, path):
    """A variant's record as its stage wrote it, checked against what the parameters now ask for."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise PipelineError(f"{path} is missing: run `dvc repro variant@{variant}`") from None
    expected = variant_description(params, variant)
    stale = [k for k, v in expected.items() if record.get(k) != v]
    if stale:
        raise PipelineError(
            f"{path} is stale ({', '.join(f'{k} {record.get(k)} != {expected[k]}' for k in stale)}): "
            f"run `dvc repro variant@{variant}`"
        )
    return record


def bar_standing(seq_acc, seeds, bar):
    """One variant against the bar (study.bar), from `seq_acc` ({length: exact sequences, one per
    seed} at the lengths it was tested on) and its number of seeds: the worst of the bar's lengths,
    the lowest seed there, whether it clears the bar, how far it sorts at the bar, and the mean beyond."""
    means = {n: statistics.fmean(values) for n, values in sorted(seq_acc.items())}
    within = bar_lengths(bar)
    worst = min((n for n in means if n in within), key=means.get)
    floor = min((a for n in means if n in within for a in seq_acc[n]), default=0.0)  # any one seed's
    tested_enough = set(within) <= set(means) and seeds >= bar.min_seeds
    meets = tested_enough and means[worst] >= bar.accuracy and floor >= bar.seed_floor
    reach = within.start - 1  # the longest L with every length of the bar's first..L at the bar
    while reach + 1 in means and means[reach + 1] >= bar.accuracy:
        reach += 1
    beyond = [means[n] for n in means if n > within.stop - 1]
    return {
        "bar_min_seq_acc": means[worst],
        "bar_worst_length": worst,
        "bar_min_seed_seq_acc": floor,
        "meets_bar": meets,
        "bar_up_to_length": reach,
        "mean_seq_acc_beyond_bar": statistics.fmean(beyond) if beyond else None,
    }


def overlap_with_training(train_path, tests):
    """How many of the study's test sequences the pipeline's own training set holds."""
    train = load_npz(train_path, ["source", "lengths"])
    keys = set(row_keys(train["source"], train["lengths"]))
    return sum(k in keys for n, src in tests.items() for k in row_keys(src, [n] * len(src)))


def test_pipeline_checkpoints(params: Params, models_dir, tests, workers):
    """{seed: (accuracy by length, diagnosis by length)} of the pipeline's checkpoints, side by side."""
    device = resolve_device(params.train.device)
    jobs = [
        (
            checkpoint_path(models_dir, seed),
            tests,
            params.evaluate.batch_size,
            device,
            params.study.diagnosis_lengths,
        )
        for seed in params.train.seeds
    ]
    start = time.perf_counter()
    checked = dict(zip(params.train.seeds, run_jobs(test_checkpoint, jobs, workers), strict=True))
    print(f"study: tested and diagnosed models/ in {time.perf_counter() - start:.0f} s", flush=True)
    return checked


def handset_run(params: Params, tests):
    """The algorithm set by hand, what training would have to reach: (its accuracy, its record
    in a variant's format)."""
    handset = counting_sort_model()
    accuracy = accuracy_by_length(handset, tests, params.evaluate.batch_size, "cpu")
    record = {
        "diagnosis": {
            "0": {
                n: {k: v for k, v in diagnose(handset, tests[int(n)]).items() if k in VARIANT_DIAGNOSIS}
                for n in map(str, params.study.diagnosis_lengths)
            }
        },
        "gate_biases": {"0": gate_biases(handset)},
        **{k: getattr(handset.config, k) for k in ("positions", "attention")},
        "train_lengths": [],
        "steps": 0,
        "seeds": [0],
    }
    return accuracy, record


def run_study(params: Params, models_dir, train_path, variants_dir, workers=None):
    """Every variant's accuracy and standing, and the diagnosis: (the standings, the tidy tables
    {file name: (rows, columns)}, the other outputs {file name: text or JSON})."""
    s = params.study
    lengths = list(range(1, s.max_length + 1))
    tests, overlap = study_test_sets(params)
    records = {v: load_variant(params, v, Path(variants_dir) / f"{v}.json") for v in s.variants}
    pipeline_overlap = overlap_with_training(train_path, tests)
    checked = test_pipeline_checkpoints(params, models_dir, tests, workers)
    diagnosed = {seed: d for seed, (_, d) in checked.items()}
    read = diagnosed[params.train.seeds[0]]  # the lengths diagnosed
    diagnosis = {n: mean_over_seeds({seed: d[n] for seed, d in diagnosed.items()}) for n in read}

    rows = with_variant("pipeline", with_seeds({seed: accuracy for seed, (accuracy, _) in checked.items()}))
    for v, rec in records.items():
        rows += with_variant(v, rec["accuracy"])
    handset_accuracy, records["handset"] = handset_run(params, tests)
    rows += with_variant("handset", with_seeds({0: handset_accuracy}))
    variants = ["pipeline", *s.variants, "handset"]
    standings = [{"variant": v, **standing_of(rows, v, s.bar)} for v in variants]
    overlaps = {
        "test_overlap_total": int(sum(overlap.values())),
        "pipeline_test_overlap_total": int(pipeline_overlap),
    }
    # What the train stage recorded in the checkpoints: their configuration, lengths and steps.
    pipeline_model, record = load_checkpoint(checkpoint_path(models_dir, params.train.seeds[0]))
    pipeline_lengths = record.get("train_lengths", list(params.data.train_lengths))  # older checkpoints
    pipeline_row = {
        "positions": pipeline_model.config.positions,
        "attention": pipeline_model.config.attention,
        "train_lengths": list(pipeline_lengths),
        "steps": record["steps"],
        "seeds": list(params.train.seeds),
        "source": "models/ (the pipeline's train stage)",
    }
    met = [r["variant"] for r in standings if r["meets_bar"] and r["variant"] in s.variants]
    outputs = {
        "length_accuracy.csv": length_table(rows, variants, lengths),
        **{f"lengths/{v}.csv": variant_table(rows, v) for v in variants},
        "meta.json": study_meta(params, pipeline_row, records, variants_dir, (tests, overlap, overlaps), met),
        "diagnosis.json": diagnosis_file(params, models_dir, pipeline_lengths, tests, diagnosis, records),
        "rank_by_step.csv": rank_table(diagnosis),
    }
    tables = {
        "per_seed.csv": (rows, ACCURACY_COLUMNS),
        "bar.csv": (standings, ["variant", *BAR_COLUMNS]),
        "diagnosis_by_seed.csv": diagnosis_table(diagnosed, records),
    }
    return standings, tables, outputs


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


def write_outputs(standings, tables, outputs, params: Params, metrics_path):
    """All outputs at once: the detail folder written aside and moved into place, then the headline."""
    write_detail(metrics_path, tables, headline(standings, params.study.variants, held_out(params)), outputs)

"""The length study's files: the tables the report draws and `dvc plots` reads (CSV), where every
row comes from (meta.json) and the diagnosis (diagnosis.json), from the gathered results."""

from pathlib import Path

import numpy as np

from pipeline.core.params import Params
from pipeline.infra.tables import csv_text
from pipeline.study.confirmation import held_out
from pipeline.study.diagnosis import mean_over_seeds
from pipeline.tokens import DIGITS


def length_table(summaries, lengths):
    """Wide CSV: per length, each variant's mean, std, min and max over seeds (blank where untested)."""
    rows = []
    for n in lengths:
        row, key = {"length": n}, f"length_{n}_seq_acc"
        for v, m in summaries.items():
            seeds = [value for k, value in m.items() if k.startswith(f"{key}_seed")]
            tested = key in m
            row[v] = m[key] if tested else None
            row[f"{v}_std"] = m[key + "_std"] if tested else None
            row[f"{v}_min"] = min(seeds) if tested else None
            row[f"{v}_max"] = max(seeds) if tested else None
        rows.append(row)
    return csv_text(rows, float_format="%.6f")


def variant_table(summary, lengths):
    """One variant's CSV for `dvc plots` (one plot per variant, comparable across experiments)."""
    rows = [
        {
            "length": n,
            "seq_acc": summary[f"length_{n}_seq_acc"],
            "seq_acc_std": summary[f"length_{n}_seq_acc_std"],
            "digit_acc": summary[f"length_{n}_digit_acc"],
        }
        for n in lengths
        if f"length_{n}_seq_acc" in summary
    ]
    return csv_text(rows, ["length", "seq_acc", "seq_acc_std", "digit_acc"], float_format="%.6f")


def seed_table(per_seed, lengths):
    rows = [
        (variant, seed, n, result[f"length_{n}_seq_acc"], result[f"length_{n}_digit_acc"])
        for (variant, seed), result in per_seed.items()
        for n in lengths
        if f"length_{n}_seq_acc" in result
    ]
    return csv_text(rows, ["variant", "seed", "length", "seq_acc", "digit_acc"], float_format="%.6f")


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


def study_meta(params: Params, pipeline_row, records, variants_dir, tests, overlap, summaries):
    """meta.json: where each row of the study comes from, the test sets, the bar and who met it."""
    s = params.study
    return {
        "variants": {
            "pipeline": pipeline_row,
            **{
                v: {k: rec[k] for k in ("positions", "attention", "train_lengths", "steps", "seeds")}
                | {
                    "source": f"{Path(variants_dir) / f'{v}.json'} (stage variant@{v})"
                    if v != "handset"
                    else "pipeline/model/handset.py (weights set by hand, not trained)"
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
        "bar": {
            "accuracy": s.bar.accuracy,
            "seed_floor": s.bar.seed_floor,
            "lengths": list(s.bar.lengths),
            "min_seeds": s.bar.min_seeds,
            "held_out": held_out(params),  # no search row trained the study's seeds
            "met_by": [v for v in s.variants if summaries[v]["meets_bar"]],
        },
    }


def diagnosis_file(params: Params, models_dir, pipeline_lengths, tests, diagnosis, records):
    """diagnosis.json: the pipeline's diagnosis by length, every variant's, their gates' biases."""
    return {
        "models": f"{models_dir}/seed_*.pt",
        "seeds": list(params.train.seeds),
        "trained_lengths": list(pipeline_lengths),
        "test_sequences": {str(n): len(tests[n]) for n in params.study.diagnosis_lengths},
        "lengths": diagnosis,
        "variants": {
            v: {n: mean_over_seeds({seed: runs[seed][n] for seed in runs}) for n in next(iter(runs.values()))}
            for v, runs in ((v, rec["diagnosis"]) for v, rec in records.items())
        },
        "gates": {v: mean_gate_biases(rec.get("gate_biases", {})) for v, rec in records.items()},
    }

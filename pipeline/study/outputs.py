"""The length study's files: the tables the report draws and `dvc plots` reads (CSV), where every
row comes from (meta.json) and the diagnosis (diagnosis.json), from the gathered results."""

from pathlib import Path

import numpy as np

from pipeline.core.params import Params
from pipeline.infra.results import spread
from pipeline.infra.tables import csv_text
from pipeline.study.confirmation import held_out
from pipeline.study.diagnosis import mean_over_seeds
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


def study_meta(params: Params, pipeline_row, records, variants_dir, test_sets, met):
    """meta.json: where each row of the study comes from, the test sets (`test_sets`: the sets, each
    length's overlap with the variants' training, the totals), the bar and who met it."""
    s, (tests, overlap, overlap_totals) = params.study, test_sets
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
        **overlap_totals,
        "bar": {
            "accuracy": s.bar.accuracy,
            "seed_floor": s.bar.seed_floor,
            "lengths": list(s.bar.lengths),
            "min_seeds": s.bar.min_seeds,
            "held_out": held_out(params),  # no search row trained the study's seeds
            "met_by": met,
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

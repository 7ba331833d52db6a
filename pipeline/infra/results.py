"""A stage's detail as tidy tables: one row an observation (a seed, a length, a variant, a decoder),
one column a variable. Saved as CSV at full precision (each float's shortest exact text, so that it
reads back bit for bit) and read back into pandas: means, spreads and per-seed lists are views of
the tables, never numbers stored under keys that carry a seed or a length."""

import statistics
from pathlib import Path

import pandas as pd

from pipeline.infra import files
from pipeline.infra.errors import DataError
from pipeline.infra.tables import csv_text


def table_text(rows, columns):
    """Rows ({column: value}) as a tidy table's CSV text, every float written exactly."""
    return csv_text([{c: row[c] for c in columns} for row in rows], columns)


def write_detail(metrics_path, tables: dict, headline: dict, others: dict | None = None):
    """The stage's detail folder (metrics/<stage>/: `tables` {file name: (rows, columns)} and `others`
    {file name: text or JSON}) written aside and moved into place, then the headline
    (metrics/<stage>.json): the headline appearing means the stage is complete."""
    detail = {name: table_text(rows, columns) for name, (rows, columns) in tables.items()}
    files.write_dir(Path(metrics_path).with_suffix(""), {**detail, **(others or {})})
    files.write_json(metrics_path, headline)


def read_table(path):
    """A tidy table as a DataFrame; a missing file is a one-line error naming it."""
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `dvc repro` to produce it") from None


def select(frame, **where):
    """The rows whose columns equal `where`'s values ({column: value}), in the table's order."""
    for column, value in where.items():
        if column not in frame.columns:
            raise KeyError(f"column {column!r}")
        frame = frame[frame[column] == value]
    return frame


def by_seed(frame, column, seeds, **where):
    """The `column` of the rows matching `where`, one value per seed in `seeds`' order; a seed
    without its row is a KeyError naming the query."""
    rows = select(frame, **where).set_index("seed")[column]
    missing = [s for s in seeds if s not in rows.index]
    if missing:
        raise KeyError(f"{column} where {where} for seeds {missing}")
    return [rows.loc[s].item() for s in seeds]


def one(frame, column, **where):
    """The `column` of the one row matching `where`; none, or more than one, is a KeyError."""
    rows = select(frame, **where)
    if len(rows) != 1:
        raise KeyError(f"one row of {column} where {where} ({len(rows)} found)")
    return rows[column].item()


def spread(values):
    """(mean, sample standard deviation) of per-seed values, as the headlines state them (0 for one)."""
    values = list(values)
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def paired_difference(a, b):
    """Seed against seed (`a`, `b`: one value per seed, in the same order): each difference, their
    mean, and twice the mean's standard error over seeds (0 for one seed)."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0
    return {"diffs": diffs, "mean": statistics.fmean(diffs), "two_se": 2 * se}

"""A stage's outputs, written one way, and read back.

Every stage writes a headline, `metrics/<stage>.json` (the few numbers `dvc exp show` compares), and
its detail, the folder `metrics/<stage>/`: tidy tables, one row an observation (a seed, a length, a
variant, a decoder) and one column a variable, saved as CSV at full precision (each float's shortest
exact text, so that it reads back bit for bit), and any other file. `stage_outputs` writes them all
or none: the detail and any other output folder are written aside and moved into place together,
then the headline is written, so the headline appearing means the stage is complete. Read back into
pandas, means, spreads and per-seed lists are views of the tables, never numbers stored under keys
that carry a seed or a length.
"""

import statistics
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.infra import files
from pipeline.infra.errors import DataError

# ------------------------------------------------------------------------------------ writing


def csv_text(rows, columns=None, float_format=None):
    """Rows (dicts, or sequences with `columns`) as CSV text: a header, "\\n" line ends, no index,
    floats in `float_format` (e.g. "%.6f"; default: shortest exact repr), blanks for missing cells."""
    frame = pd.DataFrame(rows, columns=columns)
    return frame.to_csv(index=False, lineterminator="\n", float_format=float_format, na_rep="")


def table_text(rows, columns=None):
    """Rows ({column: value}) as a tidy table's CSV text, every float written exactly; `columns`
    picks and orders them (default: the rows' own keys)."""
    if columns is None:
        return csv_text(rows)
    return csv_text([{c: row[c] for c in columns} for row in rows], columns)


def detail_dir(metrics_path):
    """metrics/<stage>.json -> metrics/<stage>: the folder of the stage's detail."""
    return Path(metrics_path).with_suffix("")


def headline_of(metrics, keys):
    """The entries of `metrics` named in `keys`, in that order."""
    return {k: metrics[k] for k in keys if k in metrics}


@dataclass
class Outputs:
    """What a stage writes inside `stage_outputs`: files of its detail folder (`table`, `file`), other
    output folders (`folders`, written into directly), output files elsewhere (`output`, held until
    the block ends), and the headline, set last."""

    detail: Path | None
    folders: list
    headline: dict | None = None
    written: list = field(default_factory=list)
    held: dict = field(default_factory=dict)  # path -> bytes, written when the block ends well

    def table(self, name, rows, columns=None):
        """A tidy table (rows of {column: value}) in the detail folder, every float exact."""
        self.file(name, table_text(rows, columns))

    def file(self, name, content):
        """A file of the detail folder: text as it is, anything else as JSON."""
        path = self.detail / name
        (files.write_text if isinstance(content, str) else files.write_json)(path, content)
        self.written.append(name)

    def output(self, path, content: bytes):
        """An output file outside the detail folder (the data stage's .npz): held, and written with
        the others when the block ends without error."""
        self.held[Path(path)] = content


@contextmanager
def stage_outputs(headline_path, *folders, detail=True):
    """A stage's outputs, all of them or none. Yields an Outputs: its detail folder (metrics/<stage>/,
    unless `detail` is False) and `folders` are staging folders; when the block ends without error
    they move into place together, then the headline (`out.headline`, which the block must set) is
    written to `headline_path`, after the files held by `out.output`. On error nothing is moved and
    nothing written."""
    finals = ([detail_dir(headline_path)] if detail else []) + [Path(f) for f in folders]
    with files.staged(*finals) as staging:
        out = Outputs(staging[0] if detail else None, list(staging[1:] if detail else staging))
        yield out
        if out.headline is None:
            raise ValueError(f"{headline_path}: the stage set no headline")
    for path, content in out.held.items():
        files.write_bytes(path, content)
    files.write_json(headline_path, out.headline)


def write_rows_so_far(path, head, rows):
    """A result that grows a row at a time (the search's): `head` and every row finished so far,
    rewritten atomically after each row, so that an interrupted run keeps what it finished."""
    files.write_json(path, {**head, "rows": rows})


def write_outputs(headline_path, headline, tables=None, others=None, outputs=None):
    """The common case of `stage_outputs`: the detail folder holding `tables` ({file name: (rows,
    columns)} or {file name: rows}) and `others` ({file name: text, or an object written as JSON}),
    the output files `outputs` ({path: bytes}), then the headline."""
    with stage_outputs(headline_path) as out:
        for name, table in (tables or {}).items():
            out.table(name, *(table if isinstance(table, tuple) else (table,)))
        for name, content in (others or {}).items():
            out.file(name, content)
        for path, content in (outputs or {}).items():
            out.output(path, content)
        out.headline = headline


# ------------------------------------------------------------------------------------ reading


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

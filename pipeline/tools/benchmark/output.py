"""Where the results go: metrics/benchmark.json (flat keys) and one CSV per table beside it."""

from pathlib import Path

import pandas as pd

from pipeline.infra import files

OUT_DIR = Path("metrics")  # writes OUT_DIR/benchmark.json and OUT_DIR/benchmark/*.csv


def csv_text(table: pd.DataFrame) -> str:
    return table.to_csv(index=False, lineterminator="\n", float_format="%.3f")


def write_results(metrics, tables, out_dir=OUT_DIR):
    """The CSVs first, then the JSON: the JSON appearing means the run is complete."""
    for name, table in tables.items():
        files.write_text(Path(out_dir) / "benchmark" / f"{name}.csv", csv_text(table))
    files.write_json(Path(out_dir) / "benchmark.json", metrics)

"""Where the results go: metrics/benchmark.json (flat keys) and one CSV per table beside it."""

from pathlib import Path

from pipeline.infra import files
from pipeline.infra.tables import csv_text

OUT_DIR = Path("metrics")  # writes OUT_DIR/benchmark.json and OUT_DIR/benchmark/*.csv


def write_results(metrics, tables, out_dir=OUT_DIR):
    """The CSVs first, then the JSON: the JSON appearing means the run is complete."""
    for name, table in tables.items():
        files.write_text(Path(out_dir) / "benchmark" / f"{name}.csv", csv_text(table, float_format="%.3f"))
    files.write_json(Path(out_dir) / "benchmark.json", metrics)

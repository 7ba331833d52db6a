"""A record of each stage's last run (wall time, versions, device, threads) for the report.

Kept outside DVC's outputs (runs/ is git-ignored): timings differ on every run, and the results
DVC hashes must not.
"""

import json
import platform
import sys
import time
from pathlib import Path

import torch

from pipeline import files

RUNS_DIR = Path("runs")


def environment():
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "threads": torch.get_num_threads(),
    }


def record_run(stage, seconds, **extra):
    record = {
        "stage": stage,
        "seconds": round(seconds, 2),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        **environment(),
        **extra,
    }
    files.write_json(RUNS_DIR / f"{stage}.json", record)


def read_runs():
    """Every stage's last run record, by stage name (missing stages are simply absent)."""
    runs = {}
    for path in sorted(RUNS_DIR.glob("*.json")):
        try:
            runs[path.stem] = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue  # a record is informative only; a broken one is skipped
    return runs

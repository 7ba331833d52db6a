"""A record of each stage's last run (wall time, versions, device, threads), printed and kept in
runs/<stage>.json.

Kept outside git and DVC (runs/ is git-ignored and no stage's output): timings differ on every run,
and nothing tracked may, or a rerun would leave the tree dirty.
"""

import platform
import sys
import time
from importlib import metadata
from pathlib import Path

from pipeline.infra import files

RUNS_DIR = Path("runs")


def environment():
    """Versions and this process's compute: torch's device and threads where the stage loaded torch
    (the numerics stage's own process does not: its children measure)."""
    found = {
        "python": sys.version.split()[0],
        "torch": metadata.version("torch"),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        found |= {
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        }
    return found


def record_run(stage, seconds, **extra):
    record = {
        "stage": stage,
        "seconds": round(seconds, 2),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        **environment(),
        **extra,
    }
    files.write_json(RUNS_DIR / f"{stage}.json", record)
    print(f"{stage}: {seconds:.1f} s wall time (runs/{stage}.json)", flush=True)

"""A stage's entry: the paths it reads and writes (named once, on dvc.yaml's command line), its
errors as one line and an exit status, and the record of its run (wall time, versions, device,
threads), printed and kept in runs/<stage>.json.

The run record is kept outside git and DVC (runs/ is git-ignored and no stage's output): timings
differ on every run, and nothing tracked may, or a rerun would leave the tree dirty.
"""

import argparse
import functools
import platform
import signal
import sys
import time
from importlib import metadata
from pathlib import Path

from pipeline.infra import files
from pipeline.infra.errors import PipelineError

RUNS_DIR = Path("runs")


def stage_paths(doc, *names, positional=(), flags=None, options=None):
    """Parse `--<name> PATH` for each of `names` (all required), the `positional` words first, each
    switch of `flags` ({name: its help}) and each optional value of `options` ({name: (its help,
    its default)}); `doc` is the stage's docstring, whose first line is the help."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for word in positional:
        parser.add_argument(word)
    for name in names:
        parser.add_argument(f"--{name}", type=Path, required=True, metavar="PATH")
    for name, meaning in (flags or {}).items():
        parser.add_argument(f"--{name}", action="store_true", help=meaning)
    for name, (meaning, default) in (options or {}).items():
        parser.add_argument(f"--{name}", default=default, help=meaning)
    return parser.parse_args()


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def stage_entry(main):
    """Run a stage's main(): project errors print one line to stderr and exit 2; Ctrl-C exits 130."""

    @functools.wraps(main)
    def wrapper(*args, **kwargs):
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C does
        try:
            return main(*args, **kwargs)
        except PipelineError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt:
            print("interrupted: no partial outputs were written", file=sys.stderr)
            sys.exit(130)

    return wrapper


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

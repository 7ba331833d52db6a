"""The numerics record (metrics/numerics.json): every mode's fingerprint measured side by side, one
fresh process a mode; the numerics stage keeps it while the mode in use computes as it records.
Torch-free on purpose: the numerics stage runs on every `dvc repro`, and only its children, which
measure (pipeline/numerics/fingerprint.py), pay torch's import.
"""

import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from pipeline.infra.errors import DataError, PipelineError
from pipeline.numerics import pin as numerics


def differing(ours, theirs):
    """The entries whose hashes differ (or that only one side has), in ours' order."""
    names = list(ours) + [k for k in theirs if k not in ours]
    return [k for k in names if ours.get(k) != theirs.get(k)]


# One fresh process per mode: MKL reads its branch once, at its first call.
CHILD = "import pipeline; from pipeline.numerics import record as r; print(r.entries_of_this_process())"


def combined(entries):
    """One short id for a mode's operations: equal ids, equal entries."""
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()[:12]


def entries_of_this_process():
    """This process's entries and capability as JSON (the child of `measure`)."""
    import torch

    from pipeline.numerics.fingerprint import fingerprint

    return json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "entries": fingerprint()})


def mode_entries(record, mode):
    """Every entry of one mode of a record: its operations, then the training run's."""
    measured = record["modes"][mode]
    return {**measured["operations"], "training_steps": measured["training_steps"]}


def in_fresh_process(mode, code, what):
    """The JSON the Python `code` prints last, run in a fresh process pinned in numerics mode `mode`;
    `what` names the work in the one-line error where it fails."""
    env = {**os.environ, numerics.MODE_ENV: mode}
    env.pop(numerics.UNPINNED_ENV, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise PipelineError(f"{what} of mode {mode} failed: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.splitlines()[-1])


def measure_mode(mode):
    measured = in_fresh_process(mode, CHILD, "the fingerprint")
    operations = dict(measured["entries"])
    training = operations.pop("training_steps")
    return {
        "settings": numerics.MODES[mode],
        "capability": measured["capability"],
        "fingerprint": combined(operations),  # the machine's: the operations alone
        "operations": operations,
        "training_steps": training,  # the code's too: the model and the loop
    }


def measure(known=None):
    """This machine's record: its CPU, the mode this process runs with, and every mode's entries
    (the modes measured side by side, one process each; `known`: modes already measured here)."""
    known = known or {}
    todo = [mode for mode in numerics.MODES if mode not in known]
    with ThreadPoolExecutor(max(1, len(todo))) as pool:
        measured = {**known, **dict(zip(todo, pool.map(measure_mode, todo), strict=True))}
    return {
        "in_use": numerics.mode(),
        "cpu": numerics.cpu_identity(),
        "torch": metadata.version("torch"),
        "modes": {mode: measured[mode] for mode in numerics.MODES},
    }


def computes_as(previous, mode, measured):
    """Whether this machine, measured in `mode` alone, computes as `previous` records the results
    were made: the same mode in use, torch and settings, and every entry of that mode alike. The
    other modes' entries do not decide: MKL's fast branch rounds otherwise on an Intel CPU than on an
    AMD one, yet where both compute the mode in use alike, the results made in it are the same bytes."""
    return (
        previous is not None
        and previous.get("in_use") == mode
        and previous.get("torch") == metadata.version("torch")
        and previous.get("modes", {}).get(mode) == measured
    )


def kept_record(previous):
    """What the numerics stage writes: `previous` as it is where this machine computes the mode in
    use as it records (so the file, and every result downstream of it, stays as it was: the CPU named
    is the machine that first made these numerics); otherwise a new record of every mode measured
    here. The mode in use is measured first and alone: the others only for a new record."""
    mode = numerics.mode()
    ours = measure_mode(mode)
    return previous if computes_as(previous, mode, ours) else measure(known={mode: ours})


def read_record(path):
    """A fingerprint record from a file, with a clear error when it is missing or not one."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `dvc repro numerics`, or name a fingerprint file") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise DataError(f"{path} is not a numerics fingerprint (not JSON)") from None
    if not isinstance(record, dict) or not {"in_use", "cpu", "modes"} <= record.keys():
        raise DataError(f"{path} is not a numerics fingerprint (no in_use, cpu and modes)")
    return record

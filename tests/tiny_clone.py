"""The tiny end-to-end clone the slow tests share: the project's files in a fresh git repository
(branch main) with a configuration that trains in seconds (the lesson's params.yaml and the study's
study/params.yaml), and a helper to run commands in it. Its `dvc repro -P` runs both pipelines.

One clone is reproduced (`dvc repro`, results committed) once per test run, whatever the number of
pytest-xdist workers: the first worker that needs it builds it under a file lock, in the background
from the moment its tests are collected, and every test that starts from it works on its own copy, so
those tests run side by side and none sees another's changes."""

import fcntl
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
STUDY_PARAMS = "study/params.yaml"
BIN = Path(sys.executable).parent
TINY = {
    "data": {"train_lengths": [5], "train_size": 256, "test_lengths": [3, 5], "test_size": 20, "seed": 0},
    "model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32, "max_len": 16},
    "train": {"steps": 30, "batch_size": 16, "warmup": 5, "seeds": [0, 1], "log_every": 10},
    "evaluate": {"batch_size": 1000},
    "norm": {"count": 1},
    "probe": {"depths": [1, 2], "sweep_layers": [1, 2]},  # every probe's code at the fewest depths
}
TINY_STUDY = {  # the length study's own file, study/params.yaml, at toy size
    "variants": {  # the default study's names and held-out seeds, so the README's commands run here
        "bos_mixed": {"positions": "bos", "attention": "softmax"},
        "bos_mixed_sums": {"positions": "bos", "attention": "none/sigmoid/sigmoid"},
        "signed_count_hint_repeats": {
            "positions": "bos",
            "attention": "none/none/signed",
            "train": {"count_hint": 0.1},
            "data": {"repeats": 0.25},
        },
        "sums_count_hint_repeats": {
            "positions": "bos",
            "attention": "none/sigmoid/sigmoid",
            "train": {"count_hint": 0.1},
            "data": {"repeats": 0.25},
        },
        "signed_owed_repeats": {
            "positions": "bos",
            "attention": "none/none/signed_owed",
            "data": {"repeats": 0.25},
        },
    },
    "model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32, "max_len": 16},
    "train": {"steps": 30, "batch_size": 16, "warmup": 5, "seeds": [200, 201]},
    "data": {"train_lengths": [1, 2, 3, 4, 5]},
    "max_length": 8,
    "test_size": 20,
    "diagnosis_lengths": [3, 5, 7],
    "verdict": {
        "max_length": 12,
        "test_size": 10,
        "table_lengths": [4, 8, 12],
        "bar": {"accuracy": 0.99, "lengths": [1, 12], "seed_floor": 0.98, "min_seeds": 2},
    },
}


def clone_env(cwd):
    """The environment a command runs with in the clone at `cwd`: this venv's tools, the clone's code."""
    return {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONPATH": str(cwd)}


def run(cmd, cwd, check=True, **kwargs):
    result = subprocess.run(cmd, cwd=cwd, env=clone_env(cwd), capture_output=True, text=True, **kwargs)
    if check and result.returncode:
        raise AssertionError(f"{cmd} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def merged(base, overrides):
    """`base` with `overrides` laid over it, nested sections merged key by key; study.variants
    replaced whole."""
    out = dict(base)
    for key, value in overrides.items():
        nested = isinstance(value, dict) and key != "variants"
        out[key] = merged(base[key], value) if nested else value
    return out


def write_params(repo, overrides, study_overrides=None):
    """The clone's params.yaml with `overrides` laid over the project's, and, where given, its
    study/params.yaml with `study_overrides` laid over the project's study section."""
    params = merged(yaml.safe_load((ROOT / "params.yaml").read_text()), overrides)
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    if study_overrides is not None:
        study = merged(yaml.safe_load((ROOT / STUDY_PARAMS).read_text())["study"], study_overrides)
        (repo / STUDY_PARAMS).write_text(yaml.safe_dump({"study": study}, sort_keys=False))


def make_clone(repo):
    """The project's files (tracked or not ignored) in a fresh git repository at `repo`, tiny params."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        inputs = ("metrics/benchmark", "metrics/search")  # tools' measurements the report reads
        generated = name.startswith(("metrics/", "reports/")) and not name.startswith(inputs)
        if source.is_file() and not generated and name not in ("dvc.lock", "study/dvc.lock"):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    write_params(repo, TINY, TINY_STUDY)
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"]):
        run(cmd, repo)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tiny"], repo)
    return repo


REPRODUCED = "reproduced"  # the template's folder under the run's shared temporary folder


def build_reproduced(base):
    """Build the reproduced template under `base` unless it is built: the clone, `dvc repro`, the
    results committed. Its repro output goes to `<base>/reproduced.log`, which exists only once the
    template is whole; a failed build leaves `<base>/reproduced.failed` with the reason."""
    template, log, failed = base / REPRODUCED, base / "reproduced.log", base / "reproduced.failed"
    with open(base / "reproduced.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder across workers; the others wait here
        if log.exists() or failed.exists():
            return
        try:
            template.mkdir()
            result = run(["dvc", "repro", "-P"], make_clone(template))  # both pipelines
            run(["git", "add", "-A"], template)
            run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results"], template)
            log.write_text(result.stdout + result.stderr)
        except (AssertionError, OSError, subprocess.SubprocessError) as error:
            failed.write_text(str(error))


def build_in_background(base):
    """Start building the template now, so that other tests run while `dvc repro` does."""
    threading.Thread(target=build_reproduced, args=(base,), daemon=True).start()


def reproduced_copy(base, dest):
    """(a copy of the reproduced template at `dest`, the template's `dvc repro` output)."""
    build_reproduced(base)  # waits for a build under way; builds it if none was started
    if (base / "reproduced.failed").exists():
        raise AssertionError(
            f"the tiny clone's dvc repro failed:\n{(base / 'reproduced.failed').read_text()}"
        )
    shutil.copytree(base / REPRODUCED, dest, symlinks=True)
    return dest, (base / "reproduced.log").read_text()

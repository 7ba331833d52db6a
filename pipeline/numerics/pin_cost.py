"""What a choice of CPU numerics costs: `python -m pipeline.numerics.pin_cost` times the lesson's
training step under two or more settings side by side, `fast` and `portable` (the modes of
pipeline/numerics/pin.py) and `unpinned` (the CPU's own choice of kernels); with `--repro`, also
`dvc repro -f train evaluate` in a temporary clone per setting.

    python -m pipeline.numerics.pin_cost                          # fast against portable, a step
    python -m pipeline.numerics.pin_cost --sides fast unpinned    # what the pin itself costs
    python -m pipeline.numerics.pin_cost --repro --rounds 2       # and the lesson's train + evaluate

A setting is fixed once per process, so each measurement is a fresh process; the settings take turns
round by round, so load that comes and goes falls on all alike. It prints each one's median
milliseconds per step with its quartiles, and each against the first, and the load before and
after. A tool, not a stage: timings are not results.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline.numerics import pin as numerics

SIDES = (*numerics.MODES, "unpinned")
# One process: train `steps` steps of the params.yaml model on one thread and print its capability
# and the duration of every step after the first `warmup`.
CHILD = """
import json, sys, time
import pipeline  # first: the pin of the mode asked for (or, with PIPELINE_UNPINNED_NUMERICS=1, none)
import numpy as np
import torch
from dataclasses import replace
from pipeline.core.data import synthetic_rows
from pipeline.core.loop import train
from pipeline.params.lesson_load import load_lesson_params

steps, warmup = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(1)
params = load_lesson_params()
recipe, length = replace(params.train, steps=steps), params.data.train_lengths[0]
stamps = []
on_step = lambda *_: stamps.append(time.perf_counter())
train(params.model, recipe, [0], synthetic_rows(steps * recipe.batch_size, length), on_step=on_step)
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(),
                  "ms": [1000 * d for d in np.diff(stamps)[warmup:].tolist()]}))
"""


def environment(side):
    """The environment of a process that computes with `side`'s numerics."""
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED}
    if side == "unpinned":
        env[numerics.UNPINNED_ENV] = "1"
    else:
        env[numerics.UNPINNED_ENV], env[numerics.MODE_ENV] = "0", side
    return env


def measure(side, steps, warmup):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(steps), str(warmup)],
        env=environment(side),
        capture_output=True,
        text=True,
    )
    if out.returncode:
        sys.exit(f"error: the timing process failed: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", nargs="+", choices=SIDES, default=["fast", "portable"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=120, help="training steps per process")
    parser.add_argument("--warmup", type=int, default=20, help="steps dropped at the start")
    parser.add_argument(
        "--repro", action="store_true", help="also time `dvc repro -f train evaluate`, a clone per setting"
    )
    args = parser.parse_args()
    if len(set(args.sides)) < 2:
        parser.error("name at least two different settings to compare")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    steps = {side: [] for side in args.sides}
    capability = {}
    for round_ in range(1, args.rounds + 1):
        for side in steps:
            result = measure(side, args.steps, args.warmup)
            steps[side] += result["ms"]
            capability[side] = result["capability"]
        print(f"round {round_}/{args.rounds} done", flush=True)
    repros = time_repros(args.sides, args.rounds) if args.repro else None
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    summarise(steps, capability)
    if repros:
        first = args.sides[0]
        for side, seconds in repros.items():
            ratio = statistics.median(seconds) / statistics.median(repros[first])
            listed = ", ".join(f"{s:.0f}" for s in seconds)
            print(f"{side:>9}: dvc repro -f {' '.join(REPRO_STAGES)}: {listed} s, {ratio:.2f}x {first}")


def summarise(steps, capability):
    first = next(iter(steps))
    for side, ms in steps.items():
        q1, median, q3 = statistics.quantiles(ms, n=4)
        ratio = median / statistics.median(steps[first])
        print(
            f"{side:>9} ({capability[side]}): {median:.2f} ms/step (quartiles {q1:.2f}-{q3:.2f}, "
            f"n={len(ms)}), {ratio:.2f}x {first}"
        )


# The lesson's training and evaluation: what a user's training experiment reruns first.
REPRO_STAGES = ("train", "evaluate")


def time_repros(sides, rounds):
    """Seconds of `dvc repro -f train evaluate` per setting, each in its own clone of this
    repository's HEAD (so no result here is touched), the settings in turn round by round."""
    root = Path(__file__).resolve().parents[2]
    seconds = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="pin-cost-") as scratch:
        clones = {}
        for side in sides:
            clones[side] = Path(scratch) / side
            subprocess.run(["git", "clone", "-q", str(root), str(clones[side])], check=True)
        for round_ in range(1, rounds + 1):
            for side in sides:
                env = {**environment(side), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
                start = time.perf_counter()
                out = subprocess.run(
                    ["dvc", "repro", "-f", *REPRO_STAGES],
                    cwd=clones[side],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                if out.returncode:
                    sys.exit(f"error: dvc repro failed under {side}: {out.stderr.strip().splitlines()[-1]}")
                seconds[side].append(time.perf_counter() - start)
                print(f"repro round {round_}/{rounds}, {side}: {seconds[side][-1]:.0f} s", flush=True)
    return seconds


if __name__ == "__main__":
    main()

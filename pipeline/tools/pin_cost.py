"""What a choice of CPU numerics costs: `python -m pipeline.tools.pin_cost` times the lesson's
training step under two or more settings side by side, `default` and `portable` (the modes of
pipeline/infra/numerics.py) and `unpinned` (the CPU's own choice of kernels).

    python -m pipeline.tools.pin_cost                          # default against portable
    python -m pipeline.tools.pin_cost --sides default unpinned # what the pin itself costs

A setting is fixed once per process, so each measurement is a fresh process; the settings take turns
round by round, so load that comes and goes falls on all alike. It prints each one's median
milliseconds per step with its quartiles, and each against the first. A tool, not a stage:
timings are not results.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

from pipeline.infra import numerics

SIDES = (*numerics.MODES, "unpinned")
# One process: train `steps` steps of the params.yaml model on one thread and print its capability
# and the duration of every step after the first `warmup`.
CHILD = """
import json, sys, time
import pipeline  # first: the pin of the mode asked for (or, with PIPELINE_UNPINNED_NUMERICS=1, none)
import numpy as np
import torch
from pipeline.core.training import train_model
from pipeline.core.params import load_params
from pipeline.tools.benchmark.workload import training_rows, with_steps

steps, warmup = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(1)
params = with_steps(load_params(), steps)
stamps = []
on_step = lambda *_: stamps.append(time.perf_counter())
train_model(params.model, params.train, 0, training_rows(params, steps), on_step=on_step)
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
    parser.add_argument("--sides", nargs="+", choices=SIDES, default=["default", "portable"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=120, help="training steps per process")
    parser.add_argument("--warmup", type=int, default=20, help="steps dropped at the start")
    args = parser.parse_args()
    if len(set(args.sides)) < 2:
        parser.error("name at least two different settings to compare")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sides = {side: [] for side in args.sides}
    capability = {}
    for round_ in range(1, args.rounds + 1):
        for side in sides:
            result = measure(side, args.steps, args.warmup)
            sides[side] += result["ms"]
            capability[side] = result["capability"]
        print(f"round {round_}/{args.rounds} done", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    first = args.sides[0]
    for side, ms in sides.items():
        q1, median, q3 = statistics.quantiles(ms, n=4)
        ratio = median / statistics.median(sides[first])
        print(
            f"{side:>9} ({capability[side]}): {median:.2f} ms/step (quartiles {q1:.2f}-{q3:.2f}, "
            f"n={len(ms)}), {ratio:.2f}x {first}"
        )


if __name__ == "__main__":
    main()

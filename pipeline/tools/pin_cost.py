"""What the pinned CPU numerics cost: `python -m pipeline.tools.pin_cost` times the lesson's training step
with the kernels pinned at AVX2 (pipeline/infra/numerics.py) and with the CPU's own choice, side by side.

The capability is fixed once per process, so each measurement is a fresh process; pinned and
native processes alternate round by round, so load that comes and goes falls on both alike. It
prints each side's median milliseconds per step, their spread, and the ratio native / pinned
(above 1: the pin is faster). A tool, not a stage: timings are not results.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

from pipeline.infra import numerics

# One process: train `steps` steps of the params.yaml model on one thread and print its capability
# and the duration of every step after the first `warmup`.
CHILD = """
import json, sys, time
import pipeline  # first: the pin (or, with PIPELINE_UNPINNED_NUMERICS=1, its absence)
import numpy as np
import torch
from pipeline.core.training import train_model
from pipeline.infra.params import load_params
from pipeline.tools.benchmark.workload import training_rows, with_steps

steps, warmup = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(1)
params = with_steps(load_params(), steps)
stamps = []
train_model(params, 0, training_rows(params, steps), on_step=lambda *_: stamps.append(time.perf_counter()))
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(),
                  "ms": [1000 * d for d in np.diff(stamps)[warmup:].tolist()]}))
"""


def measure(pinned, steps, warmup):
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED}
    env[numerics.UNPINNED_ENV] = "0" if pinned else "1"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(steps), str(warmup)], env=env, capture_output=True, text=True
    )
    if out.returncode:
        sys.exit(f"error: the timing process failed: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=120, help="training steps per process")
    parser.add_argument("--warmup", type=int, default=20, help="steps dropped at the start")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sides = {"pinned": [], "native": []}
    capability = {}
    for round_ in range(1, args.rounds + 1):
        for side in sides:
            result = measure(side == "pinned", args.steps, args.warmup)
            sides[side] += result["ms"]
            capability[side] = result["capability"]
        print(f"round {round_}/{args.rounds} done", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for side, ms in sides.items():
        q1, median, q3 = statistics.quantiles(ms, n=4)
        print(
            f"{side:>7} ({capability[side]}): {median:.2f} ms/step (quartiles {q1:.2f}-{q3:.2f}, n={len(ms)})"
        )
    ratio = statistics.median(sides["native"]) / statistics.median(sides["pinned"])
    print(f"native / pinned: {ratio:.2f} (above 1: the pinned step is faster)")


if __name__ == "__main__":
    main()

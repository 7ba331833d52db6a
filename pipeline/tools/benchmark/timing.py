"""How implementations are timed against each other: in turn, round by round, with the spread; and
what timings depend on besides the code: the CPU, the kernels ATen chose, the numerics mode, and
other work's load."""

import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

from pipeline.numerics import pin


def round_robin(names, rounds):
    """The order to run `names` in: `rounds` rounds of each name once, every other round reversed.
    Load from other work comes and goes within seconds; taking turns spreads it over all of them
    alike, and reversing stops going first or last from favouring any one."""
    names = list(names)
    for number in range(rounds):
        yield from names if number % 2 == 0 else reversed(names)


def interleaved(runs, rounds):
    """Seconds of every timed call of each of `runs` ({name: fn}), taken in turn (round_robin),
    after one untimed warm-up call of each; and each fn's result of that warm-up call."""
    results = {name: fn() for name, fn in runs.items()}
    seconds = {name: [] for name in runs}
    for name in round_robin(runs, rounds):
        start = time.perf_counter()
        runs[name]()
        seconds[name].append(time.perf_counter() - start)
    return seconds, results


def spread(values):
    """(first quartile, median, third quartile) of `values`. Inclusive quartiles stay within the
    values measured, which matters for the few rounds of a quick run; one value is its own spread."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def spread_ms(values):
    """`spread` of durations in seconds, as {"median_ms", "q1_ms", "q3_ms"}."""
    q1, median, q3 = spread(values)
    return {"median_ms": 1e3 * median, "q1_ms": 1e3 * q1, "q3_ms": 1e3 * q3}


# ------------------------------------------------------------------------------- the machine

# Above this 1-minute load average per core, other work already competes for the cores at the start.
BUSY_LOAD_PER_CORE = 0.5


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cores():
    return os.cpu_count() or 1


def load_average():
    """The 1-minute load average: processes running or waiting for a core, averaged."""
    return os.getloadavg()[0]


def check_load_at_start():
    """The load average now, with a warning when other work already keeps the cores busy."""
    load = load_average()
    if load / cores() > BUSY_LOAD_PER_CORE:
        print(
            f"WARNING busy machine: timings are not comparable (load average {load:.2f} on {cores()} "
            f"cores, above {BUSY_LOAD_PER_CORE} per core)",
            file=sys.stderr,
            flush=True,
        )
    return load


def describe(load_before, quick):
    """The machine, the software and the load of this run, as flat metrics."""
    load_after = load_average()
    return {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "cpu": cpu_name(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),  # the SIMD kernels ATen runs
        "numerics_mode": pin.mode(),  # MKL's branch: the matrix products' speed depends on it
        "cpu_count": cores(),
        "threads": torch.get_num_threads(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "load_average_per_core_before": load_before / cores(),
        "load_average_per_core_after": load_after / cores(),
        "busy_load_per_core": BUSY_LOAD_PER_CORE,
        "busy_machine": load_before / cores() > BUSY_LOAD_PER_CORE,
        "quick": quick,
    }

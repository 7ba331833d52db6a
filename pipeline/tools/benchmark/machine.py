"""What timings depend on besides the code: the CPU, the kernels ATen chose, and other work's load."""

import os
import platform
import sys
from pathlib import Path

import torch

from pipeline.infra import numerics

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
        "numerics_mode": numerics.mode(),  # MKL's branch: the matrix products' speed depends on it
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

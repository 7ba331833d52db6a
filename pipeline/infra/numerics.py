"""The CPU code paths every result is computed with, fixed before torch is first imported.

PyTorch (ATen), MKL and oneDNN each pick their kernels by the CPU's instruction set at run time,
and kernels for different instruction sets round differently: the same code and parameters gave
other bytes on a CPU with AVX-512 than on one with only AVX2. Capping all three at AVX2, which
every x86-64 CPU of the last decade has, gives the same bytes on any of them. On a CPU without
AVX2 (or not x86-64) nothing is pinned and its numbers may differ. GPU runs are outside this
promise: CUDA kernels round differently again.

`pipeline/__init__.py` calls `pin()` so that every `python -m pipeline.…` process, and every
process importing the package, is pinned before torch loads. The values override the outer
environment on purpose: a stray `ATEN_CPU_CAPABILITY=avx512` must not change a result.
"""

import os
import platform
import sys
import warnings

# One capability for all three libraries, in each one's own spelling.
PINNED = {
    "ATEN_CPU_CAPABILITY": "avx2",  # PyTorch's own vectorised kernels (softmax, elementwise ops)
    "MKL_CBWR": "AVX2",  # MKL's conditional numerical reproducibility: matrix products
    "ONEDNN_MAX_CPU_ISA": "AVX2",  # oneDNN (mkldnn) kernels
}
# Set to 1 only to measure what the pin changes (the pin's own test does): results then follow
# whatever CPU runs them.
UNPINNED_ENV = "PIPELINE_UNPINNED_NUMERICS"


def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The instruction-set flags of this CPU, or an empty set where they cannot be read."""
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def has_avx2(flags=None, machine=None):
    machine = (machine or platform.machine()).lower()
    flags = cpu_flags() if flags is None else flags
    return machine in {"x86_64", "amd64"} and {"avx2", "fma"} <= flags


def pin():
    """Cap ATen, MKL and oneDNN at AVX2 where the CPU has it; returns the capability pinned or None."""
    if os.environ.get(UNPINNED_ENV) == "1":
        return None
    if "torch" in sys.modules:  # ATen chooses at its first kernel call, so this may still hold
        warnings.warn("torch was imported before pipeline: import it first for pinned numerics", stacklevel=3)
    if not has_avx2():
        return None
    os.environ.update(PINNED)
    return "avx2"


def describe():
    """What the results are computed with, for the report: only what determines the bytes."""
    import torch

    return {
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "pinned": {k: os.environ.get(k) for k in PINNED},
    }

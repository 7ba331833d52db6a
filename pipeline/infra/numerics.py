"""The CPU code paths every result is computed with, fixed before torch is first imported.

PyTorch (ATen), MKL and oneDNN each pick their kernels by the CPU at run time, and kernels for
different instruction sets round differently. Capping all three at AVX2 makes every x86-64 CPU of
one vendor compute alike (an Intel CPU with AVX-512 computes as one without). It does not make an
AMD and an Intel CPU compute alike: MKL honours its AVX2 branch on Intel CPUs only and runs its
own choice (AUTO) on others, so the matrix products, and with them every trained weight, differ in
the last bits between vendors. The numerics fingerprint (pipeline/probes/fingerprint.py,
`python -m pipeline.tools.numerics`) says which operations two machines compute alike.

Two modes, chosen by the environment variable PIPELINE_NUMERICS:
- `default`: the above; the committed results were made with it.
- `portable`: MKL's COMPATIBLE branch, which MKL documents as the same code on Intel and compatible
  CPUs, at about 1.6 times the cost of a training step; an opt-in to compare machines of both
  vendors (`PIPELINE_NUMERICS=portable make repro`), not the committed results' numerics.
On a CPU without AVX2 (or not x86-64) nothing is pinned. GPU runs are outside both modes.

`pipeline/__init__.py` calls `pin()` so that every `python -m pipeline.…` process, and every
process importing the package, is pinned before torch loads. The values override the outer
environment on purpose: a stray `ATEN_CPU_CAPABILITY=avx512` must not change a result.
"""

import os
import platform
import sys
import warnings

# Each mode's settings, each library in its own spelling.
MODES = {
    "default": {
        "ATEN_CPU_CAPABILITY": "avx2",  # PyTorch's own vectorised kernels (softmax, elementwise ops)
        "MKL_CBWR": "AVX2",  # MKL's conditional numerical reproducibility: matrix products (Intel only)
        "ONEDNN_MAX_CPU_ISA": "AVX2",  # oneDNN (mkldnn) kernels
    },
    "portable": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_CBWR": "COMPATIBLE",  # the branch MKL documents as the same on Intel and compatible CPUs
        "ONEDNN_MAX_CPU_ISA": "AVX2",
    },
}
PINNED = MODES["default"]
MODE_ENV = "PIPELINE_NUMERICS"
# Set to 1 only to measure what the pin changes (the pin's own test does): results then follow
# whatever CPU runs them.
UNPINNED_ENV = "PIPELINE_UNPINNED_NUMERICS"


def mode():
    """The numerics mode this process runs with (PIPELINE_NUMERICS, `default` when unset)."""
    chosen = os.environ.get(MODE_ENV) or "default"
    if chosen not in MODES:  # read at import, before any stage can report errors its own way
        sys.exit(f"error: {MODE_ENV} = {chosen!r} is invalid: expected one of {', '.join(MODES)}")
    return chosen


def cpu_identity(cpuinfo="/proc/cpuinfo"):
    """{vendor, model} of this machine's CPU, as /proc/cpuinfo names them (or the platform's)."""
    found = {}
    try:
        with open(cpuinfo) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("vendor_id", "model name"):
                    found.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return {"vendor": found.get("vendor_id", platform.machine()), "model": found.get("model name", "?")}


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
    """Set this process's mode's code paths where the CPU has AVX2; returns the mode or None."""
    if os.environ.get(UNPINNED_ENV) == "1":
        return None
    chosen = mode()
    if "torch" in sys.modules:  # ATen chooses at its first kernel call, so this may still hold
        warnings.warn("torch was imported before pipeline: import it first for pinned numerics", stacklevel=3)
    if not has_avx2():
        return None
    os.environ.update(MODES[chosen])
    return chosen

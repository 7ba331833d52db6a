"""The CPU code paths every result is computed with, fixed before torch is first imported.

PyTorch (ATen), MKL and oneDNN each pick their kernels by the CPU at run time, and kernels for
different instruction sets round differently. Capping ATen and oneDNN at AVX2 makes every x86-64
CPU run their AVX2 kernels (an Intel CPU with AVX-512 computes as one without). MKL's matrix
products need more: MKL honours a requested branch such as AVX2 on Intel CPUs only and runs its own
choice (AUTO) on others, so in its fast branches an AMD and an Intel CPU round the products, and with
them every trained weight, differently in the last bits. MKL's COMPATIBLE branch is one code on the
CPUs of both vendors. NumPy, which the probes and the study's diagnosis compute with, picks its
kernels by the CPU too: its OpenBLAS (the matrix products, least squares) runs AVX-512 kernels where
the CPU has them, and its own vectorised functions (exp, log) round otherwise at AVX-512; both are
capped at AVX2 (OpenBLAS's Haswell kernels, NumPy's X86_V3). Adam's square root, the other
operation that followed MKL's branch, is computed in ATen's fused kernel
(pipeline.core.loop.FlatAdam), which rounds it correctly everywhere. The numerics fingerprint
(pipeline/numerics/fingerprint.py, `python -m pipeline.numerics.compare`) says which operations two
machines compute alike.

Two modes, chosen by the environment variable PIPELINE_NUMERICS:
- `portable` (the default, and the committed results' numerics): MKL's COMPATIBLE branch. Every
  x86-64 CPU with AVX2, AMD or Intel, computes every operation of the fingerprint alike, so the same
  code and parameters give the same bytes there.
- `fast`: MKL's AVX2 branch (on Intel; MKL's own choice elsewhere), about 1.3-1.5 times faster a
  matrix product, with bytes of one CPU vendor: an opt-in for quick experiments
  (`PIPELINE_NUMERICS=fast dvc exp run ...`), whose results the numerics stage marks as another
  record and whose statistics, not bytes, match the committed ones.
On a CPU without AVX2 (or not x86-64) nothing is pinned: results there are a fresh draw, checked by
their statistics. GPU runs are outside both modes.

`pipeline/__init__.py` calls `pin()` so that every `python -m pipeline.…` process, and every
process importing the package, is pinned before torch loads. The values override the outer
environment on purpose: a stray `ATEN_CPU_CAPABILITY=avx512` must not change a result.
"""

import os
import platform
import sys
import warnings

# NumPy at AVX2 on every CPU, in both modes: OpenBLAS's kernels for Haswell (AVX2), and NumPy's own
# dispatch without its AVX-512 targets (NumPy 2.4's names; one the CPU lacks is ignored). Read when
# NumPy is first imported, as ATen's are when torch is.
NUMPY_AT_AVX2 = {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}

# Each mode's settings, each library in its own spelling; the first is the committed results' mode.
MODES = {
    "portable": {
        "ATEN_CPU_CAPABILITY": "avx2",  # PyTorch's own vectorised kernels (softmax, elementwise ops)
        "MKL_CBWR": "COMPATIBLE",  # MKL's conditional numerical reproducibility: one branch on every vendor
        "ONEDNN_MAX_CPU_ISA": "AVX2",  # oneDNN (mkldnn) kernels
        **NUMPY_AT_AVX2,
    },
    "fast": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_CBWR": "AVX2",  # MKL's AVX2 branch on Intel CPUs; on others MKL runs its own choice
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        **NUMPY_AT_AVX2,
    },
}
COMMITTED = "portable"
PINNED = MODES[COMMITTED]  # the variables every mode sets
MODE_ENV = "PIPELINE_NUMERICS"
# Set to 1 only to measure what the pin changes (the pin's own test does): results then follow
# whatever CPU runs them.
UNPINNED_ENV = "PIPELINE_UNPINNED_NUMERICS"


def mode():
    """The numerics mode this process runs with (PIPELINE_NUMERICS, the committed mode when unset)."""
    chosen = os.environ.get(MODE_ENV) or COMMITTED
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
    early = [name for name in ("torch", "numpy") if name in sys.modules]
    if early:  # ATen chooses at its first kernel call, so its part may still hold; NumPy's cannot
        warnings.warn(
            f"{' and '.join(early)} imported before pipeline: import pipeline first for pinned numerics",
            stacklevel=3,
        )
    if not has_avx2():
        return None
    os.environ.update(MODES[chosen])
    return chosen


def pinned_environment():
    """The variables that pin a process started elsewhere as this one is pinned (a Ray worker of the
    search, which may import NumPy before any module of the project runs): this process's mode, and
    its settings where this process applied them. A cluster's machines are taken to compute alike
    (x86-64 with AVX2, as its driver); on others nothing is pinned, as pin() does there."""
    if os.environ.get(UNPINNED_ENV) == "1":
        return {UNPINNED_ENV: "1"}
    chosen = mode()
    return {MODE_ENV: chosen, **(MODES[chosen] if has_avx2() else {})}

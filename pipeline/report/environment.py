"""The report's environment lines: what determines the bytes of every result."""

import platform
from importlib.metadata import version  # numpy and dvc are requirements: always installed

from pipeline.infra.numerics import MACHINES


def environment_lines(numerics):
    """Versions, the numerics of the results (the numerics stage's record, not the machine rendering
    the report), the threads; nothing of the moment (times, dates, host), which would change bytes."""
    mode = numerics["in_use"]
    used, cpu, machines = numerics["modes"][mode], numerics["cpu"], MACHINES.get(mode, "the one named above")
    settings = ", ".join(f"{k}={v}" for k, v in used["settings"].items())
    return [
        f"- python {'.'.join(platform.python_version_tuple()[:2])}, torch {numerics['torch']}, "
        f"numpy {version('numpy')}, dvc {version('dvc')}",
        f"- numerics: mode `{mode}` ({settings}; CPU kernels {used['capability']}), fingerprint "
        f"`{used['fingerprint']}`, recorded on {cpu['model']} ({cpu['vendor']}). `make repro` gives "
        "these results to the byte where `python -m pipeline.tools.numerics` agrees with this "
        "fingerprint; elsewhere they differ in the last bits, and the claims' verdict is what must hold",
        f"- machines that give these bytes: {machines}",
        "- frozen stages, not rerun by `dvc repro`: the search (metrics/search.json) and the benchmark "
        "(metrics/benchmark.json) were made on an AMD EPYC in MKL's AVX2 branch (mode `fast`) with the "
        "earlier Adam (torch.optim.Adam, whose square root follows MKL's branch)",
        "- threads: each training seed and the evaluation run on one thread with deterministic "
        "algorithms, seeds side by side in processes; each stage's wall time: `runs/<stage>.json`",
    ]

"""The report's environment lines: what determines the bytes of every result."""

import platform
from importlib.metadata import PackageNotFoundError, version

from pipeline.infra import numerics


def environment_lines():
    """Versions, the CPU code paths, the thread policy. Nothing of the machine or the moment (wall
    times, dates, host, commit): those would change the bytes of the report without changing a
    result; each stage's wall time is in runs/<stage>.json."""
    capability = numerics.describe()["cpu_capability"]
    return [
        f"- python {'.'.join(platform.python_version_tuple()[:2])}, torch {package_version('torch')}, "
        f"numpy {package_version('numpy')}, dvc {package_version('dvc')}",
        f"- CPU kernels: {capability} (ATen, MKL and oneDNN capped at AVX2 on every x86-64 CPU that has "
        "it, so results are the same bytes on any of them; see pipeline/infra/numerics.py)",
        "- threads: each training seed and the evaluation run on one thread with deterministic "
        "algorithms; seeds train side by side in separate processes",
        "- wall time of each stage's last run on this machine: `runs/<stage>.json` (not tracked)",
    ]


def package_version(package):
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"

"""The report's environment lines: what determines the bytes of every result."""

import platform
from importlib.metadata import PackageNotFoundError, version


def environment_lines(numerics):
    """Versions, the numerics the results were computed with (metrics/numerics.json, the record of
    the numerics stage, not a reading of the machine rendering the report), the thread policy.
    Nothing of the moment (wall times, dates, host, commit): those would change the bytes of the
    report without changing a result; each stage's wall time is in runs/<stage>.json."""
    mode = numerics["in_use"]
    used, cpu = numerics["modes"][mode], numerics["cpu"]
    settings = ", ".join(f"{k}={v}" for k, v in used["settings"].items())
    return [
        f"- python {'.'.join(platform.python_version_tuple()[:2])}, torch {numerics['torch']}, "
        f"numpy {package_version('numpy')}, dvc {package_version('dvc')}",
        f"- numerics: mode `{mode}` ({settings}; CPU kernels {used['capability']}), fingerprint "
        f"`{used['fingerprint']}`, recorded on {cpu['model']} ({cpu['vendor']}). `make repro` gives "
        "these results to the byte where `python -m pipeline.tools.numerics` agrees with this "
        "fingerprint; elsewhere they differ in the last bits, and the claims' verdict is what must hold",
        "- threads: each training seed and the evaluation run on one thread with deterministic "
        "algorithms; seeds train side by side in separate processes",
        "- wall time of each stage's last run on this machine: `runs/<stage>.json` (not tracked)",
    ]


def package_version(package):
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"

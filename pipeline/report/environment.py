"""The report's environment: what determines the bytes of every result, for the templates to word."""

import platform
from importlib.metadata import version  # numpy and dvc are requirements: always installed

from pipeline.infra.numerics import MACHINES


def environment(numerics):
    """Versions, the numerics of the results (the numerics stage's record, not the machine rendering
    the report); nothing of the moment (times, dates, host), which would change bytes. `machines`: the
    mode's promise in English (words.yaml has it per language), None for a mode that makes none."""
    mode = numerics["in_use"]
    used = numerics["modes"][mode]
    return {
        "versions": f"python {'.'.join(platform.python_version_tuple()[:2])}, torch {numerics['torch']}, "
        f"numpy {version('numpy')}, dvc {version('dvc')}",
        "mode": mode,
        "settings": ", ".join(f"{k}={v}" for k, v in used["settings"].items()),
        "capability": used["capability"],
        "fingerprint": used["fingerprint"],
        "cpu": numerics["cpu"],
        "machines": MACHINES.get(mode),
    }

"""The report's environment: what determines the bytes of every result, for the templates to word."""

import platform
from importlib.metadata import version  # numpy and dvc are requirements: always installed


def environment(numerics):
    """Versions, the numerics of the results (the numerics stage's record, not the machine rendering
    the report); nothing of the moment (times, dates, host), which would change bytes (words.yaml says, per
    language, which machines give each mode's bytes)."""
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
    }

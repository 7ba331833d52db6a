"""The project's own errors, and the wrapper that turns them into one line and an exit status."""

import functools
import signal
import sys


class PipelineError(Exception):
    """A problem the user can fix (bad parameter, missing or corrupt file): one line, no traceback."""


class ConfigError(PipelineError):
    """An invalid value in params.yaml."""


class DataError(PipelineError):
    """A dataset or checkpoint that is missing, corrupt, or does not fit the rest."""


class TrainingDiverged(PipelineError):
    """The loss became NaN, infinite, or ran away."""


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def stage_entry(main):
    """Run a stage's main(): project errors print one line to stderr and exit 2; Ctrl-C exits 130."""

    @functools.wraps(main)
    def wrapper(*args, **kwargs):
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C does
        try:
            return main(*args, **kwargs)
        except PipelineError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt:
            print("interrupted: no partial outputs were written", file=sys.stderr)
            sys.exit(130)

    return wrapper

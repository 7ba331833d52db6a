"""The project's own errors: problems a user can fix, each reported as one line (pipeline/infra/entry.py)."""


class PipelineError(Exception):
    """A problem the user can fix (bad parameter, missing or corrupt file): one line, no traceback."""


class ConfigError(PipelineError):
    """An invalid value in params.yaml."""


class DataError(PipelineError):
    """A dataset or checkpoint that is missing, corrupt, or does not fit the rest."""


class TrainingDiverged(PipelineError):
    """The loss became NaN, infinite, or ran away."""

"""Where torch computes: the device a parameter asks for, checked against what this machine has."""

import torch

from pipeline.infra.errors import ConfigError


def resolve_device(name):
    """`auto` is cuda when available, else cpu; `cuda` without a CUDA device is a clear error."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device = 'cuda' but no CUDA device is available: use auto or cpu")
    return name

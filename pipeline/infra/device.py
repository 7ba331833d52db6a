"""Where torch computes: the device a parameter asks for, checked against what this machine has, and
the one set-up every worker process runs before it computes."""

import torch

from pipeline.infra.errors import ConfigError


def resolve_device(name):
    """`auto` is cuda when available, else cpu; `cuda` without a CUDA device is a clear error."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device = 'cuda' but no CUDA device is available: use auto or cpu")
    return name


def set_up_worker(device_name):
    """One thread (a worker's bytes then do not depend on how many run beside it), deterministic
    kernels, and the device `device_name` resolved; returns the device."""
    torch.set_num_threads(1)
    # ATen's own switch, which torch.use_deterministic_algorithms sets after it imports
    # torch._inductor to set torch.compile's switch too: 3 s a process, for a compiler the pipeline
    # never runs. The kernels see the same flag either way.
    torch._C._set_deterministic_algorithms(True)
    return resolve_device(device_name)

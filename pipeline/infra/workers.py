"""Where the work runs: the device, how many processes train seeds, and the set-up of every worker
(the process pool itself: pipeline/infra/pool.py)."""

import os

import torch

from pipeline.infra.errors import ConfigError


def seed_workers(jobs):
    """Workers for one process per seed (the speed benchmark's layout): up to two processes per core,
    in as few rounds as that allows, each round as full as the others. Five seeds on two cores then
    run 3 and 2 at once (2.5x one seed) rather than 4 and a lone 1 (3x)."""
    most = 2 * (os.cpu_count() or 1)
    rounds = max(1, -(-len(jobs) // most))
    return max(1, -(-len(jobs) // rounds))


def seed_processes(device_name="cpu"):
    """Processes for training seeds together: on a CPU one per core, each on one thread, the seeds
    split between them (pipeline.core.seed_axis.seed_groups); a seed's bytes do not depend on its
    group. On a GPU one process trains every seed, so that the device runs one step for all."""
    return 1 if resolve_device(device_name) != "cpu" else os.cpu_count() or 1


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
    # what cuBLAS needs to compute alike twice on one GPU (read when CUDA starts; nothing on a CPU)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    # ATen's own switch, which torch.use_deterministic_algorithms sets after it imports
    # torch._inductor to set torch.compile's switch too: 3 s a process, for a compiler the pipeline
    # never runs. The kernels see the same flag either way.
    torch._C._set_deterministic_algorithms(True)
    return resolve_device(device_name)

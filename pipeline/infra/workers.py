"""Where and how the work runs: the one process pool (jobs side by side in worker processes, all
stopped at once on error), and the device and set-up of every worker."""

import multiprocessing
import os
import signal
import sys

import torch

from pipeline.infra.errors import ConfigError

# Forked workers start with the parent's imports, where a spawned one pays torch's import again (about
# 2.5 s a worker on these machines). Each worker computes on one thread (set_up_worker), as
# DataLoader's forked workers do. macOS and Windows do not fork safely: they spawn. Either way a
# worker computes the same bytes (tests/test_train.py holds the stage's bytes).
START = "fork" if sys.platform == "linux" else "spawn"


def worker_signals():
    """Pool workers leave Ctrl-C to the parent, which terminates them all at once, and die quietly on
    that SIGTERM (a forked worker would otherwise keep the stage's handler, which raises)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


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


def run_jobs(function, jobs, workers=None, on_result=None):
    """`function(*args)` for each args of `jobs`, `workers` at a time (default: one per core) in
    worker processes; results in the order of `jobs`. One worker runs them in this process.
    `on_result(index, result)` sees each result as soon as it and those before it are done (to save
    long work as it goes)."""
    workers = workers or max(1, min(len(jobs), os.cpu_count() or 1))
    on_result = on_result or (lambda index, result: None)
    if workers == 1:
        results = []
        for index, args in enumerate(jobs):
            results.append(function(*args))
            on_result(index, results[-1])
        return results
    pool = multiprocessing.get_context(START).Pool(workers, initializer=worker_signals)
    try:
        handles = [pool.apply_async(function, args) for args in jobs]
        results = []
        for index, handle in enumerate(handles):
            results.append(handle.get())
            on_result(index, results[-1])
        pool.close()
        return results
    finally:
        pool.terminate()  # on error or interrupt, stop every worker now rather than wait
        pool.join()


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

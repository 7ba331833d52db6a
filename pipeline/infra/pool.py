"""The one process pool: jobs run side by side in spawned processes, all stopped at once on error."""

import multiprocessing
import os
import signal


def ignore_sigint():
    """Pool workers leave Ctrl-C to the parent, which terminates them all at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def seed_workers(jobs):
    """Workers for training seeds: one process per seed, up to twice the core count. Three seeds
    on two cores then take about 1.6x one seed instead of 2x (two rounds), and each seed trains on
    one thread, so its bytes do not depend on how many run beside it."""
    return min(len(jobs), 2 * (os.cpu_count() or 1))


def run_jobs(function, jobs, workers=None, on_result=None):
    """`function(*args)` for each args of `jobs`, `workers` at a time (default: one per core) in
    spawned processes; results in the order of `jobs`. One worker runs them in this process.
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
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=ignore_sigint)
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

"""The one process pool: jobs side by side in worker processes, all stopped at once on error. It
imports no torch, so that a stage that computes nothing with it (the report) starts without paying
torch's import."""

import multiprocessing
import os
import signal
import sys

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

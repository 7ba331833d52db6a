"""The process pool's counterpart beyond one machine: jobs as Ray tasks, on a Ray started on this
machine (as many CPUs as it has) or on a cluster joined at an address. This module alone imports
Ray, and only the length study's search imports it, so no other stage pays for Ray.

Each job is one task of one CPU. Where the node or the worker under a task dies, Ray runs it again
on another (RETRIES times at most); an exception the job itself raises is its result, not retried.
Results come back to the driver, the one process that writes them, as each task finishes
(`on_result`), and in the jobs' order at the end. Ray's core tasks rather than Ray Tune: the search
keeps its own rows, results file and resume, and asks of Ray only where each job runs.
"""

import contextlib
import os
import signal
import socket
import sys
from collections import Counter

import ray

from pipeline.infra.errors import ConfigError

RETRIES = 3  # a task's runs after the first where its node or worker died under it
REACH_SECONDS = 5.0  # how long a cluster's address may take to answer


def check_reachable(address):
    """One clear error unless a Ray head answers at `address` (host:port, or ray://host:port) and
    accepts this process: nothing answering and a head that refuses the token are told apart."""
    if address == "auto":
        return  # this machine's own cluster, found by Ray itself
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=REACH_SECONDS):
            pass
    except (OSError, ValueError):
        raise ConfigError(
            f"no Ray cluster answers at {address}: start one with `ray start --head` there, or leave out "
            "--address (and RAY_ADDRESS) to run on a Ray of this machine"
        ) from None
    if not address.startswith("ray://"):
        check_token(address)


def check_token(address):
    """A head that answers but refuses this process's token (Ray's token authentication, on by default
    for a head that `ray start` starts since Ray 2.59) as one line saying what every machine needs.
    ray.init would retry for a while and then report only that it failed to connect; the GCS
    client, which ray.init also opens, says at once why."""
    try:
        with native_stderr_silenced():  # the GCS client's own log line of the refusal: ours says it
            ray._raylet.GcsClient(address=address)
    except ray.exceptions.AuthenticationError:
        raise ConfigError(
            f"the Ray cluster at {address} refused this process's token: set RAY_AUTH_MODE=token and "
            "RAY_AUTH_TOKEN to the head's token (`ray get-auth-token` on the head prints it), on this "
            "machine and on every machine that joins"
        ) from None


@contextlib.contextmanager
def native_stderr_silenced():
    """File descriptor 2 to /dev/null for the block: what Ray's C++ core logs there, Python's
    sys.stderr untouched."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def ray_session(address=None, env=None, ship=()):
    """Ray for the block: joined at `address`, or started on this machine for this run alone (a
    cluster already running here is joined only when named). `env`: variables every worker starts
    with (before it imports anything); `ship`: the local packages every worker imports, sent with
    the job (Ray's runtime_env), so that a cluster's machines need the same venv only."""
    if address:
        check_reachable(address)
    runtime_env = {"env_vars": dict(env or {}), "py_modules": [str(p) for p in ship]}
    own = signal.getsignal(signal.SIGTERM)
    try:
        # "local": a Ray of this run's own, never one that happens to run on this machine
        ray.init(
            address=address or "local",
            runtime_env=runtime_env,
            include_dashboard=False,
            logging_level="WARNING",
        )
    except ConnectionError as err:
        raise ConfigError(f"no Ray cluster at {address}: {err}") from None
    signal.signal(signal.SIGTERM, own)  # Ray's driver exits on SIGTERM; the stage's own way is kept
    try:
        yield run_tasks
    finally:
        ray.shutdown()


def shared_once(jobs):
    """Each argument that several jobs hand on (the same object: the test sets, say) put in Ray's
    object store once, rather than sent again with every task."""
    counts = Counter(id(arg) for job in jobs for arg in job)
    refs = {}
    for job in jobs:
        for arg in job:
            if counts[id(arg)] > 1 and id(arg) not in refs:
                refs[id(arg)] = ray.put(arg)
    return [tuple(refs.get(id(arg), arg) for arg in job) for job in jobs]


def run_tasks(function, jobs, on_result=None):
    """`function(*args)` for each args of `jobs`, each a Ray task; `on_result(index, result)` sees
    each result as its task finishes; returns the results in the order of `jobs`. A job that raises
    stops the run with its own exception."""
    on_result = on_result or (lambda index, result: None)
    remote = ray.remote(num_cpus=1, max_retries=RETRIES)(function)
    refs = [remote.remote(*args) for args in shared_once(jobs)]
    where = {ref: index for index, ref in enumerate(refs)}
    results, pending = [None] * len(refs), list(refs)
    # Stopped early (an error, an interrupt), the tasks still running end with the session: Ray stops
    # a job's tasks when its driver leaves (ray.shutdown), where cancelling one that is just then
    # finishing can abort the driver.
    while pending:
        (done,), pending = ray.wait(pending, num_returns=1)
        try:
            results[where[done]] = ray.get(done)
        except ray.exceptions.RayTaskError as err:
            raise err.as_instanceof_cause() from None
        on_result(where[done], results[where[done]])
    return results

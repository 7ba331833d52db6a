"""Every seed trained at once in one-thread processes, as train_all does, against one seed alone."""

import dataclasses
import math
import multiprocessing
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from pipeline.core import loop
from pipeline.core.data import synthetic_rows
from pipeline.infra.workers import seed_workers, set_up_worker
from pipeline.tools.benchmark.timing import round_robin, spread


def train_seed_timed(config, train, seed, data):
    """(wall seconds, CPU seconds) of one seed's training in this worker process."""
    set_up_worker("cpu")  # as train_one_seed
    start, cpu = time.perf_counter(), time.process_time()
    loop.train(config, train, [seed], data)
    return time.perf_counter() - start, time.process_time() - cpu


def warm_up_worker(barrier, config, train, data):
    barrier.wait()  # every worker holds one of these at once, so each one warms up
    return train_seed_timed(config, dataclasses.replace(train, steps=5), 0, data)


def time_seeds(config, train, seeds, workers, data):
    """Wall seconds to train `seeds` in `workers` spawned processes, one thread each, timed once
    every worker is up and has run a few steps (the training, not the start-up); the share of a core
    each seed's process got (CPU over wall seconds: below 1 when other work competes); and the mean
    CPU seconds per seed (the work itself, whatever the competition)."""
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(workers, mp_context=context) as pool:
        barrier = manager.Barrier(workers)
        every = [config] * workers, [train] * workers, [data] * workers
        list(pool.map(warm_up_worker, [barrier] * workers, *every))
        start = time.perf_counter()
        n = len(seeds)
        per_seed = list(pool.map(train_seed_timed, [config] * n, [train] * n, seeds, [data] * n))
        wall = time.perf_counter() - start
    cpu = [c for _, c in per_seed]
    return {
        "wall_s": wall,
        "cpu_share": sum(cpu) / sum(w for w, _ in per_seed),
        "cpu_s": statistics.fmean(cpu),
    }


def setups(seeds):
    """{name: (seeds, processes)}: one seed, train_all's processes, and one process per seed where
    there are fewer cores than seeds."""
    seeds = tuple(seeds)
    workers = seed_workers(seeds)  # as train_all: one process per seed, up to twice the cores
    found = {"one seed": (seeds[:1], 1), "train_all": (seeds, workers)}
    if workers < len(seeds):
        found["one process per seed"] = (seeds, len(seeds))
    return found


def time_setups(config, train, length, steps, rounds):
    """{setup: {measure: median over rounds}} and {setup: wall seconds of every round}, the setups
    taken in turn so that a passing load elsewhere hits every one."""
    short, data = dataclasses.replace(train, steps=steps), synthetic_rows(steps * train.batch_size, length)
    runs = {name: [] for name in setups(train.seeds)}
    for name in round_robin(runs, rounds):
        which, processes = setups(train.seeds)[name]
        runs[name].append(time_seeds(config, short, which, processes, data))
    medians = {
        name: {k: statistics.median(r[k] for r in results) for k in results[0]}
        for name, results in runs.items()
    }
    return medians, {name: [r["wall_s"] for r in results] for name, results in runs.items()}


def ratios(medians, layout):
    """The flat metrics of the setups' medians: wall seconds, their ratio to one seed, CPU shares."""
    seeds, workers = layout["train_all"]
    one, every = medians["one seed"], medians["train_all"]
    m = {"seeds_one_s": one["wall_s"], "seeds_all_s": every["wall_s"], "seeds_workers": workers}
    m["seeds_ratio"] = every["wall_s"] / one["wall_s"]
    m["seeds_ratio_ideal"] = len(seeds) / min(workers, os.cpu_count() or 1)  # the cores kept busy
    m["seeds_one_cpu_share"], m["seeds_all_cpu_share"] = one["cpu_share"], every["cpu_share"]
    m["seeds_one_cpu_s"], m["seeds_all_cpu_s_per_seed"] = one["cpu_s"], every["cpu_s"]
    # With a whole core per worker, train_all's wall time would be its rounds of seeds (ceil(3 / 2) = 2
    # on two cores) times one seed's CPU time as measured in parallel: an estimate of the ratio free of
    # other work's load (the measured ratio above is the one of record).
    rounds_of_seeds = math.ceil(len(seeds) / workers)
    m["seeds_ratio_estimated_without_other_load"] = rounds_of_seeds * every["cpu_s"] / one["cpu_s"]
    if "one process per seed" in medians:
        alone = medians["one process per seed"]["wall_s"]
        m["seeds_one_process_each_s"], m["seeds_one_process_each_ratio"] = alone, alone / one["wall_s"]
    return m


def table_of(medians, walls, layout):
    rows = []
    for name, (which, processes) in layout.items():
        q1, _, q3 = spread(walls[name])
        wall = medians[name]["wall_s"]
        rows.append(
            {"setup": name, "seeds": len(which), "processes": processes, "wall_s": wall,
             "ratio_to_one": wall / medians["one seed"]["wall_s"], "cpu_share": medians[name]["cpu_share"],
             "wall_q1_s": q1, "wall_q3_s": q3}
        )  # fmt: skip
    return pd.DataFrame(rows)


def measure(config, train, length, quick):
    """(metrics, table) of training every seed of `train` at once against one."""
    steps = 30 if quick else 200
    medians, walls = time_setups(config, train, length, steps, 1 if quick else 2)
    layout = setups(train.seeds)
    m = {"seeds_steps": steps, **ratios(medians, layout)}
    print(
        f"seeds: one {m['seeds_one_s']:.2f} s, {len(layout['train_all'][0])} in {m['seeds_workers']} "
        f"processes {m['seeds_all_s']:.2f} s ({m['seeds_ratio']:.2f}x)"
    )
    return m, table_of(medians, walls, layout)

"""What Ray costs the search, measured side by side in one run: the same small search (the first
`--rows` rows of the search's rows file, on the screen seeds, each cut to `--steps` steps, at the
study's real size and test sets) run on the project's process pool and on a Ray started on this
machine, each from an empty results file; their wall times, Ray's overhead per task, and whether the
two results files hold the same bytes. Then the whole search of the rows file, from an empty results
file, projected onto 1, 4 and 16 machines like this one: each of its tasks takes the measured time
of a task per training step, times its steps (the test's share scaled with them: an upper bound),
plus Ray's overhead, and the tasks are laid longest first onto the machines' cores.

    python -m pipeline.tools.search_spread --rows 2 --steps 4000
"""

import argparse
import heapq
import json
import os
import tempfile
import time
from pathlib import Path

from pipeline.study.load import load_params
from pipeline.study.search import load_rows, plan_search, run_search, with_seeds

ROOT = Path(__file__).resolve().parents[2]


def shortened(rows, steps):
    """The rows with every training cut to `steps` steps (warm-up kept within them)."""
    out = []
    for row in rows:
        variant = json.loads(json.dumps(row["variant"]))
        variant.setdefault("train", {})["steps"] = steps
        out.append({**row, "name": f"{row['name']}_{steps}", "variant": variant, "seeds": "screen"})
    return out


def makespan(durations, slots):
    """The wall time of tasks of `durations` laid longest first, each onto the slot free first."""
    free = [0.0] * slots
    for duration in sorted(durations, reverse=True):
        heapq.heapreplace(free, free[0] + duration)
    return max(free)


def search_tasks(study, rows):
    """(steps, seeds) of every task of a search of `rows` run from an empty results file."""
    _, jobs = plan_search(study, with_seeds(rows, study), {}, {})
    return [(recipe.steps, len(seeds)) for _, recipe, _, _, seeds, *_ in jobs]


def whole_search_tasks(study):
    """search_tasks of the rows file's whole search."""
    return search_tasks(study, load_rows(ROOT / "pipeline/study/search.yaml"))


def timed(run_it):
    start = time.perf_counter()
    run_it()
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    params = load_params(ROOT / "params.yaml")
    rows = shortened(load_rows(ROOT / "pipeline/study/search.yaml")[: args.rows], args.steps)
    study, batch = params.study, params.evaluate.batch_size
    tasks = len(search_tasks(study, rows))

    with tempfile.TemporaryDirectory() as folder:
        pool, spread = Path(folder, "pool.json"), Path(folder, "ray.json")
        pool_s = timed(lambda: run_search(study, batch, rows, pool))
        with_ray = {}

        def on_ray():
            start = time.perf_counter()
            with on_ray() as run:
                with_ray["start"] = time.perf_counter() - start
                run_search(study, batch, rows, spread, run=run)

        ray_s = timed(on_ray)
        same = pool.read_bytes() == spread.read_bytes()
    print(f"{args.rows} rows x {len(study.search_seeds.screen)} seeds, {args.steps} steps, {tasks} tasks:")
    print(f"  process pool : {pool_s:7.1f} s")
    print(f"  Ray (local)  : {ray_s:7.1f} s   of which starting Ray {with_ray['start']:.1f} s")
    print(f"  Ray / pool   : {ray_s / pool_s:7.3f}")
    print(f"  Ray's overhead per task, Ray's start shared among them: {(ray_s - pool_s) / tasks:+.1f} s")
    print(f"  the same bytes: {'yes' if same else 'NO'}")
    cores = os.cpu_count() or 1
    per_step = pool_s * min(cores, tasks) / tasks / args.steps  # one task's seconds a step, on one core
    overhead = max(0.0, (ray_s - pool_s) / tasks)
    found = whole_search_tasks(study)
    durations = [steps * per_step + overhead for steps, _ in found]
    hours = sum(durations) / 3600
    print(f"the whole search: {len(found)} tasks, {hours:.1f} core-hours; on machines of {cores} cores:")
    for machines in (1, 4, 16):
        print(f"  {machines:2d} machine(s): {makespan(durations, machines * cores) / 3600:5.1f} h")
    print(f"  the longest task alone: {max(durations) / 3600:.2f} h (no number of machines goes below it)")


if __name__ == "__main__":
    main()

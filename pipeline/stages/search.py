"""Stage `search` (frozen: run on purpose, not by every `dvc repro`): the length study's search.

    python -m pipeline.stages.search --rows pipeline/study/search.yaml --out metrics/search.json

Its rows take hours on two cores, so the stage is frozen in dvc.yaml and its results are committed;
`dvc repro --force search` (or `dvc unfreeze search`, then `dvc repro`) runs the rows not yet
recorded. Each job (a row's group of seeds) is a Ray task: on a Ray started on this machine by
default, on a cluster with `--address host:port` (or RAY_ADDRESS), or on the project's own process
pool with `--local`. This process alone writes the results, a row at a time. The work is in
pipeline/study/search.py.
"""

import os
import sys
import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.study.load import load_params
from pipeline.study.search import load_rows, on_ray, run_search

SPREAD = {
    "address": ("a Ray cluster to join, host:port (default: $RAY_ADDRESS, else a Ray on this machine)", None)
}


@stage_entry
def main():
    args = stage_paths(
        __doc__, "rows", "out", flags={"local": "the project's process pool instead of Ray"}, options=SPREAD
    )
    start = time.perf_counter()
    params = load_params()
    rows = load_rows(args.rows)
    address = args.address or os.environ.get("RAY_ADDRESS")
    try:
        if args.local:
            run_search(params.study, params.evaluate.batch_size, rows, args.out)
        else:
            with on_ray(address) as run:
                run_search(params.study, params.evaluate.batch_size, rows, args.out, run=run)
    except KeyboardInterrupt:
        print(f"interrupted: the rows finished so far are in {args.out}", file=sys.stderr)
        sys.exit(130)
    print(f"search: done in {time.perf_counter() - start:.0f} s; results in {args.out}")
    spread = "the local pool" if args.local else address or "a Ray on this machine"
    record_run("search", time.perf_counter() - start, spread=spread)


if __name__ == "__main__":
    main()

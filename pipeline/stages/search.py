"""Stage `search` (frozen: run on purpose, not by every `dvc repro`): the length study's search.

    python -m pipeline.stages.search --rows pipeline/study/search.yaml --out metrics/search.json

Its rows take hours on two cores, so the stage is frozen in dvc.yaml and its results are committed;
`dvc repro --force search` (or `dvc unfreeze search`, then `dvc repro`) runs the rows not yet
recorded. The work is in pipeline/study/search.py.
"""

import sys
import time

from pipeline.infra.entry import stage_entry, stage_paths
from pipeline.params.load import load_params
from pipeline.study.search import load_rows, run_search


@stage_entry
def main():
    args = stage_paths(__doc__, "rows", "out")
    start = time.perf_counter()
    params = load_params()
    try:
        run_search(params.study, params.evaluate.batch_size, load_rows(args.rows), args.out)
    except KeyboardInterrupt:
        print(f"interrupted: the rows finished so far are in {args.out}", file=sys.stderr)
        sys.exit(130)
    print(f"search: done in {time.perf_counter() - start:.0f} s; results in {args.out}")


if __name__ == "__main__":
    main()

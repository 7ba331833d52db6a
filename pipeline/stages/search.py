"""Stage `search` (frozen: run on purpose, not by every `dvc repro`): the length study's search.

    python -m pipeline.stages.search --rows pipeline/study/search.yaml --out metrics/search.json

Its rows take hours on two cores, so the stage is frozen in dvc.yaml and its results are committed;
`dvc repro --force search` (or `dvc unfreeze search`, then `dvc repro`) runs the rows not yet
recorded. The work is in pipeline/study/search.py.
"""

import sys
import time

import yaml

from pipeline.core.params import load_params
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.study.search import load_rows, run_search

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = (
    "study.model",
    "study.train",
    "study.data",
    "study.bar",
    "study.search_seeds",
    "study.variants",
    "study.max_length",
    "study.test_size",
    "study.diagnosis_lengths",
    "study.seed",
    "evaluate.batch_size",
)


@stage_entry
def main():
    args = stage_paths(__doc__, "rows", "out")
    start = time.perf_counter()
    load_params(reads=READS)  # params.yaml must be valid before a row builds on it
    raw = yaml.safe_load(open("params.yaml").read())
    try:
        run_search(raw, load_rows(args.rows), args.out, reads=READS)
    except KeyboardInterrupt:
        print(f"interrupted: the rows finished so far are in {args.out}", file=sys.stderr)
        sys.exit(130)
    print(f"search: done in {time.perf_counter() - start:.0f} s; results in {args.out}")


if __name__ == "__main__":
    main()

"""Stage `data`: seeded sorting datasets (lesson 10, "ordenar 10 dígitos").

    python -m pipeline.stages.data --train data/train.npz --test data/test.npz --metrics metrics/data.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/data.py.
"""

import time

from pipeline.core.data import HEADLINE, make_datasets
from pipeline.core.params import load_params
from pipeline.infra import files, runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import headline
from pipeline.infra.results import write_detail

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("data",)


@stage_entry
def main():
    args = stage_paths(__doc__, "train", "test", "metrics")
    start = time.perf_counter()
    params = load_params(reads=READS)
    train, test, stats = make_datasets(params.data)
    files.write_npz(args.train, **train)
    files.write_npz(args.test, **test)
    write_detail(
        args.metrics,
        {"by_length.csv": (stats["by_length"], BY_LENGTH)},
        headline(stats, HEADLINE),
    )
    print(
        f"data: {params.data.train_size} training sequences ({stats['train_unique']} distinct), "
        f"{params.data.test_size} test sequences at each length {list(params.data.test_lengths)}, "
        f"overlap with training {stats['test_overlap_total']}"
    )
    runlog.record_run("data", time.perf_counter() - start)


# each test set's statistics: the overlap with training before and after the redraw, and how often
# the sorted output starts with 0 and ends with 9
BY_LENGTH = ["length", "overlap_drawn", "overlap", "starts_with_0", "ends_with_9"]


if __name__ == "__main__":
    main()

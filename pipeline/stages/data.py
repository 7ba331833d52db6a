"""Stage `data`: seeded sorting datasets (lesson 10, "ordenar 10 dígitos").

    python -m pipeline.stages.data --train data/train.npz --test data/test.npz --metrics metrics/data.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/data.py.
"""

import time

from pipeline.core.data import BY_LENGTH, HEADLINE, arrays_of_test_sets, make_datasets
from pipeline.infra import files
from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import headline_of, write_outputs
from pipeline.params.rules import load_sections, section
from pipeline.params.sections import DataParams


@section
class DataStageParams:
    """What the data stage reads of params.yaml: its own section alone."""

    data: DataParams


@stage_entry
def main():
    args = stage_paths(__doc__, "train", "test", "metrics")
    start = time.perf_counter()
    params = load_sections(DataStageParams)
    data = params.data
    train, test, stats = make_datasets(data)
    write_outputs(
        args.metrics,
        headline_of(stats, HEADLINE),
        {"by_length.csv": (stats["by_length"], BY_LENGTH)},
        outputs={
            args.train: files.npz_bytes(**train),
            args.test: files.npz_bytes(**arrays_of_test_sets(test)),
        },
    )
    print(
        f"data: {data.train_size} training sequences ({stats['train_unique']} distinct), "
        f"{data.test_size} test sequences at each length {list(data.test_lengths)}, "
        f"overlap with training {stats['test_overlap_total']}"
    )
    record_run("data", time.perf_counter() - start)


if __name__ == "__main__":
    main()

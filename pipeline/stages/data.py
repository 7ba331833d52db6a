"""Stage `data`: seeded sorting datasets (lesson 10, "ordenar 10 dígitos").

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/data.py.
"""

import time

from pipeline.core.data import HEADLINE, METRICS_PATH, TEST_PATH, TRAIN_PATH, make_datasets
from pipeline.infra import files, runlog
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import write as write_metrics
from pipeline.infra.params import load_params


@stage_entry
def main():
    start = time.perf_counter()
    params = load_params()
    train, test, stats = make_datasets(params.data)
    files.write_npz(TRAIN_PATH, **train)
    files.write_npz(TEST_PATH, **test)
    write_metrics(METRICS_PATH, stats, HEADLINE)
    print(
        f"data: {params.data.train_size} training sequences ({stats['train_unique']} distinct), "
        f"{params.data.test_size} test sequences at each length {list(params.data.test_lengths)}, "
        f"overlap with training {stats['test_overlap_total']}"
    )
    runlog.record_run("data", time.perf_counter() - start)


if __name__ == "__main__":
    main()

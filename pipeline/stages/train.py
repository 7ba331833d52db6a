"""Stage `train`: one model per entry of train.seeds, with the paper's recipe (lesson 10, part 3).

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/training.py.
"""

import time

from pipeline.core.training import train_all
from pipeline.infra import runlog
from pipeline.infra.errors import stage_entry
from pipeline.infra.params import load_params


@stage_entry
def main():
    params = load_params()
    start = time.perf_counter()
    metrics, runs = train_all(params)
    for run in runs:
        print(f"seed {run['seed']}: final loss {run['loss_final']:.3f} in {run['seconds']:.1f} s")
    print(
        f"train: loss {metrics['loss_final']:.3f} ± {metrics['loss_final_std']:.3f} "
        f"(floor {metrics['loss_floor']:.3f}) for {len(runs)} seeds in {time.perf_counter() - start:.1f} s"
    )
    runlog.record_run("train", time.perf_counter() - start)


if __name__ == "__main__":
    main()

"""Stage `train`: one model per entry of train.seeds, with the paper's recipe (lesson 10, part 3).

    python -m pipeline.stages.train --data data/train.npz --models models --metrics metrics/train.json

The seeds train together, one batched model in each of as many processes as cores, each on one
thread (pipeline.core.seed_axis), and every seed's bytes are the same whatever the machine's core
count.
Checkpoints and per-step loss logs (dvclive's layout, in the metrics' folder) are written to staging
folders and moved into place only when every seed has finished: all of them or none.
"""

import time

from pipeline.core.train import loss_headline, train_seeds
from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import stage_outputs
from pipeline.params.lesson_load import load_lesson_params


@stage_entry
def main():
    args = stage_paths(__doc__, "data", "models", "metrics")
    params = load_lesson_params()
    start = time.perf_counter()
    with stage_outputs(args.metrics, args.models) as out:  # the detail: each seed's step log
        (models,) = out.folders
        runs = train_seeds(
            params.model, params.train, params.data.train_lengths, args.data, models, out.detail
        )
        out.headline = metrics = loss_headline(runs, params.train.label_smoothing)
        out.file("device.json", {"device": runs[0]["device"]})
    for run in runs:
        print(f"seed {run['seed']}: final loss {run['loss_final']:.3f} in {run['seconds']:.1f} s")
    print(
        f"train: loss {metrics['loss_final']:.3f} ± {metrics['loss_final_std']:.3f} "
        f"(floor {metrics['loss_floor']:.3f}) for {len(runs)} seeds in {time.perf_counter() - start:.1f} s"
    )
    record_run("train", time.perf_counter() - start)


if __name__ == "__main__":
    main()

"""Stage `norm`: "Con dos capas no necesitamos pre-norm" (lesson 10): the lesson's model with
pre-norm, trained on the same data with the same seeds, against the pipeline's post-norm checkpoints.

    python -m pipeline.stages.norm --train data/train.npz --test data/test.npz --models models \
        --metrics metrics/norm.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/probes/norm.py.
"""

import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import headline_of, write_outputs
from pipeline.params.lesson_load import load_lesson_params
from pipeline.probes.norm import COLUMNS, HEADLINE, compare_norms


@stage_entry
def main():
    args = stage_paths(__doc__, "train", "test", "models", "metrics")
    start = time.perf_counter()
    params = load_lesson_params()
    seeds = params.train.seeds[: params.norm.count]  # the first few: a difference this large needs no more
    rows, metrics = compare_norms(
        params.model,
        params.train,
        seeds,
        max(params.data.train_lengths),
        params.evaluate.batch_size,
        args.train,
        args.test,
        args.models,
    )
    write_outputs(args.metrics, headline_of(metrics, HEADLINE), {"by_seed.csv": (rows, COLUMNS)})
    print(
        f"post - pre: {100 * metrics['post_minus_pre']:+.2f} points "
        f"(2 s.e. {100 * metrics['post_minus_pre_2se']:.2f})"
    )
    record_run("norm", time.perf_counter() - start)


if __name__ == "__main__":
    main()

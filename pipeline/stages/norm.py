"""Stage `norm`: "Con dos capas no necesitamos pre-norm" (lesson 10): the lesson's model with
pre-norm, trained on the same data with the same seeds, against the pipeline's post-norm checkpoints.

    python -m pipeline.stages.norm --train data/train.npz --test data/test.npz --models models \
        --metrics metrics/norm.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/probes/norm_choice.py.
"""

import time

from pipeline.core.data import load_npz
from pipeline.core.params import load_params
from pipeline.infra import runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import write as write_metrics
from pipeline.infra.pool import run_jobs, seed_workers
from pipeline.infra.stats import across_seeds
from pipeline.probes.norm_choice import HEADLINE, compare_seed, paired_summary

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = (
    "norm",
    "model",
    "train.steps",
    "train.batch_size",
    "train.lr",
    "train.betas",
    "train.eps",
    "train.warmup",
    "train.label_smoothing",
    "train.device",
    "train.seeds",
    "data.train_lengths",
    "evaluate.batch_size",
)


@stage_entry
def main():
    args = stage_paths(__doc__, "train", "test", "models", "metrics")
    start = time.perf_counter()
    params = load_params(reads=READS)
    n = max(params.data.train_lengths)
    source = load_npz(args.test, [f"source_{n}"])[f"source_{n}"]
    batch = params.evaluate.batch_size
    seeds = params.train.seeds[: params.norm.count]  # the first few: a difference this large needs no more
    jobs = [(params, seed, source, batch, args.train, args.models) for seed in seeds]
    per_seed = dict(zip(seeds, run_jobs(compare_seed, jobs, seed_workers(jobs)), strict=True))
    for seed, r in per_seed.items():
        print(
            f"seed {seed}: greedy at length {n}: post-norm {r['post_seq_acc']:.2%}, "
            f"pre-norm {r['pre_seq_acc']:.2%}"
        )
    metrics = {**across_seeds(per_seed, list(next(iter(per_seed.values())))), **paired_summary(per_seed)}
    metrics["length"] = n
    write_metrics(args.metrics, metrics, HEADLINE)
    print(
        f"post - pre: {100 * metrics['post_minus_pre']:+.2f} points "
        f"(2 s.e. {100 * metrics['post_minus_pre_2se']:.2f})"
    )
    runlog.record_run("norm", time.perf_counter() - start)


if __name__ == "__main__":
    main()

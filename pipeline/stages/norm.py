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
from pipeline.infra.metrics import headline
from pipeline.infra.pool import run_jobs, seed_workers
from pipeline.infra.results import write_detail
from pipeline.probes.norm_choice import COLUMNS, HEADLINE, compare_seed, paired_summary

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
    rows = [row for pair in run_jobs(compare_seed, jobs, seed_workers(jobs)) for row in pair]
    acc = {norm: [r["seq_acc"] for r in rows if r["norm"] == norm] for norm in ("post", "pre")}
    for seed, post, pre in zip(seeds, acc["post"], acc["pre"], strict=True):
        print(f"seed {seed}: greedy at length {n}: post-norm {post:.2%}, pre-norm {pre:.2%}")
    metrics = paired_summary(acc["post"], acc["pre"])
    write_detail(args.metrics, {"by_seed.csv": (rows, COLUMNS)}, headline(metrics, HEADLINE))
    print(
        f"post - pre: {100 * metrics['post_minus_pre']:+.2f} points "
        f"(2 s.e. {100 * metrics['post_minus_pre_2se']:.2f})"
    )
    runlog.record_run("norm", time.perf_counter() - start)


if __name__ == "__main__":
    main()

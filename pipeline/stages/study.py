"""Stage `study` ("sort any length"): why the lesson's model fails away from the length it was
trained on, and which variant of the length-generalisation study does not.

    python -m pipeline.stages.study --models models --train data/train.npz --variants metrics/variants \
        --metrics metrics/study.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/study/gather.py.
"""

import time

import torch

from pipeline.core.params import load_params
from pipeline.infra import runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.study.gather import run_study, write_outputs
from pipeline.study.ranking import bar_key, bar_lengths

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("study", "data.train_lengths", "train.seeds", "train.device", "evaluate.batch_size")


@stage_entry
def main():
    args = stage_paths(__doc__, "models", "train", "variants", "metrics")
    start = time.perf_counter()
    params = load_params(reads=READS)
    torch.set_num_threads(1)
    bar = params.study.bar
    metrics, outputs = run_study(params, args.models, args.train, args.variants)
    write_outputs(metrics, outputs, params.study.variants, bar, args.metrics)
    low, high = bar.lengths
    print(
        f"study: exact-sequence accuracy, mean over seeds (lengths {low}-{high}; the bar is "
        f">= {100 * bar.accuracy:g} % at each)"
    )
    lowest = bar_key("min_seq_acc")
    for v in ["pipeline", *params.study.variants]:
        row = " ".join(
            f"{100 * metrics[f'{v}_length_{n}_seq_acc']:.0f}"
            for n in bar_lengths(bar)
            if f"{v}_length_{n}_seq_acc" in metrics
        )
        print(f"  {v:22s} {row}  min {100 * metrics[f'{v}_{lowest}']:.1f} %")
    met = [v for v in params.study.variants if metrics[f"{v}_meets_bar"]]
    seeds = "held-out seeds" if metrics["bar_seeds_held_out"] else "seeds the search trains too"
    print(f"study: bar met by {', '.join(met) or 'no variant'}, judged on {seeds}")
    runlog.record_run("study", time.perf_counter() - start)


if __name__ == "__main__":
    main()

"""Stage `study` ("sort any length"): why the lesson's model fails away from the length it was
trained on, and which variant of the length-generalisation study does not.

    python -m pipeline.stages.study --models models --train data/train.npz --variants metrics/variants \
        --metrics metrics/study.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/study/gather.py.
"""

import statistics
import time

import torch

from pipeline.core.params import load_params
from pipeline.infra import runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.study.confirmation import held_out
from pipeline.study.gather import run_study, write_outputs
from pipeline.study.outputs import by_length
from pipeline.study.ranking import bar_lengths

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("study", "data.train_lengths", "train.seeds", "train.device", "evaluate.batch_size")


@stage_entry
def main():
    args = stage_paths(__doc__, "models", "train", "variants", "metrics")
    start = time.perf_counter()
    params = load_params(reads=READS)
    torch.set_num_threads(1)
    bar = params.study.bar
    standings, tables, outputs = run_study(params, args.models, args.train, args.variants)
    write_outputs(standings, tables, outputs, params, args.metrics)
    low, high = bar.lengths
    print(
        f"study: exact-sequence accuracy, mean over seeds (lengths {low}-{high}; the bar is "
        f">= {100 * bar.accuracy:g} % at each)"
    )
    rows = tables["per_seed.csv"][0]
    for r in standings[:-1]:  # every trained variant and the pipeline's model; not the hand-set one
        seq_acc = by_length(rows, r["variant"])
        shown = " ".join(
            f"{100 * statistics.fmean(seq_acc[n]):.0f}" for n in bar_lengths(bar) if n in seq_acc
        )
        print(f"  {r['variant']:22s} {shown}  min {100 * r['bar_min_seq_acc']:.1f} %")
    met = [r["variant"] for r in standings if r["meets_bar"] and r["variant"] in params.study.variants]
    seeds = "held-out seeds" if held_out(params) else "seeds the search trains too"
    print(f"study: bar met by {', '.join(met) or 'no variant'}, judged on {seeds}")
    runlog.record_run("study", time.perf_counter() - start)


if __name__ == "__main__":
    main()

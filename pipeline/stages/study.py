"""Stage `study` ("sort any length"): why the lesson's model fails away from the length it was
trained on, and which variant of the length-generalisation study does not.

A thin entry point that reads inputs and writes outputs; the work is in pipeline/study/gather.py.
"""

import time

import torch

from pipeline.infra import runlog
from pipeline.infra.errors import stage_entry
from pipeline.infra.params import load_params
from pipeline.study.gather import BAR_LENGTHS, run_study, write_outputs


@stage_entry
def main():
    start = time.perf_counter()
    params = load_params()
    torch.set_num_threads(1)
    metrics, outputs = run_study(params)
    write_outputs(metrics, outputs, params.study.variants)
    print("study: exact-sequence accuracy, mean over seeds (lengths 1-20; the bar is >= 99 % at each)")
    for v in ["pipeline", *params.study.variants]:
        row = " ".join(
            f"{100 * metrics[f'{v}_length_{n}_seq_acc']:.0f}"
            for n in BAR_LENGTHS
            if f"{v}_length_{n}_seq_acc" in metrics
        )
        print(f"  {v:22s} {row}  min {100 * metrics[f'{v}_min_seq_acc_1_20']:.1f} %")
    met = [v for v in params.study.variants if metrics[f"{v}_meets_bar"]]
    print(f"study: bar met by {', '.join(met) or 'no variant'}")
    runlog.record_run("study", time.perf_counter() - start)


if __name__ == "__main__":
    main()

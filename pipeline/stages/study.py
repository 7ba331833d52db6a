"""Stage `study` ("sort any length"): why the lesson's model fails away from the length it was
trained on, and which variant of the length-generalisation study does not.

    python -m pipeline.stages.study --models models --train data/train.npz --variants metrics/variants \
        --metrics metrics/study.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/study/study.py.
"""

import time

import torch

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import write_outputs
from pipeline.study.bar import held_out
from pipeline.study.load import load_params
from pipeline.study.study import headline, print_standings, run_study


@stage_entry
def main():
    args = stage_paths(__doc__, "models", "train", "variants", "metrics")
    start = time.perf_counter()
    params = load_params()
    torch.set_num_threads(1)
    study, seeds = params.study, params.train.seeds
    standings, tables, outputs = run_study(
        study, seeds, params.train.device, params.evaluate.batch_size, args.models, args.train, args.variants
    )
    write_outputs(args.metrics, headline(standings, study.variants, held_out(study)), tables, outputs)
    print_standings(standings, tables["per_seed.csv"][0], study)
    record_run("study", time.perf_counter() - start)


if __name__ == "__main__":
    main()

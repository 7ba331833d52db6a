"""Stage `probe`: lesson 6's claims ("Apilar sin perder lo de abajo") measured with numbers this
stage regenerates: its NumPy cells, the parameter accounting, gradient and Jacobian probes.

    python -m pipeline.stages.probe --models models --test data/test.npz --metrics metrics/probe.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/probes/probe.py.
"""

import time

import torch

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import headline_of, write_outputs
from pipeline.params.lesson_load import load_lesson_params
from pipeline.probes.probe import HEADLINE, run_probes


@stage_entry
def main():
    args = stage_paths(__doc__, "models", "test", "metrics")
    start = time.perf_counter()
    params = load_lesson_params()
    torch.set_num_threads(1)  # the same bytes on any machine
    seed, length = params.train.seeds[0], params.data.train_lengths[0]
    metrics, tables = run_probes(params.probe, seed, length, args.models, args.test)
    write_outputs(args.metrics, headline_of(metrics, HEADLINE), tables, {"summary.json": metrics})
    record_run("probe", time.perf_counter() - start)


if __name__ == "__main__":
    main()

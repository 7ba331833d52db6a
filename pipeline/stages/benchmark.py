"""Stage `benchmark` (frozen: run on purpose, on a quiet machine): the speed report.

    python -m pipeline.stages.benchmark --metrics metrics/benchmark.json [--quick]

Times our training step, decoding and seeds side by side with their references on this machine and
writes metrics/benchmark.json and metrics/benchmark/*.csv. A thin entry point that reads inputs and
writes outputs; the work is in pipeline/tools/benchmark/.
"""

import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.params.lesson_load import load_lesson_params
from pipeline.tools.benchmark.suite import run, write_results


@stage_entry
def main():
    args = stage_paths(__doc__, "metrics", flags={"quick": "a smoke run: few steps, small batches"})
    start = time.perf_counter()
    params = load_lesson_params()
    length = params.data.train_lengths[0]
    metrics, tables = run(params.model, params.train, length, params.evaluate, args.quick)
    metrics["seconds"] = time.perf_counter() - start  # the measurement's own length, kept with it
    write_results(metrics, tables, args.metrics)
    print(f"wrote {args.metrics} and {args.metrics.with_suffix('')}/")
    record_run("benchmark", metrics["seconds"])


if __name__ == "__main__":
    main()

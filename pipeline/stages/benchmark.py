"""Stage `benchmark` (frozen: run on purpose, on a quiet machine): the speed report.

    python -m pipeline.stages.benchmark --metrics metrics/benchmark.json [--quick]

Times our training step, decoding and seeds side by side with their references on this machine and
writes metrics/benchmark.json and metrics/benchmark/*.csv. A thin entry point that reads inputs and
writes outputs; the work is in pipeline/tools/benchmark/.
"""

import argparse
import time
from pathlib import Path

from pipeline.infra.entry import stage_entry
from pipeline.params.load import load_params
from pipeline.tools.benchmark.suite import run, write_results


@stage_entry
def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.stages.benchmark", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--metrics", type=Path, required=True, metavar="PATH", help="metrics/benchmark.json")
    parser.add_argument("--quick", action="store_true", help="a smoke run: few steps, small batches")
    args = parser.parse_args(argv)
    params = load_params()
    start = time.perf_counter()
    length = params.data.train_lengths[0]
    metrics, tables = run(params.model, params.train, length, params.evaluate, params.study, args.quick)
    metrics["seconds"] = time.perf_counter() - start
    write_results(metrics, tables, args.metrics)
    print(f"wrote {args.metrics} and {args.metrics.with_suffix('')}/ in {metrics['seconds']:.0f} s")


if __name__ == "__main__":
    main()

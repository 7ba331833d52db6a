"""`python -m pipeline.tools.benchmark [--quick] [--out DIR]`: run every measure and write the results."""

import argparse
import time
from pathlib import Path

from pipeline.tools.benchmark.output import OUT_DIR, write_results
from pipeline.tools.benchmark.suite import run


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.tools.benchmark",
        description="Time our training step, decoding and seeds side by side with their references on "
        "this machine (see pipeline/tools/benchmark/__init__.py).",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: few steps, small batches")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help=f"folder for the results ({OUT_DIR})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    metrics, tables = run(args.quick)
    metrics["seconds"] = time.perf_counter() - start
    write_results(metrics, tables, args.out)
    print(f"wrote {args.out / 'benchmark.json'} and {args.out / 'benchmark'}/ in {metrics['seconds']:.0f} s")


if __name__ == "__main__":
    main()

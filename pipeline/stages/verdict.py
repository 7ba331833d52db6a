"""Stage `verdict`: the length study's verdict, on sequences no search row was ranked by.

    python -m pipeline.stages.verdict --variants metrics/variants --metrics metrics/verdict.json

It reads the checkpoints of the variants that study.verdict names (their variant stages train them)
and tests each seed at lengths 1..study.verdict.max_length on three kinds of input; beside them, the
signed count set by hand. A thin entry point that reads inputs and writes outputs; the work is in
pipeline/study/verdict.py.
"""

import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import write_outputs
from pipeline.study.load import load_params
from pipeline.study.verdict import run_verdict
from pipeline.study.verdict_rows import COLUMNS


@stage_entry
def main():
    args = stage_paths(__doc__, "variants", "metrics")
    start = time.perf_counter()
    params = load_params()
    record, rows = run_verdict(params.study, args.variants, params.evaluate.batch_size)
    write_outputs(args.metrics, record, {"per_seed.csv": (rows, COLUMNS)})
    for name, row in record["variants"].items():
        reach = f"sorts every length 1-{row['reach']} of every kind" if row["reach"] else "sorts no length"
        first = f"; first fails on {', '.join(row['fails_first_on'])}" if row["fails_first_on"] else ""
        verdict = (
            "meets the bar" if row["meets_bar"] else ("misses the bar" if row["judged"] else "not judged")
        )
        print(f"verdict {name} ({len(row['seeds']) or 'no'} seeds): {reach}{first}: {verdict}")
    record_run("verdict", time.perf_counter() - start)


if __name__ == "__main__":
    main()

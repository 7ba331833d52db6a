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
from pipeline.study.verdict_rows import CERTIFICATE_COLUMNS, COLUMNS, CONTROL_COLUMNS


@stage_entry
def main():
    args = stage_paths(__doc__, "variants", "metrics")
    start = time.perf_counter()
    params = load_params()
    record, rows, controls, certificates = run_verdict(
        params.study, args.variants, params.evaluate.batch_size
    )
    write_outputs(
        args.metrics,
        record,
        {
            "per_seed.csv": (rows, COLUMNS),
            "controls.csv": (controls, CONTROL_COLUMNS),
            "certificates.csv": (certificates, CERTIFICATE_COLUMNS),
        },
    )
    for name, row in record["variants"].items():
        reach = f"sorts every length 1-{row['reach']} of every kind" if row["reach"] else "sorts no length"
        if row["reach_from"] == "lengths_sampled":
            reach = "sampled at some lengths" + (
                "" if row["fails_first_on"] else ": sorts every kind at each"
            )
        elif row["reach_from"] == "certificate":
            reach += " (certified; sampled at the longest)"
        first = f"; first fails on {', '.join(row['fails_first_on'])}" if row["fails_first_on"] else ""
        verdict = (
            "meets the bar" if row["meets_bar"] else ("misses the bar" if row["judged"] else "not judged")
        )
        print(f"verdict {name} ({len(row['seeds']) or 'no'} seeds): {reach}{first}: {verdict}")
    for name, by_weights in record["certificates"].items():
        for weights, row in by_weights.items():
            print(
                f"verdict {name} {weights}: {row['certified']} of {row['seeds']} certified for every "
                f"length (smallest margin {row['smallest_margin']:.2f}, long inputs within "
                f"{row['largest_distance']:.1e})"
            )
    record_run("verdict", time.perf_counter() - start)


if __name__ == "__main__":
    main()

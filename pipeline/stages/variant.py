"""Stage `variant@<name>`: one variant of the length study, trained and tested.

A thin entry point that reads inputs and writes outputs; the work is in pipeline/study/variant.py.
"""

import statistics
import sys
import time

from pipeline.infra import files, runlog
from pipeline.infra.errors import ConfigError, stage_entry
from pipeline.infra.params import load_params
from pipeline.study.variant import run_variant, variant_path


@stage_entry
def main():
    if len(sys.argv) != 2:
        raise ConfigError("usage: python -m pipeline.stages.variant <variant of study.variants>")
    variant, start = sys.argv[1], time.perf_counter()
    params = load_params()
    record, seconds = run_variant(params, variant)
    files.write_json(variant_path(variant), record)
    bar = " ".join(
        f"{100 * statistics.fmean(a[f'length_{n}_seq_acc'] for a in record['accuracy'].values()):.0f}"
        for n in range(1, 21)
        if f"length_{n}_seq_acc" in record["accuracy"][str(record["seeds"][0])]
    )
    print(f"study {variant}: exact sequences at lengths 1-20, mean over seeds: {bar}")
    print(f"study {variant}: {statistics.fmean(seconds.values()):.0f} s of training per seed")
    runlog.record_run(f"variant@{variant}", time.perf_counter() - start, train_seconds_per_seed=seconds)


if __name__ == "__main__":
    main()

"""Stage `variant@<name>`: one variant of the length study, trained and tested.

    python -m pipeline.stages.variant bos_mixed --out metrics/variants/bos_mixed.json \
        --models metrics/variants/bos_mixed

A thin entry point that reads inputs and writes outputs; the work is in pipeline/study/variant.py.
"""

import statistics
import time

from pipeline.core.params import load_params
from pipeline.infra import files, runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.study.variant import run_variant

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = (
    "study.variants.${key}",
    "study.model",
    "study.train",
    "study.data",
    "study.max_length",
    "study.test_size",
    "study.diagnosis_lengths",
    "study.seed",
    "evaluate.batch_size",
)


@stage_entry
def main():
    args = stage_paths(__doc__, "out", "models", positional=["variant"])
    variant, start = args.variant, time.perf_counter()
    params = load_params(reads=READS, own=variant)
    record, seconds = run_variant(params, variant, args.models)
    files.write_json(args.out, record)
    by_length = {}
    for row in record["accuracy"]:
        by_length.setdefault(row["length"], []).append(row["seq_acc"])
    tested = list(by_length)
    means = " ".join(f"{100 * statistics.fmean(values):.0f}" for values in by_length.values())
    print(f"study {variant}: exact sequences at lengths {tested[0]}-{tested[-1]}, mean over seeds: {means}")
    print(f"study {variant}: {statistics.fmean(seconds.values()):.0f} s of training per seed")
    print(f"study {variant}: checkpoints in {args.models}/ (python -m pipeline.tools.sort --checkpoint ...)")
    runlog.record_run(f"variant@{variant}", time.perf_counter() - start, train_seconds_per_seed=seconds)


if __name__ == "__main__":
    main()

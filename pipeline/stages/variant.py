"""Stage `variant@<name>`: one variant of the length study, trained and tested.

    python -m pipeline.stages.variant bos_mixed --out metrics/variants/bos_mixed.json \
        --models metrics/variants/bos_mixed

It reads its own entry of study.variants and the study's recipe and test values, never another
variant's: adding a variant retrains that one only. A thin entry point that reads inputs and writes
outputs; the work is in pipeline/study/variant.py.
"""

import statistics
import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.errors import ConfigError
from pipeline.infra.outputs import stage_outputs
from pipeline.study.load import load_params
from pipeline.study.params import variant_recipe
from pipeline.study.sets import study_test_sets
from pipeline.study.variant import run_variant


@stage_entry
def main():
    args = stage_paths(__doc__, "out", "models", positional=["variant"])
    name, start = args.variant, time.perf_counter()
    params = load_params()
    try:
        variant = params.study.variants[name]
    except KeyError:
        raise ConfigError(f"variant {name} is not in study.variants of study/params.yaml") from None
    config, recipe, data = variant_recipe(variant, params.study.model, params.study.train, params.study.data)
    tests, _ = study_test_sets(
        params.study.train,
        params.study.data,
        params.study.seed,
        params.study.max_length,
        params.study.test_size,
        params.study.diagnosis_lengths,
    )
    with stage_outputs(args.out, args.models, detail=False) as out:  # every seed's checkpoint, or none
        (models,) = out.folders
        record, seconds = run_variant(
            name, config, recipe, data, tests, params.study.seed, params.study.diagnosis_lengths,
            params.evaluate.batch_size, models,
        )  # fmt: skip
        out.headline = record
    by_length = {}
    for row in record["accuracy"]:
        by_length.setdefault(row["length"], []).append(row["seq_acc"])
    tested = list(by_length)
    means = " ".join(f"{100 * statistics.fmean(values):.0f}" for values in by_length.values())
    print(f"study {name}: exact sequences at lengths {tested[0]}-{tested[-1]}, mean over seeds: {means}")
    print(f"study {name}: {statistics.fmean(seconds.values()):.0f} s of training per seed")
    print(f"study {name}: checkpoints in {args.models}/ (python -m pipeline.tools.sort --checkpoint ...)")
    record_run(f"variant@{name}", time.perf_counter() - start, train_seconds_per_seed=seconds)


if __name__ == "__main__":
    main()

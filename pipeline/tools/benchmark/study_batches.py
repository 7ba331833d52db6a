"""What one-length batches save the study: each variant's training step on its mixed training
lengths, with batches padded to their longest row against batches of one length (train_model's
`batches`; study.train.batches picks one)."""

import dataclasses

import pandas as pd

from pipeline.core.params import Params
from pipeline.core.variants import variant_recipe
from pipeline.study.sets import training_set
from pipeline.tools.benchmark.timing import round_robin, spread_ms
from pipeline.tools.benchmark.train_step import step_durations


def measure(params: Params, quick):
    """(metrics, table): per mixed-length variant, ms per step both ways and their ratio."""
    steps, rounds, warmup = (8, 1, 2) if quick else (40, 3, 5)
    mixed = [v for v in params.study.variants if len(variant_recipe(params, v)[2]) > 1]  # several lengths
    variants = mixed[: 2 if quick else None]
    print(f"study batches: {rounds} rounds of {steps} steps, mixed against one length, per variant")
    rows, m = [], {}
    for variant in variants:
        config, recipe, lengths = variant_recipe(params, variant)
        recipe = dataclasses.replace(recipe, steps=steps)
        data = training_set(lengths, steps * recipe.batch_size * 4, 0)
        times = {"mixed": [], "by_length": []}
        for b in round_robin(times, rounds):
            times[b] += step_durations(config, recipe, data, {"batches": b})[warmup:]
        mixed, by_length = spread_ms(times["mixed"]), spread_ms(times["by_length"])
        ratio = mixed["median_ms"] / by_length["median_ms"]
        rows.append(
            {
                "variant": variant,
                "mixed_ms": mixed["median_ms"],
                "by_length_ms": by_length["median_ms"],
                "speedup": ratio,
            }
        )
        m[f"study_batches_speedup_{variant}"] = ratio
        print(
            f"  {variant:30s} mixed {mixed['median_ms']:6.2f} ms, "
            f"one length {by_length['median_ms']:6.2f} ms: {ratio:.2f}x"
        )
    return m, pd.DataFrame(rows)

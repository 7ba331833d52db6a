"""What one-length batches save the length study's variants: per variant trained on several lengths,
ms per training step with batches padded to their longest row against batches of one length
(study.train.batches), measured side by side in one run on this machine.

    python -m pipeline.tools.study_batches [--quick]

Printed, never asserted: timings on a shared machine are not a test. Run it on a quiet machine.
"""

import argparse
import dataclasses

import pandas as pd

from pipeline.core.batching import batch_indices
from pipeline.study.load import load_params
from pipeline.study.model import StudyTransformer
from pipeline.study.sets import training_set
from pipeline.tools.benchmark.step import step_durations
from pipeline.tools.benchmark.timing import round_robin, spread_ms


def measure_study_batches(study, quick):
    """(metrics, table): per mixed-length variant of `study`, ms per step with batches padded to
    their longest row and with batches of one length (study.train.batches), and their ratio."""
    steps, rounds, warmup = (8, 1, 2) if quick else (40, 3, 5)
    recipes = study.recipes
    mixed = [v for v, (_, _, data) in recipes.items() if len(data.train_lengths) > 1]  # several lengths
    variants = mixed[: 2 if quick else None]
    print(f"study batches: {rounds} rounds of {steps} steps, mixed against one length, per variant")
    rows, m = [], {}
    for variant in variants:
        config, recipe, lengths = *recipes[variant][:2], recipes[variant][2].train_lengths
        recipe = dataclasses.replace(recipe, steps=steps)
        data = training_set(lengths, steps * recipe.batch_size * 4, 0)
        times = {"mixed": [], "by_length": []}
        for b in round_robin(times, rounds):
            one_length = batch_indices(len(data["source"]), recipe.batch_size, steps, 0, data["lengths"])
            orders = {"orders": [one_length]} if b == "by_length" else {}
            options = {"build_model": StudyTransformer, **orders}  # a variant's model, the study's
            times[b] += step_durations(config, recipe, data, options)[warmup:]
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few steps, two variants")
    args = parser.parse_args()
    measure_study_batches(load_params().study, args.quick)


if __name__ == "__main__":
    main()

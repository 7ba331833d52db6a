"""Aggregating per-seed results into flat metrics: mean, sample std, and each seed's value."""

import statistics


def across_seeds(per_seed: dict, keys) -> dict:
    """per_seed: {seed: {key: value}} -> {key: mean, key_std: std, key_seed<s>: value}."""
    out = {}
    for key in keys:
        values = [run[key] for run in per_seed.values()]
        out[key] = statistics.fmean(values)
        out[f"{key}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
        for seed, run in per_seed.items():
            out[f"{key}_seed{seed}"] = run[key]
    return out

"""Every measure of the speed report, in one run, whether each target is met, and where the results
go: metrics/benchmark.json (flat keys) and one CSV per table beside it (metrics/benchmark/)."""

import torch

from pipeline.infra.outputs import csv_text, write_outputs
from pipeline.tools.benchmark import decoding, seeds, step, timing

# Printed and recorded, never asserted: timings on a shared machine are not a test.
TARGETS = {
    "train_step_speedup": 1.5,  # our step against nn.Transformer of the same computation
    "fraction_of_peak": 0.25,  # of the one-thread matmul peak
    "seeds_ratio_over_ideal": 1.1,  # every seed at once against one: within 10 % of seeds / cores
    "cached_speedup_64": 3.0,
}


def targets_met(m):
    return {
        "target_train_step_speedup_met": m["train_step_speedup"] >= TARGETS["train_step_speedup"],
        "target_train_step_speedup_vs_stock_dropout_met": (
            m["train_step_speedup_vs_stock_dropout"] >= TARGETS["train_step_speedup"]
        ),
        "target_fraction_of_peak_met": m["train_step_fraction_of_peak"] >= TARGETS["fraction_of_peak"],
        "target_seeds_ratio_met": m["seeds_ratio"]
        <= TARGETS["seeds_ratio_over_ideal"] * m["seeds_ratio_ideal"],
        "target_cached_speedup_64_met": m["decode_speedup_len64"] >= TARGETS["cached_speedup_64"],
    }


def run(config, train, length, evaluate, quick=False):
    """Every measure of the lesson's model (`config` trained by `train` on rows of `length`, decoded
    as `evaluate` says); returns (flat metrics, {table name: DataFrame}).
    `quick`: a smoke run of few steps, rounds and rows, whose numbers mean little."""
    torch.set_num_threads(1)  # as the train and evaluate stages run
    load_before = timing.check_load_at_start()
    print(f"numerics mode {timing.pin.mode()}: every measure below computes in it", flush=True)
    m, tables = {}, {}
    # 1. the training step, ours against nn.Transformer of the same shape
    step_metrics, tables["train_step"] = step.measure(config, train, length, quick)
    m.update(step_metrics)
    # 2. FLOPs of one step against the matmul peak
    m.update(step.measure_flops(config, train, length, quick, step_seconds=m["train_step_ms_ours"] / 1e3))
    # 3. greedy decoding with and without the cache
    decode_metrics, tables["decoding"] = decoding.measure_cached(quick)
    m.update(decode_metrics)
    # 4. evaluation throughput
    throughput_metrics, tables["throughput"] = decoding.measure_throughput(evaluate, quick)
    m.update(throughput_metrics)
    # 5. every seed at once against one
    seed_metrics, tables["seeds"] = seeds.measure(config, train, length, quick)
    m.update(seed_metrics)
    m.update(targets_met(m))
    for name, met in targets_met(m).items():
        print(f"{name.removeprefix('target_').removesuffix('_met')}: {'met' if met else 'MISSED'}")
    m.update(timing.describe(load_before, quick))
    return m, tables


def write_results(metrics, tables, headline_path):
    """The tables (3 decimals: timings) in the detail folder, then the JSON: the JSON appearing means
    the run is complete."""
    texts = {f"{name}.csv": csv_text(table, float_format="%.3f") for name, table in tables.items()}
    write_outputs(headline_path, metrics, others=texts)

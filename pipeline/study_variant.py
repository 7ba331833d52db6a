"""Stage `variant@<name>`: one variant of the length study, trained and tested.

`python -m pipeline.study_variant <name>` trains one model per `study.seeds` (in parallel, one
process per seed and core) with the pipeline's own `train_model`, `study.steps` steps and
`study.dropout`, on the variant's positional scheme and training lengths; tests each at every length
1..`study.max_length` its positions allow on the study's shared test sets (pipeline.study_sets); and
diagnoses it at `study.diagnosis_lengths`. Everything goes to metrics/variants/<name>.json, which the
`study` stage gathers. One stage per variant, so DVC caches each on its own: adding a variant to
`study.variants` trains that variant only.
"""

import dataclasses
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

import torch

from pipeline import files, runlog
from pipeline.errors import ConfigError, stage_entry
from pipeline.params import Params, load_params, variant_recipe
from pipeline.study_diagnosis import VARIANT_DIAGNOSIS, accuracy_by_length, diagnose
from pipeline.study_sets import longest_input, study_test_sets, training_set
from pipeline.train import _ignore_sigint, resolve_device, train_model

VARIANTS_DIR = Path("metrics/variants")


def variant_path(variant):
    return VARIANTS_DIR / f"{variant}.json"


def variant_params(params: Params, variant) -> Params:
    """The pipeline's parameters with the variant's positions, training lengths and attention, and the
    study's steps, seeds and dropout."""
    positions, lengths, attention = variant_recipe(variant, params)
    s = params.study
    return dataclasses.replace(
        params,
        data=dataclasses.replace(
            params.data, train_lengths=lengths, train_size=s.steps * params.train.batch_size
        ),
        model=dataclasses.replace(params.model, positions=positions, attention=attention, dropout=s.dropout),
        train=dataclasses.replace(params.train, steps=s.steps, seeds=s.seeds),
    )


def train_and_test(params: Params, variant, seed, tests, batch_size):
    """Worker: train one seed of one variant, then test it at every length and diagnose it."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    device = resolve_device(params.train.device)
    data = training_set(params.data.train_lengths, params.data.train_size, params.study.seed)
    log_every = params.train.log_every

    def on_step(step, loss, lr):
        if step % log_every == 0 or step == params.train.steps:
            print(f"study {variant} seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}", flush=True)

    start = time.perf_counter()
    model, losses = train_model(params, seed, data, device, on_step)
    seconds = time.perf_counter() - start
    model.eval().cpu()
    diagnosis = {
        str(n): {k: v for k, v in diagnose(model, tests[n]).items() if k in VARIANT_DIAGNOSIS}
        for n in params.study.diagnosis_lengths
        if n <= longest_input(model.config)
    }
    return {
        "seconds": seconds,
        "loss_last100_mean": statistics.fmean(losses[-100:]),
        "accuracy": accuracy_by_length(model, tests, batch_size, "cpu"),
        "diagnosis": diagnosis,
    }


def run_jobs(function, jobs, workers=None):
    """`function(*args)` for each args of `jobs`, `workers` at a time (default: one per core) in
    spawned processes; results in the order of `jobs`."""
    workers = workers or max(1, min(len(jobs), os.cpu_count() or 1))
    if workers == 1:
        return [function(*args) for args in jobs]
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_ignore_sigint)
    try:
        handles = [pool.apply_async(function, args) for args in jobs]
        results = [h.get() for h in handles]
        pool.close()
        return results
    finally:
        pool.terminate()  # on error or interrupt, stop every worker now
        pool.join()


def run_variant(params: Params, variant, workers=None):
    """The variant's record (its recipe, and per seed its accuracy by length and diagnosis) and each
    seed's training time, kept apart so that the record is the same bytes on every run."""
    if variant not in params.study.variants:
        raise ConfigError(f"variant {variant} is not in study.variants ({', '.join(params.study.variants)})")
    recipe = variant_params(params, variant)
    tests, _ = study_test_sets(params)
    seeds = list(params.study.seeds)
    jobs = [(recipe, variant, seed, tests, params.evaluate.batch_size) for seed in seeds]
    results = dict(zip(seeds, run_jobs(train_and_test, jobs, workers), strict=True))
    record = {
        "variant": variant,
        "positions": recipe.model.positions,
        "attention": recipe.model.attention,
        "train_lengths": list(recipe.data.train_lengths),
        "steps": recipe.train.steps,
        "seeds": seeds,
        "loss_last100_mean": {str(s): r["loss_last100_mean"] for s, r in results.items()},
        "accuracy": {str(s): r["accuracy"] for s, r in results.items()},
        "diagnosis": {str(s): r["diagnosis"] for s, r in results.items()},
    }
    return record, {str(s): round(r["seconds"], 1) for s, r in results.items()}


@stage_entry
def main():
    if len(sys.argv) != 2:
        raise ConfigError("usage: python -m pipeline.study_variant <variant of study.variants>")
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

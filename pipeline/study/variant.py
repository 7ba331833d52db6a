"""One variant of the length study (stage `variant@<name>`), trained and tested.

`python -m pipeline.stages.variant <name> --out metrics/variants/<name>.json` trains one model per
seed of the variant's recipe (in parallel, one process per seed, up to twice the cores) with the
pipeline's own `train_model` and the study's own model, recipe and data (study.model, study.train,
study.data) with the variant's positions, attention and own values; tests each at every length
1..`study.max_length` its positions allow on the study's shared test sets (pipeline.study.sets);
and diagnoses it at `study.diagnosis_lengths`. One stage per variant, so DVC caches each on its own:
adding a variant to `study.variants` trains that variant only.
"""

import statistics
import time

import torch

from pipeline.core.params import Params, variant_recipe
from pipeline.core.training import train_model
from pipeline.infra.device import resolve_device
from pipeline.infra.errors import ConfigError
from pipeline.infra.pool import run_jobs, seed_workers
from pipeline.model.config import longest_source
from pipeline.study.diagnosis import VARIANT_DIAGNOSIS, accuracy_by_length, diagnose
from pipeline.study.sets import study_test_sets, training_set

PROGRESS_EVERY = 300  # steps between a variant's progress lines


def train_and_test(config, recipe, lengths, variant, seed, tests, data_seed, diagnosis_lengths, batch_size):
    """Worker: train one seed of one variant, then test it at every length and diagnose it."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    device = resolve_device(recipe.device)
    data = training_set(lengths, recipe.steps * recipe.batch_size, data_seed)

    def on_step(step, loss, lr):
        if step % PROGRESS_EVERY == 0 or step == recipe.steps:
            print(f"study {variant} seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}", flush=True)

    start = time.perf_counter()
    model, losses = train_model(config, recipe, seed, data, device, on_step, batches=recipe.batches)
    seconds = time.perf_counter() - start
    model.eval().cpu()
    diagnosis = {
        str(n): {k: v for k, v in diagnose(model, tests[n]).items() if k in VARIANT_DIAGNOSIS}
        for n in diagnosis_lengths
        if n <= longest_source(model.config)
    }
    result = {
        "seconds": seconds,
        "loss_last100_mean": statistics.fmean(losses[-100:]),
        "accuracy": accuracy_by_length(model, tests, batch_size, "cpu"),
        "diagnosis": diagnosis,
    }
    if hasattr(model.positions, "draw_at_test"):  # randomized positions: also as tested before, 0, 1, 2, ...
        model.positions.draw_at_test = False
        result["accuracy_plain_positions"] = accuracy_by_length(model, tests, batch_size, "cpu")
    return result


def variant_description(params: Params, variant):
    """What a variant's record says it trained with, checked when the study gathers it."""
    config, recipe, lengths = variant_recipe(params, variant)
    return {
        "positions": config.positions,
        "attention": config.attention,
        "train_lengths": list(lengths),
        "steps": recipe.steps,
        "seeds": list(recipe.seeds),
    }


def run_variant(params: Params, variant, workers=None):
    """The variant's record (its recipe, and per seed its accuracy by length and diagnosis) and each
    seed's training time, kept apart so that the record is the same bytes on every run."""
    if variant not in params.study.variants:
        raise ConfigError(f"variant {variant} is not in study.variants ({', '.join(params.study.variants)})")
    config, recipe, lengths = variant_recipe(params, variant)
    s = params.study
    tests, _ = study_test_sets(params)
    seeds = list(recipe.seeds)
    shared = (tests, s.seed, s.diagnosis_lengths, params.evaluate.batch_size)
    jobs = [(config, recipe, lengths, variant, seed, *shared) for seed in seeds]
    results = dict(zip(seeds, run_jobs(train_and_test, jobs, workers or seed_workers(jobs)), strict=True))
    record = {
        "variant": variant,
        **variant_description(params, variant),
        "loss_last100_mean": {str(s): r["loss_last100_mean"] for s, r in results.items()},
        "accuracy": {str(s): r["accuracy"] for s, r in results.items()},
        "diagnosis": {str(s): r["diagnosis"] for s, r in results.items()},
    }
    if all("accuracy_plain_positions" in r for r in results.values()):
        record["accuracy_plain_positions"] = {
            str(s): r["accuracy_plain_positions"] for s, r in results.items()
        }
    return record, {str(s): round(r["seconds"], 1) for s, r in results.items()}

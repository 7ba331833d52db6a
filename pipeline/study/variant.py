"""One variant of the length study (stage `variant@<name>`), trained and tested.

`python -m pipeline.stages.variant <name>` trains one model per `study.train.seeds` (in parallel,
one process per seed, up to twice the cores) with the pipeline's own `train_model` and the study's own recipe
(`study.model`, `study.train`), on the variant's positional scheme and training lengths; tests each
at every length 1..`study.max_length` its positions allow on the study's shared test sets
(pipeline.study.sets); and
diagnoses it at `study.diagnosis_lengths`. Everything goes to metrics/variants/<name>.json, which the
`study` stage gathers. One stage per variant, so DVC caches each on its own: adding a variant to
`study.variants` trains that variant only.
"""

import dataclasses
import statistics
import time
from pathlib import Path

import torch

from pipeline.core.training import resolve_device, train_model
from pipeline.infra.errors import ConfigError
from pipeline.infra.params import DataParams, ModelParams, Params, TrainParams, variant_recipe
from pipeline.infra.pool import run_jobs, seed_workers
from pipeline.study.diagnosis import VARIANT_DIAGNOSIS, accuracy_by_length, diagnose
from pipeline.study.sets import longest_input, study_test_sets, training_set

VARIANTS_DIR = Path("metrics/variants")
PROGRESS_EVERY = 300  # steps between a variant's progress lines


def variant_path(variant):
    return VARIANTS_DIR / f"{variant}.json"


def variant_params(params: Params, variant) -> Params:
    """What one variant trains with: the study's own model and recipe (study.model, study.train),
    with the variant's positions, attention and training lengths. Nothing of model.* or train.*,
    so an experiment on the lesson's model leaves every variant's cached result valid."""
    positions, lengths, attention = variant_recipe(variant, params)
    m, t = params.study.model, params.study.train
    return dataclasses.replace(
        params,
        data=DataParams(train_lengths=lengths, train_size=t.steps * t.batch_size),
        model=ModelParams(**dataclasses.asdict(m), positions=positions, attention=attention),
        train=TrainParams(**training_recipe(t), log_every=PROGRESS_EVERY),
    )


def training_recipe(study_train):
    """study.train as TrainParams takes it: all but how batches are drawn, which train_model takes."""
    return {k: v for k, v in dataclasses.asdict(study_train).items() if k != "batches"}


def train_and_test(params: Params, variant, seed, tests, batch_size):
    """Worker: train one seed of one variant, then test it at every length and diagnose it."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    device = resolve_device(params.train.device)
    data = training_set(params.data.train_lengths, params.data.train_size, params.study.seed)
    log_every = params.train.log_every  # progress lines only

    def on_step(step, loss, lr):
        if step % log_every == 0 or step == params.train.steps:
            print(f"study {variant} seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}", flush=True)

    start = time.perf_counter()
    model, losses = train_model(params, seed, data, device, on_step, batches=params.study.train.batches)
    seconds = time.perf_counter() - start
    model.eval().cpu()
    diagnosis = {
        str(n): {k: v for k, v in diagnose(model, tests[n]).items() if k in VARIANT_DIAGNOSIS}
        for n in params.study.diagnosis_lengths
        if n <= longest_input(model.config)
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


def run_variant(params: Params, variant, workers=None):
    """The variant's record (its recipe, and per seed its accuracy by length and diagnosis) and each
    seed's training time, kept apart so that the record is the same bytes on every run."""
    if variant not in params.study.variants:
        raise ConfigError(f"variant {variant} is not in study.variants ({', '.join(params.study.variants)})")
    recipe = variant_params(params, variant)
    tests, _ = study_test_sets(params)
    seeds = list(params.study.train.seeds)
    jobs = [(recipe, variant, seed, tests, params.evaluate.batch_size) for seed in seeds]
    results = dict(zip(seeds, run_jobs(train_and_test, jobs, workers or seed_workers(jobs)), strict=True))
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
    if all("accuracy_plain_positions" in r for r in results.values()):
        record["accuracy_plain_positions"] = {
            str(s): r["accuracy_plain_positions"] for s, r in results.items()
        }
    return record, {str(s): round(r["seconds"], 1) for s, r in results.items()}

"""One variant of the length study (stage `variant@<name>`), trained and tested.

`python -m pipeline.stages.variant <name> --out metrics/variants/<name>.json --models
metrics/variants/<name>` trains one model per seed of the variant's recipe (in parallel, one process
per seed, up to twice the cores) with the pipeline's own `train_model` and the study's own model,
recipe and data (study.model, study.train, study.data) with the variant's positions, attention and
own values; tests each at every length 1..`study.max_length` its positions allow on the study's
shared test sets (pipeline.study.sets); and diagnoses it at `study.diagnosis_lengths`. Each seed's
model is kept as a checkpoint that carries its configuration (`<models>/seed_<s>.pt`, which
`python -m pipeline.tools.sort --checkpoint` reads). One stage per variant, so DVC caches each on its
own: adding a variant to `study.variants` trains that variant only.
"""

import dataclasses
import statistics
import time

import torch

from pipeline.core.params import Params
from pipeline.core.training import train_model
from pipeline.core.variants import variant_data, variant_recipe
from pipeline.infra import files
from pipeline.infra.device import set_up_worker
from pipeline.infra.errors import ConfigError
from pipeline.infra.pool import run_jobs, seed_workers
from pipeline.infra.rules import as_dict
from pipeline.model.checkpoint import checkpoint_path, save_checkpoint
from pipeline.model.config import longest_source
from pipeline.model.handset import counting_sort_model
from pipeline.model.positions import Randomized
from pipeline.model.transformer import Transformer
from pipeline.study.diagnosis import VARIANT_DIAGNOSIS, accuracy_by_length, diagnose, gate_biases
from pipeline.study.sets import study_test_sets, training_set

PROGRESS_EVERY = 300  # steps between a variant's progress lines


def start_from_counting(config):
    """The hand-set counting sort as a starting point: a constant of 10 (exact to about 16 copies of
    a digit) rather than 1,000, so that Adam's first steps do not tip every gate at once, and logits
    5 apart, near what label smoothing rewards, rather than 100."""
    return counting_sort_model(config, const=10.0, readout=5.0)


def train_and_test(
    config, recipe, data_params, variant, seed, tests, data_seed, diagnosis_lengths, batch_size, models=None
):
    """Worker: train one seed of one variant, then test it at every length and diagnose it; with
    `models`, a folder, its checkpoint is written there."""
    device = set_up_worker(recipe.device)
    size = recipe.steps * recipe.batch_size
    data = training_set(data_params.train_lengths, size, data_seed, data_params.repeats)
    build = start_from_counting if recipe.init == "handset" else Transformer

    def on_step(step, loss, lr):
        if step % PROGRESS_EVERY == 0 or step == recipe.steps:
            print(f"study {variant} seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}", flush=True)

    start = time.perf_counter()
    model, losses = train_model(
        config,
        recipe,
        seed,
        data,
        device,
        on_step,
        build_model=build,
        batches=recipe.batches,
        count_hint=recipe.count_hint,
    )
    seconds = time.perf_counter() - start
    model.eval().cpu()
    if models is not None:
        save_checkpoint(
            checkpoint_path(models, seed),
            model,
            seed=seed,
            steps=recipe.steps,
            train=as_dict(recipe),
            train_lengths=list(data_params.train_lengths),
            repeats=data_params.repeats,
            variant=variant,
        )
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
        "gate_biases": gate_biases(model),
    }
    if isinstance(model.positions, Randomized):  # also as tested before, at positions 0, 1, 2, ...
        result["accuracy_plain_positions"] = accuracy_by_length(
            at_plain_positions(model), tests, batch_size, "cpu"
        )
    return result


def at_plain_positions(model):
    """The same weights reading the paper's sinusoids at 0, 1, 2, ...: what randomized positions
    change by drawing at test time too."""
    with torch.random.fork_rng():  # building a model draws its initial weights
        plain = Transformer(dataclasses.replace(model.config, positions="sinusoidal"))
    plain.load_state_dict(model.state_dict())
    return plain.train(model.training)


def with_seeds(rows_by_seed):
    """One table of every seed's accuracy rows ({seed: rows}), the seed a column of its own."""
    return [{"seed": seed, **row} for seed, rows in rows_by_seed.items() for row in rows]


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


def run_variant(params: Params, variant, models_dir, workers=None):
    """The variant's record (its recipe; its accuracy, one row a seed and length; per seed its
    diagnosis) and each seed's training time, kept apart so that the record is the same bytes on
    every run. Every seed's checkpoint goes to `models_dir`, all of them or none (written aside,
    then moved)."""
    if variant not in params.study.variants:
        raise ConfigError(f"variant {variant} is not in study.variants ({', '.join(params.study.variants)})")
    config, recipe, _ = variant_recipe(params, variant)
    s = params.study
    tests, _ = study_test_sets(params)
    seeds = list(recipe.seeds)
    with files.staged(models_dir) as (staging,):
        shared = (tests, s.seed, s.diagnosis_lengths, params.evaluate.batch_size, staging)
        jobs = [(config, recipe, variant_data(params, variant), variant, seed, *shared) for seed in seeds]
        done = run_jobs(train_and_test, jobs, workers or seed_workers(jobs))
    results = dict(zip(seeds, done, strict=True))
    record = {
        "variant": variant,
        **variant_description(params, variant),
        "loss_last100_mean": {str(s): r["loss_last100_mean"] for s, r in results.items()},
        "accuracy": with_seeds({s: r["accuracy"] for s, r in results.items()}),
        "diagnosis": {str(s): r["diagnosis"] for s, r in results.items()},
        "gate_biases": {str(s): r["gate_biases"] for s, r in results.items()},
    }
    if all("accuracy_plain_positions" in r for r in results.values()):
        record["accuracy_plain_positions"] = with_seeds(
            {s: r["accuracy_plain_positions"] for s, r in results.items()}
        )
    return record, {str(s): round(r["seconds"], 1) for s, r in results.items()}

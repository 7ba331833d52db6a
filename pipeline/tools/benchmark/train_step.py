"""Our training step against torch.nn.Transformer of the same shape, all trained by train_model."""

import time
from functools import partial

import numpy as np
import pandas as pd
import torch

from pipeline.core.params import Params
from pipeline.core.training import train_model
from pipeline.model.reference import ReferenceTransformer
from pipeline.model.transformer import Transformer, count_parameters
from pipeline.tools.benchmark.timing import round_robin, spread_ms
from pipeline.tools.benchmark.workload import training_rows, with_steps


class ParameterAdam:
    """torch.optim.Adam over each parameter, as a user writes it (`foreach` and `fused` as torch takes
    them; torch's default on the CPU is neither): the comparison for the pipeline's flat Adam
    (pipeline.core.training.FlatAdam)."""

    def __init__(self, model, recipe, foreach=False, fused=None):
        self.weights = list(model.parameters())
        self.optimizer = torch.optim.Adam(
            self.weights, lr=recipe.lr, betas=recipe.betas, eps=recipe.eps, foreach=foreach, fused=fused
        )

    def zero_grad(self):
        self.optimizer.zero_grad(set_to_none=True)

    def step(self, lr):
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.step()

    def release(self):
        pass  # each parameter owned its storage throughout


# name in the table: (JSON key, train_model's options)
IMPLEMENTATIONS = {
    "ours": ("ours", {}),  # the pipeline's own training, flat Adam
    "ours, per-parameter Adam": ("ours_per_parameter_adam", {"optimizer": ParameterAdam}),
    "nn.Transformer": ("reference", {"build_model": ReferenceTransformer, "optimizer": ParameterAdam}),
    "nn.Transformer, foreach Adam": (
        "reference_foreach_adam",
        {"build_model": ReferenceTransformer, "optimizer": partial(ParameterAdam, foreach=True)},
    ),
    "nn.Transformer, stock dropout": (
        "reference_stock_dropout",
        {"build_model": partial(ReferenceTransformer, stock=True), "optimizer": ParameterAdam},
    ),
}


def step_durations(config, recipe, data, options):
    """Seconds of every training step after the first, from the loop's own on_step call: the model
    `config` trained by `recipe` (the lesson's, or a study variant's) on `data`."""
    stamps = []
    on_step = lambda *_: stamps.append(time.perf_counter())  # noqa: E731
    train_model(config, recipe, 0, data, on_step=on_step, **options)
    return np.diff(stamps).tolist()


def time_steps(params: Params, steps, rounds, warmup):
    """Per-step seconds of each implementation, in `rounds` short blocks of `steps` steps taken in
    turn (the first `warmup` of each block dropped): short blocks spread the load of other work,
    which comes and goes within seconds, over all implementations alike."""
    short, data = with_steps(params, steps), training_rows(params, steps)
    times = {name: [] for name in IMPLEMENTATIONS}
    for name in round_robin(IMPLEMENTATIONS, rounds):
        times[name] += step_durations(short.model, short.train, data, IMPLEMENTATIONS[name][1])[warmup:]
    return times


def parameter_count(params: Params):
    """Our model's parameter count, after checking that the reference has the same."""
    ours = count_parameters(Transformer(params.model))
    reference = count_parameters(ReferenceTransformer(params.model))
    if ours != reference:
        raise RuntimeError(f"the reference has {reference} parameters, ours {ours}: not the same shape")
    return ours


def speedups(m):
    """How many times faster our step is than each other implementation's (median against median)."""
    ours = m["train_step_ms_ours"]
    return {
        "train_step_speedup": m["train_step_ms_reference"] / ours,  # the one of record
        "train_step_speedup_vs_foreach_adam": m["train_step_ms_reference_foreach_adam"] / ours,
        "train_step_speedup_vs_stock_dropout": m["train_step_ms_reference_stock_dropout"] / ours,
        "train_step_speedup_of_flat_adam": m["train_step_ms_ours_per_parameter_adam"] / ours,
    }


def measure(params: Params, quick):
    """(metrics, table) of the training step of every implementation, one thread."""
    m = {"parameters": parameter_count(params)}
    steps, rounds, warmup = (12, 2, 4) if quick else (16, 12, 4)
    print(f"training step: {rounds} rounds of {steps} steps per implementation", flush=True)
    times = time_steps(params, steps, rounds, warmup)
    rows, quartiles = [], {}
    for name, (key, _) in IMPLEMENTATIONS.items():
        ms = spread_ms(times[name])
        rows.append({"implementation": name, **ms, "steps_timed": len(times[name])})
        m[f"train_step_ms_{key}"] = ms["median_ms"]
        quartiles[f"train_step_ms_{key}_q1"], quartiles[f"train_step_ms_{key}_q3"] = ms["q1_ms"], ms["q3_ms"]
        print(
            f"  {name:32s} {ms['median_ms']:7.2f} ms per step (quartiles {ms['q1_ms']:.2f}-{ms['q3_ms']:.2f})"
        )
    m.update(speedups(m))
    m["train_step_steps_timed"] = len(times["ours"])
    m.update(quartiles)
    return m, pd.DataFrame(rows)

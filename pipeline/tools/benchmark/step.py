"""The training step, measured: ours against torch.nn.Transformer of the same shape, all trained by
the training loop (pipeline.core.loop.train, one seed); its FLOPs against this machine's float32
matmul peak."""

import dataclasses
import math
import time
from functools import partial

import numpy as np
import pandas as pd
import torch
from torch.utils.flop_counter import FlopCounterMode

from pipeline.core.batching import make_batch
from pipeline.core.data import synthetic_rows
from pipeline.core.loop import train
from pipeline.core.loss import smoothed_loss
from pipeline.model.reference import ReferenceTransformer
from pipeline.model.transformer import Transformer, count_parameters
from pipeline.tokens import VOCAB
from pipeline.tools.benchmark.timing import cores, round_robin, spread_ms


class ParameterAdam:
    """torch.optim.Adam over each parameter, as a user writes it (`foreach` and `fused` as torch takes
    them; torch's default on the CPU is neither): the comparison for the pipeline's flat Adam
    (pipeline.core.loop.FlatAdam)."""

    def __init__(self, weights, recipe, foreach=False, fused=None):
        self.weights = list(weights)
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


# name in the table: (JSON key, the training loop's options)
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
    train(config, recipe, [0], data, on_step=on_step, **options)
    return np.diff(stamps).tolist()


def time_steps(config, train, length, steps, rounds, warmup):
    """Per-step seconds of each implementation, in `rounds` short blocks of `steps` steps taken in
    turn (the first `warmup` of each block dropped): short blocks spread the load of other work,
    which comes and goes within seconds, over all implementations alike."""
    short, data = dataclasses.replace(train, steps=steps), synthetic_rows(steps * train.batch_size, length)
    times = {name: [] for name in IMPLEMENTATIONS}
    for name in round_robin(IMPLEMENTATIONS, rounds):
        times[name] += step_durations(config, short, data, IMPLEMENTATIONS[name][1])[warmup:]
    return times


def parameter_count(config):
    """Our model's parameter count, after checking that the reference has the same."""
    ours = count_parameters(Transformer(config))
    reference = count_parameters(ReferenceTransformer(config))
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


def measure(config, train, length, quick):
    """(metrics, table) of the training step of every implementation, one thread: the model `config`
    trained by `train` on rows of `length`."""
    m = {"parameters": parameter_count(config)}
    steps, rounds, warmup = (12, 2, 4) if quick else (16, 12, 4)
    print(f"training step: {rounds} rounds of {steps} steps per implementation", flush=True)
    times = time_steps(config, train, length, steps, rounds, warmup)
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


# ----------------------------------------------------------------------------------- FLOPs


def training_step_flops(c, tp, length):
    """Matmul FLOPs of one forward + backward pass (FlopCounterMode) of the model `c` trained by `tp`
    on rows of `length`, and the same counted by hand."""
    data = synthetic_rows(tp.batch_size, length)
    batch = make_batch(data["source"], data["target"], data["lengths"])
    model = Transformer(c).train()
    with FlopCounterMode(display=False) as counter:
        smoothed_loss(model(batch.src, batch.tgt_in), batch.target, tp.label_smoothing).backward()
    B, T = batch.src.shape
    d, n = c.d_model, B * T  # every row has T tokens on both sides
    attention_core = 2 * n * T * d  # Q K^T and weights V, over all heads
    encoder = 4 * n * d * d + attention_core + 2 * n * d * c.d_ff
    decoder = 4 * n * d * d + attention_core + 4 * n * d * d + attention_core + 2 * n * d * c.d_ff
    macs = c.layers * (encoder + decoder) + n * d * VOCAB
    # backward: a gradient for each input and each weight of every matmul, twice the forward
    return counter.get_total_flops(), 3 * 2 * macs


def matmul_peak(threads, n=2048, repeats=5):
    """The best GFLOP/s of an n x n float32 matmul over `repeats` timed runs (after one warm-up):
    a peak, so the best run, not the median."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    torch.set_num_threads(before)
    return 2 * n**3 / best / 1e9


def measure_flops(config, train, length, quick, step_seconds):
    """Metrics of the FLOPs of one step, given the median seconds of our step (measure)."""
    flops, flops_by_hand = training_step_flops(config, train, length)
    repeats = 2 if quick else 5
    m = {
        "train_step_flops": flops,
        "train_step_flops_by_hand": flops_by_hand,
        "train_step_gflops_per_s": flops / step_seconds / 1e9,
        "matmul_peak_gflops_1_thread": matmul_peak(1, repeats=repeats),
        "matmul_peak_gflops_all_threads": matmul_peak(cores(), repeats=repeats),
    }
    m["train_step_fraction_of_peak"] = m["train_step_gflops_per_s"] / m["matmul_peak_gflops_1_thread"]
    print(
        f"FLOPs: {flops / 1e6:.1f} MFLOP per step -> {m['train_step_gflops_per_s']:.2f} GFLOP/s, "
        f"{m['train_step_fraction_of_peak']:.1%} of the {m['matmul_peak_gflops_1_thread']:.1f} GFLOP/s "
        "one-thread matmul peak"
    )
    return m

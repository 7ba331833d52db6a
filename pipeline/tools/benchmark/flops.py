"""The FLOPs of one training step, and the share of this machine's float32 matmul peak it reaches."""

import math
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from pipeline.core.batching import make_batch
from pipeline.core.loss import smoothed_loss
from pipeline.core.params import Params
from pipeline.model.transformer import Transformer
from pipeline.tokens import VOCAB
from pipeline.tools.benchmark.machine import cores
from pipeline.tools.benchmark.workload import synthetic_data


def training_step_flops(params: Params):
    """Matmul FLOPs of one forward + backward pass (FlopCounterMode) and the same counted by hand."""
    c, tp = params.model, params.train
    data = synthetic_data(tp.batch_size, params.data.train_lengths[0])
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


def measure(params: Params, quick, step_seconds):
    """Metrics of the FLOPs of one step, given the median seconds of our step (train_step)."""
    flops, flops_by_hand = training_step_flops(params)
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

"""Lesson 10: "Con dos capas no necesitamos pre-norm". The lesson's model trained once more with the
other norm (pre-norm, x + Sublayer(LayerNorm(x)) with a final LayerNorm closing each stack, when the
pipeline's model is post-norm as the paper's; post-norm when an experiment made it pre-norm), same
data, recipe, seeds and device, and both scored greedily at the trained length on the same test set,
seed against seed.

The claim holds when post-norm, the paper's and the lesson's, sorts at least as well as pre-norm at
two layers: pre-norm's gain is for deep stacks (lesson 6), and here there is none to need.
"""

import dataclasses
import statistics

import numpy as np
import torch

from pipeline.core.batching import make_batch
from pipeline.core.data import TRAIN_PATH, load_npz
from pipeline.core.decoding import accuracy, greedy_cached, seed_test_draws
from pipeline.core.training import MODELS_DIR, resolve_device, train_model
from pipeline.infra.checkpoint import checkpoint_path, load_checkpoint
from pipeline.infra.params import Params

METRICS_PATH = "metrics/norm.json"
HEADLINE = ("post_seq_acc", "pre_seq_acc", "post_minus_pre")  # the rest: metrics/norm/summary.json


@torch.no_grad()
def greedy_accuracy(model, source, target, batch_size):
    """Exact-sequence accuracy of cached greedy decoding on one test set of equal-length rows."""
    model.eval()
    seed_test_draws(source.shape[1])
    preds = []
    for start in range(0, len(source), batch_size):
        rows = slice(start, start + batch_size)
        batch = make_batch(source[rows], target[rows], np.full(len(source[rows]), source.shape[1]))
        preds.append(greedy_cached(model, batch.src))
    return accuracy(torch.cat(preds), torch.as_tensor(target, dtype=torch.long))[0]


def compare_seed(params: Params, seed, source, target, batch_size):
    """Worker: train `seed` with the norm the pipeline's model lacks and score both."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    device = resolve_device(params.train.device)
    other = "pre" if params.model.norm == "post" else "post"
    other_params = dataclasses.replace(params, model=dataclasses.replace(params.model, norm=other))
    data = load_npz(TRAIN_PATH, ["source", "target", "lengths"])
    trained, losses = train_model(other_params, seed, data, device)
    models = {other: trained.cpu(), params.model.norm: load_checkpoint(checkpoint_path(MODELS_DIR, seed))[0]}
    return {
        **{f"{norm}_seq_acc": greedy_accuracy(m, source, target, batch_size) for norm, m in models.items()},
        f"{other}_loss_last100_mean": statistics.fmean(losses[-100:]),
    }


def paired_summary(per_seed):
    """Each seed's post - pre difference, and its mean with twice its standard error over seeds."""
    diffs = [r["post_seq_acc"] - r["pre_seq_acc"] for r in per_seed.values()]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0
    return {
        "post_minus_pre": statistics.fmean(diffs),
        "post_minus_pre_2se": 2 * se,
        "post_minus_pre_min": min(diffs),
        "post_minus_pre_max": max(diffs),
    }

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

from pipeline.core.data import load_npz
from pipeline.core.decoding import greedy_accuracy
from pipeline.core.params import Params
from pipeline.core.training import train_model
from pipeline.infra.device import set_up_worker
from pipeline.model.checkpoint import checkpoint_path, load_checkpoint

HEADLINE = ("post_seq_acc", "pre_seq_acc", "post_minus_pre")  # the rest: metrics/norm/summary.json


def compare_seed(params: Params, seed, source, batch_size, train_path, models_dir):
    """Worker: train `seed` with the norm the pipeline's model lacks and score both."""
    device = set_up_worker(params.train.device)
    other = "pre" if params.model.norm == "post" else "post"
    data = load_npz(train_path, ["source", "target", "lengths"])
    trained, losses = train_model(
        dataclasses.replace(params.model, norm=other), params.train, seed, data, device
    )
    models = {other: trained.cpu(), params.model.norm: load_checkpoint(checkpoint_path(models_dir, seed))[0]}
    return {
        **{f"{norm}_seq_acc": greedy_accuracy(m.eval(), source, batch_size)[0] for norm, m in models.items()},
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

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
from pipeline.infra.results import paired_difference
from pipeline.model.checkpoint import checkpoint_path, load_checkpoint

HEADLINE = ("post_seq_acc", "pre_seq_acc", "post_minus_pre")  # the rest: metrics/norm/by_seed.csv
COLUMNS = ["seed", "norm", "retrained", "seq_acc", "loss_last100_mean"]


def compare_seed(params: Params, seed, source, batch_size, train_path, models_dir):
    """Worker: train `seed` with the norm the pipeline's model lacks and score both: one row per norm
    (its loss only for the one trained here; the pipeline's is the train stage's)."""
    device = set_up_worker(params.train.device)
    other = "pre" if params.model.norm == "post" else "post"
    data = load_npz(train_path, ["source", "target", "lengths"])
    trained, losses = train_model(
        dataclasses.replace(params.model, norm=other), params.train, seed, data, device
    )
    models = {other: trained.cpu(), params.model.norm: load_checkpoint(checkpoint_path(models_dir, seed))[0]}
    loss = {other: statistics.fmean(losses[-100:]), params.model.norm: None}
    return [
        {
            "seed": seed,
            "norm": norm,
            "retrained": norm == other,
            "seq_acc": greedy_accuracy(m.eval(), source, batch_size)[0],
            "loss_last100_mean": loss[norm],
        }
        for norm, m in models.items()
    ]


def paired_summary(post, pre):
    """Post-norm against pre-norm (`post`, `pre`: exact sequences, one per seed, in the same order):
    their means, and the difference's mean with twice its standard error over seeds."""
    paired = paired_difference(post, pre)
    return {
        "post_seq_acc": statistics.fmean(post),
        "pre_seq_acc": statistics.fmean(pre),
        "post_minus_pre": paired["mean"],
        "post_minus_pre_2se": paired["two_se"],
    }

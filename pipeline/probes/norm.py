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

from pipeline.core.data import load_npz, read_test_sets
from pipeline.core.decoding import accuracy_by_length
from pipeline.core.loop import train
from pipeline.core.seed_axis import seed_groups
from pipeline.infra.outputs import paired_difference
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import seed_processes, set_up_worker
from pipeline.model.checkpoint import checkpoint_path, load_checkpoint
from pipeline.params.model import ModelConfig
from pipeline.params.sections import TrainParams

HEADLINE = ("post_seq_acc", "pre_seq_acc", "post_minus_pre")  # the rest: metrics/norm/by_seed.csv
COLUMNS = ["seed", "norm", "retrained", "seq_acc", "loss_last100_mean"]


NORMS = ("post", "pre")  # the lesson's comparison: the lesson's model is one of them, the other retrained


def compare_group(
    config: ModelConfig, recipe: TrainParams, seeds, source, batch_size, train_path, models_dir
):
    """Worker: train `seeds` of the pipeline's model (`config`, `recipe`) together with each norm of
    the comparison it lacks and score each against its checkpoint greedily on `source`: one row per
    seed and norm (its loss only for one trained here; the pipeline's is the train stage's)."""
    device = set_up_worker(recipe.device)
    data = load_npz(train_path, ["source", "target", "lengths"])
    retrained = {
        norm: train(dataclasses.replace(config, norm=norm), recipe, seeds, data, device)
        for norm in NORMS
        if norm != config.norm
    }
    test = {source.shape[1]: (source, np.sort(source, axis=1))}
    rows = []
    for i, seed in enumerate(seeds):
        models = {
            norm: (trained[i].cpu(), statistics.fmean(losses[i][-100:]))
            for norm, (trained, losses) in retrained.items()
        }
        models[config.norm] = (load_checkpoint(checkpoint_path(models_dir, seed))[0], None)
        rows += [
            {
                "seed": seed,
                "norm": norm,
                "retrained": norm in retrained,
                "seq_acc": accuracy_by_length(m.eval(), test, batch_size)[0][0]["seq_acc"],
                "loss_last100_mean": loss,
            }
            for norm, (m, loss) in models.items()  # those retrained first, then the checkpoint's
        ]
    return rows


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


def compare_norms(config, recipe: TrainParams, seeds, length, batch_size, train_path, test_path, models_dir):
    """Each of `seeds` retrained with the other norm, side by side, both scored at the trained
    `length`: (the rows, one per seed and norm; the paired summary), printing each seed's pair."""
    source = read_test_sets(test_path, [length])[length][0]
    groups = seed_groups(seeds, seed_processes(recipe.device))
    jobs = [(config, recipe, group, source, batch_size, train_path, models_dir) for group in groups]
    rows = [row for group_rows in run_jobs(compare_group, jobs, len(jobs)) for row in group_rows]
    acc = {norm: [r["seq_acc"] for r in rows if r["norm"] == norm] for norm in NORMS}
    for seed, post, pre in zip(seeds, acc["post"], acc["pre"], strict=True):
        print(f"seed {seed}: greedy at length {length}: post-norm {post:.2%}, pre-norm {pre:.2%}")
    return rows, paired_summary(acc["post"], acc["pre"])

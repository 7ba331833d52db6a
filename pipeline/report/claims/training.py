"""Claims on training (lesson 10, part 3): the loss at four steps, the floor that label smoothing
sets, the gap to it, and the wall time (metrics/train/summary.json and each seed's loss log)."""

import math
import statistics

import numpy as np

from pipeline.core import lesson
from pipeline.report.claims.rules import L10, Claim, note, per_seed, printed, seed_range, status_of

LOSS_MARGIN_RULE = "2 x batch-loss std around the trend of the last 100 steps"
WALL_TIME_CLAIM = '1,200 steps take "unos diez segundos"'
WALL_TIME = "not a result: this machine's wall time is in runs/train.json"
WALL_TIME_REASON = (
    "hardware-dependent: the lesson names no hardware for its ten seconds (it offers its notebook "
    "for Google Colab)"
)


def loss_noise(losses_by_seed, step, window=100):
    """Batch-to-batch spread of the loss over the `window` steps up to `step`, around the straight
    line those steps follow (the loss still falls there: that trend is not noise), mean over seeds."""
    spreads = []
    for losses in losses_by_seed:
        y = np.asarray(losses[max(0, step - window) : step], dtype=float)
        x = np.arange(len(y), dtype=float)
        residual = y - np.polyval(np.polyfit(x, y, 1), x)
        spreads.append(float(np.sqrt((residual**2).sum() / (len(y) - 2))))
    return statistics.fmean(spreads)


def training_claims(t, seeds, losses_by_seed, label_smoothing):
    return [
        *loss_claims(t, seeds, losses_by_seed),
        note("l10-time", L10, WALL_TIME_CLAIM, lesson.TRAINING_TIME, WALL_TIME, WALL_TIME_REASON),
        *floor_claims(t["loss_floor"], label_smoothing),
        *gap_claims(t, seeds, losses_by_seed),
    ]


def loss_claims(t, seeds, losses_by_seed):
    """The lesson printed one batch's loss every 300 steps: each against our seeds' range."""
    rows = []
    for step, value in lesson.LOSS_BY_STEP.items():
        id, key = f"l10-loss-{step}", f"loss_step_{step}"
        if f"{key}_seed{seeds[0]}" not in t:
            reason = "train.log_every does not divide this step"
            rows.append(note(id, L10, f"loss at step {step}", value, "not logged", reason))
            continue
        claim, values = f"loss at step {step} (one batch of 64)", per_seed(t, key, seeds)
        margin = 2 * loss_noise(losses_by_seed, step)
        rows.append(seed_range(id, L10, claim, value, values, margin, margin_rule=LOSS_MARGIN_RULE))
    return rows


def floor_claims(floor, label_smoothing):
    """The smoothed target q and its entropy, the lowest loss there is: arithmetic, exact."""
    correct = 1 - label_smoothing + label_smoothing / 11
    correct_term = -correct * math.log(correct)
    # fmt: off
    return [
        printed("l10-q-correct", L10, "label-smoothed target: correct token (eps 0.1, V 11)",
                lesson.SMOOTHED_TARGET_CORRECT, correct, 3),
        printed("l10-q-other", L10, "label-smoothed target: each of the other ten",
                lesson.SMOOTHED_TARGET_OTHER, label_smoothing / 11, 4),
        printed("l10-floor", L10, "minimum loss = entropy of q", lesson.LOSS_FLOOR, floor, 3),
        printed("l10-floor-correct", L10, "floor: the correct token's share",
                lesson.LOSS_FLOOR_CORRECT_SHARE, correct_term, 3),
        printed("l10-floor-others", L10, "floor: the other ten tokens' share",
                lesson.LOSS_FLOOR_OTHERS_SHARE, floor - correct_term, 3),
    ]
    # fmt: on


def gap_claims(t, seeds, losses_by_seed):
    """How far the final loss sits above the floor, with the step-1,200 loss's margin."""
    if "loss_step_1200" not in t:
        return []
    gaps = [v - t["loss_floor"] for v in per_seed(t, "loss_step_1200", seeds)]
    margin = 2 * loss_noise(losses_by_seed, 1200)
    claim, rule = "gap between the final loss and the floor", "as the step-1,200 loss"
    return [seed_range("l10-gap", L10, claim, lesson.LOSS_GAP_TO_FLOOR, gaps, margin, margin_rule=rule)]


PRENORM_CLAIM = (
    "with two layers post-norm needs no pre-norm: it sorts at least as well (greedy, exact sequences, "
    "same seeds and data)"
)


def norm_claims(n, seeds):
    """Post-norm against pre-norm at two layers, seed against seed (metrics/norm/summary.json): the
    claim holds unless post-norm is worse by more than twice the paired difference's standard error."""
    diffs = [n[f"post_seq_acc_seed{s}"] - n[f"pre_seq_acc_seed{s}"] for s in seeds]
    ok = n["post_minus_pre"] >= -n["post_minus_pre_2se"]
    shown = (
        f"post {100 * n['post_seq_acc']:.1f} %, pre {100 * n['pre_seq_acc']:.1f} %: post - pre "
        f"{100 * n['post_minus_pre']:+.2f} pt (seeds {100 * min(diffs):+.1f} to {100 * max(diffs):+.1f})"
    )
    tolerance = "post - pre >= -2 s.e. of the mean paired difference"
    below = sum(d < 0 for d in diffs)
    where = f"post-norm below pre-norm in {below} of {len(diffs)} seeds"
    return [Claim("l10-prenorm", L10, PRENORM_CLAIM, "post >= pre", shown, tolerance, status_of(ok), where)]

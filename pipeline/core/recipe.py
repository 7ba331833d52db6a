"""The paper's training recipe (section 5.3-5.4) as lesson 10 runs it: the schedule, the smoothed
target and the loss's floor; arithmetic only (the loss on logits is pipeline/core/loss.py)."""

import math


def lr_shape(step, warmup):
    """Equation (3) scaled to peak at 1: min(step / warmup, sqrt(warmup / step)), step from 1.

    The lesson's `LambdaLR(opt, lambda s: forma(s + 1, warmup=100))` multiplies the base rate by
    this (seeds/README.md): a linear warm-up to the base rate at `warmup`, then 1/sqrt decay.
    """
    if step < 1:
        raise ValueError(f"steps count from 1, got {step}")
    return min(step / warmup, math.sqrt(warmup / step))


def learning_rate(step, base_lr, warmup, floor=0.0):
    """The rate at `step`; after the warm-up it decays no lower than `floor` (the study's lr_floor)."""
    rate = base_lr * lr_shape(step, warmup)
    return max(rate, floor) if step >= warmup else rate


def recipe_rate(step, recipe):
    """The rate of `recipe` at `step`: a recipe may floor the decay (lr_floor; the lesson's does not)."""
    return learning_rate(step, recipe.lr, recipe.warmup, recipe.lr_floor)


def smoothed_target(label_smoothing, vocab):
    """q: the correct token gets 1 - eps + eps/V, every other token eps/V (section 5.4)."""
    other = label_smoothing / vocab
    return 1.0 - label_smoothing + other, other


def loss_floor(label_smoothing, vocab):
    """The least loss possible under label smoothing: the entropy of q (lesson 10, "el piso").

    Returns (floor, the correct token's share, the other tokens' share).
    """
    correct, other = smoothed_target(label_smoothing, vocab)
    from_correct = -correct * math.log(correct)
    from_others = -(vocab - 1) * other * math.log(other) if other > 0 else 0.0
    return from_correct + from_others, from_correct, from_others

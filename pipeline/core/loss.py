"""The training loss of the paper's recipe (section 5.4): cross-entropy against the label-smoothed
target, whose arithmetic (the target, the floor) is pipeline/core/recipe.py's.

Two spellings of one loss. `training_loss` is what the training loop minimises: F.cross_entropy in
the steps torch.func.vmap takes for it when seeds train together, written out, so that a seed trained
alone rounds as it does beside others (pipeline/model/transformer.py says why that matters).
`smoothed_loss` is F.cross_entropy itself, as the lesson writes it, for what measures a model outside
training (the probes' gradients, the numerics fingerprint, the speed benchmark's FLOPs).
"""

import torch
import torch.nn.functional as F

from pipeline.tokens import IGNORE


def smoothed_loss(logits, target, label_smoothing):
    """Cross-entropy against the label-smoothed target; padded positions (IGNORE) are skipped."""
    return F.cross_entropy(
        logits.flatten(0, 1), target.flatten(), label_smoothing=label_smoothing, ignore_index=IGNORE
    )


def training_loss(logits, target, label_smoothing):
    """smoothed_loss in vmap's steps: the log-probabilities; the mean over counted positions of the
    target's negative log-probability (a gather, not nll_loss) and of the negative sum over the
    vocabulary; then (1 - eps) x the first plus eps / V x the second."""
    log_p = F.log_softmax(logits.flatten(0, 1), dim=-1)
    target = target.flatten()
    counted = target != IGNORE
    count = counted.sum().to(log_p.dtype)
    picked = -log_p.gather(-1, torch.where(counted, target, 0)[:, None]).squeeze(-1)
    nll = torch.where(counted, picked, 0.0).sum() / count
    smooth = (-log_p.sum(-1)).masked_fill(~counted, 0.0).sum() / count
    return smooth * (label_smoothing / logits.shape[-1]) + nll * (1 - label_smoothing)

"""The training loss of the paper's recipe (section 5.4): cross-entropy against the label-smoothed
target, whose arithmetic (the target, the floor) is pipeline/core/recipe.py's."""

import torch.nn.functional as F

from pipeline.tokens import IGNORE


def smoothed_loss(logits, target, label_smoothing):
    """Cross-entropy against the label-smoothed target; padded positions (IGNORE) are skipped."""
    return F.cross_entropy(
        logits.flatten(0, 1), target.flatten(), label_smoothing=label_smoothing, ignore_index=IGNORE
    )

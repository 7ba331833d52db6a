"""The training losses: the paper's recipe (section 5.4), cross-entropy against the label-smoothed
target, whose arithmetic (the target, the floor) is pipeline/core/recipe.py's; and the study's count
hint, an auxiliary target trained beside the sort (task hinting, Awasthi and Gupta, 2023), pointed
at what the study's diagnosis finds the model miscounting.

At each decoder position the model has just read the last digit it wrote; it must write that digit
again exactly while copies of it remain. The hint is a linear head on the decoder's last states
that regresses that number, the copies of the digit just written still to come; its squared error,
times the hint's weight (study.train.count_hint), joins the sort's loss. A count read off linearly
is one a longer input can make larger. The head serves training only: the model kept is the sort's.
"""

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.tokens import IGNORE


def smoothed_loss(logits, target, label_smoothing):
    """Cross-entropy against the label-smoothed target; padded positions (IGNORE) are skipped."""
    return F.cross_entropy(
        logits.flatten(0, 1), target.flatten(), label_smoothing=label_smoothing, ignore_index=IGNORE
    )


def copies_to_come(tgt_in, target):
    """(B, T): at position t, how many of target[t:] equal tgt_in[t], the digit written last
    (0 after BOS, which is never a target); padded target positions count none."""
    T = target.shape[1]
    same = (target[:, None, :] == tgt_in[:, :, None]) & (target != IGNORE)[:, None, :]  # (B, t, j)
    ahead = torch.ones(T, T, dtype=torch.bool, device=target.device).triu()  # j >= t
    return (same & ahead).sum(-1).to(torch.float32)


class CountHint(nn.Module):
    """The hint's head and its share of the loss."""

    def __init__(self, d_model, weight):
        super().__init__()
        self.head, self.weight = nn.Linear(d_model, 1), weight

    def loss(self, model, batch, label_smoothing):
        """The sort's smoothed loss plus weight x the mean squared error of the count, over the
        positions the sort's loss counts."""
        memory = model.encode(batch.src, batch.src_mask)
        states = model.decode_states(batch.tgt_in, memory, batch.src_mask)  # (B, T, d_model)
        sort = smoothed_loss(model.logits(states), batch.target, label_smoothing)
        counted = batch.target != IGNORE
        error = self.head(states)[..., 0] - copies_to_come(batch.tgt_in, batch.target)
        return sort + self.weight * error[counted].square().mean()

"""The length study's attention weightings, beside the paper's softmax (pipeline/model/attention.py),
each the class of a name of `model.attention` (pipeline/study/model.py): log_length multiplies each
query's scores by log n, n the keys it may look at (Chiang and Cholak, 2022); sigmoid weighs each key on
its own, so attention sums (Ramapuram et al., 2024); sigmoid_log multiplies the sigmoid's scores by log
n as log_length does the softmax's; none attends to nothing; split gives half the heads softmax, half
sigmoid; sigmoid_st rounds the sigmoid's gates to 0 or 1 going forward and keeps its gradient going
back; hard_sigmoid limits a gate to exactly 0 and 1. The parameter names one weighting for every
attention or one per kind (encoder self / decoder self / cross: pipeline.study.options.attention_kinds).
`rounded_gates` reads a model with every gate rounded, the study's test of how it counts.
"""

import contextlib

import torch
from torch import nn

from pipeline.model.attention import Softmax, softmax_weights
from pipeline.model.transformer import MultiHeadAttention


def visible_keys(mask, size):
    """How many keys each query may look at, from a boolean or additive mask: (..., T_q, 1), or the
    scalar `size` without a mask."""
    if mask is None:
        return torch.tensor(float(size))
    allowed = ~mask if mask.dtype == torch.bool else torch.isfinite(mask)
    return allowed.sum(-1, keepdim=True).clamp(min=1).to(torch.float32)


class LogLength(Softmax):
    """Scores times log n, n the keys the query may look at, then softmax (Chiang and Cholak, 2022;
    Nakanishi, 2025): a softmax over more keys is made sharper in step, so that one key can keep
    the weight it had among fewer. Scaled before the mask: a query that sees one key has log 1 = 0
    for all its scores."""

    def forward(self, scores, mask):
        scores = scores * visible_keys(mask, scores.shape[-1]).to(scores.dtype).log()
        return softmax_weights(scores, mask)


class Sigmoid(nn.Module):
    """Each key weighted on its own, sigmoid(score + b_h), with a learned bias per head (Ramapuram
    et al., 2024, section 3): the weights do not sum to 1, so attention adds instead of averaging
    and a count read through it does not shrink as the input grows. Ramapuram et al. fix
    b = -log n, which would divide by the length again; here b is learned from `sigmoid_bias`
    (a negative start keeps most keys near 0). Masked keys get sigmoid(-inf) = 0 exactly."""

    def __init__(self, heads, sigmoid_bias):
        super().__init__()
        self.bias = nn.Parameter(torch.full((heads, 1, 1), float(sigmoid_bias)))  # (h, 1, 1)

    def gates(self, scores, mask):
        if mask is not None:
            scores = scores + mask
        return torch.sigmoid(scores + self.bias.to(scores.dtype))

    def forward(self, scores, mask):
        return self.gates(scores, mask)

    def rounded(self, weights):
        """These weights with every gate rounded to 0 or 1 (the study's test of how it counts, read
        through a forward hook: pipeline/model/hooks.py)."""
        return (weights > 0.5).to(weights.dtype)


class SigmoidLog(Sigmoid):
    """sigmoid(log n * score + b_h), n the keys the query may look at: Scalable-Softmax's log n
    (Nakanishi, 2025) on a gate. Each gate's slope grows with the length, so the keys just short of
    the threshold, which leak a little each into a sum, leak less when there are more of them."""

    def gates(self, scores, mask):
        return super().gates(scores * visible_keys(mask, scores.shape[-1]).to(scores.dtype).log(), mask)


class StraightThrough(Sigmoid):
    """Gates that are 0 or 1 in the forward pass, sigmoid(score + b_h) rounded, with the sigmoid's
    gradient in the backward pass (the straight-through estimator, Bengio et al., 2013): attention
    sums whole keys, as a count does, while the bias and scores still learn."""

    def forward(self, scores, mask):
        soft = self.gates(scores, mask)
        return soft + ((soft > 0.5).to(soft.dtype) - soft).detach()

    def rounded(self, weights):
        return weights  # rounded in the forward pass already


class HardSigmoid(Sigmoid):
    """clamp((score + b_h) / 4 + 1/2, 0, 1): the sigmoid's slope at 0, limited to exactly 0 and 1, so
    a key short of the threshold adds nothing to a sum over any number of keys. A gate outside (0, 1)
    passes no gradient: start the bias near 0 (model.sigmoid_bias), not shut."""

    def gates(self, scores, mask):
        if mask is not None:
            scores = scores + mask
        return ((scores + self.bias.to(scores.dtype)) * 0.25 + 0.5).clamp(0.0, 1.0)


class Split(Sigmoid):
    """Half the heads softmax, half sigmoid: heads that pick one key (the next digit up) beside heads
    that count (how many copies are left). The softmax heads keep the sigmoid's unused bias."""

    def forward(self, scores, mask):
        half = scores.shape[1] // 2  # (B, h, T_q, T_k): heads along dim 1
        heads = scores.shape[1]  # a mask with a bias per head (ALiBi's) has them third from the end
        per_head = mask is not None and mask.dim() >= 3 and mask.shape[-3] == heads > 1
        picked = softmax_weights(scores[:, :half], mask[..., :half, :, :] if per_head else mask)
        return torch.cat([picked, super().forward(scores, mask)[:, half:]], dim=1)

    def rounded(self, weights):
        half = weights.shape[1] // 2  # the softmax heads are no gates
        return torch.cat([weights[:, :half], super().rounded(weights[:, half:])], dim=1)


class NoAttention(Softmax):
    """Weights 0 everywhere: the sublayer adds only W^O's bias, so each token stays on its own and
    its representation cannot depend on how long the sequence is."""

    def forward(self, scores, mask):
        return torch.zeros_like(scores)


@contextlib.contextmanager
def rounded_gates(module):
    """Inside the block, every sigmoid-gated attention of `module` weighs each key by its gate
    rounded to 0 or 1 (`Sigmoid.rounded`), through a forward hook, so that the forward path carries
    no switch; yields how many attentions are gated (0: none to round)."""
    gated = [sub.weights for sub in module.modules() if isinstance(sub, MultiHeadAttention)]
    gated = [w for w in gated if isinstance(w, Sigmoid)]
    handles = [w.register_forward_hook(lambda m, _inputs, weights: m.rounded(weights)) for w in gated]
    try:
        yield len(gated)
    finally:
        for handle in handles:
            handle.remove()

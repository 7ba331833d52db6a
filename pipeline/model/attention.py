"""How attention turns scores into weights: the paper's softmax and the length study's alternatives.

Each function takes the scaled scores (B, h, T_q, T_k) and the additive mask (0 where a query may
look, -inf where it may not; broadcastable, or None) and returns the weights. `WEIGHTS` maps the
names of `model.attention` to them.
"""

import torch


def visible_keys(mask, size):
    """How many keys each query may look at, from a boolean or additive mask: (..., T_q, 1), or the
    scalar `size` without a mask."""
    if mask is None:
        return torch.tensor(float(size))
    allowed = ~mask if mask.dtype == torch.bool else torch.isfinite(mask)
    return allowed.sum(-1, keepdim=True).clamp(min=1).to(torch.float32)


def softmax_weights(scores, mask):
    """softmax(scores + mask) over the keys (equation 1)."""
    if mask is not None:
        scores = scores + mask  # -inf where it may not look
    return scores.softmax(-1)


def log_length_weights(scores, mask):
    """Scores times log n, n the keys the query may look at, then softmax (Chiang and Cholak, 2022;
    Nakanishi, 2025): a softmax over more keys is made sharper in step, so that one key can keep
    the weight it had among fewer. Scaled before the mask: a query that sees one key has log 1 = 0
    for all its scores."""
    scores = scores * visible_keys(mask, scores.shape[-1]).to(scores.dtype).log()
    return softmax_weights(scores, mask)


WEIGHTS = {"softmax": softmax_weights, "log_length": log_length_weights}

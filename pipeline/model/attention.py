"""How attention turns scores into weights: the paper's softmax (equation 1).

A weighting is a small module called with the scaled scores (B, h, T_q, T_k) and the additive mask
(0 where a query may look, -inf where it may not; broadcastable, or None); it returns the weights.
A MultiHeadAttention takes one as a component (the paper's softmax unless another is given).
"""

from torch import nn


def softmax_weights(scores, mask):
    """softmax(scores + mask) over the keys (equation 1)."""
    if mask is not None:
        scores = scores + mask  # -inf where it may not look
    return scores.softmax(-1)


class Softmax(nn.Module):
    """The paper's weights: they sum to 1 over the keys, an average (equation 1)."""

    def forward(self, scores, mask):
        return softmax_weights(scores, mask)

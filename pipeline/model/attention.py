"""How attention turns scores into weights: the paper's softmax (equation 1).

A weighting is a small module called with the scaled scores (B, h, T_q, T_k) and the additive mask
(0 where a query may look, -inf where it may not; broadcastable, or None); it returns the weights.
Each class fills its name in the registry of `model.attention` (pipeline.params.model.ATTENTION).
The length study's weightings (sigmoid gates and others that add instead of averaging) are its own:
pipeline/study/attention.py, and its signed count pipeline/study/signed_count.py.
"""

from torch import nn

from pipeline.params.model import ATTENTION


def softmax_weights(scores, mask):
    """softmax(scores + mask) over the keys (equation 1)."""
    if mask is not None:
        scores = scores + mask  # -inf where it may not look
    return scores.softmax(-1)


@ATTENTION.implements("softmax")
class Softmax(nn.Module):
    """The paper's weights: they sum to 1 over the keys, an average (equation 1)."""

    def __init__(self, heads, sigmoid_bias):
        super().__init__()

    def forward(self, scores, mask):
        return softmax_weights(scores, mask)

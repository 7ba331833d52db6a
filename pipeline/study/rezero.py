"""ReZero residuals (Bachlechner et al., 2020), the length study's `model.norm: rezero`: x + a
Sublayer(x) with a learned scalar a from 0. Nothing rescales the stream between the sublayers, so
every sum written into it stays on one scale until the stack's closing LayerNorm (`closes_stack`),
as the lesson's pre-norm leaves it (pipeline/model/transformer.py)."""

import torch
from torch import nn

from pipeline.model.transformer import Dropout


class ReZero(nn.Module):
    closes_stack = True  # the stream is never normalised inside a stack

    def __init__(self, d_model, dropout):
        super().__init__()
        self.drop = Dropout(dropout)
        self.scale = nn.Parameter(torch.zeros(()))

    def forward(self, x, sublayer):
        return x + self.scale * self.drop(sublayer(x))

    def without_sum(self, x, sublayer):
        return self.scale * self.drop(sublayer(x))

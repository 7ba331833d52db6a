"""ReZero residuals (Bachlechner et al., 2020), the length study's `model.norm: rezero`: x + a
Sublayer(x) with a learned scalar a from 0. Nothing rescales the stream between the sublayers, so
every sum written into it stays on one scale until the stack's closing LayerNorm (NORMS'
closes_stack). It fills its name in the registry of `model.norm` beside the paper's post-norm and
the lesson's pre-norm (pipeline/model/transformer.py)."""

import torch
from torch import nn

from pipeline.model.transformer import Dropout
from pipeline.params.model import NORMS


@NORMS.implements("rezero")
class ReZero(nn.Module):
    def __init__(self, d_model, dropout):
        super().__init__()
        self.drop = Dropout(dropout)
        self.scale = nn.Parameter(torch.zeros(()))

    def forward(self, x, sublayer):
        return x + self.scale * self.drop(sublayer(x))

    def without_sum(self, x, sublayer):
        return self.scale * self.drop(sublayer(x))

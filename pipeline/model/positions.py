"""How the model knows where a token is: the paper's sinusoids (section 3.5) and its learned
alternative, one trained vector per position ("nearly identical results", section 3.5).

Each scheme is a small module with hooks the Transformer calls on its one path, so no scheme needs a
branch there: `vectors` (what embed() adds to the token embeddings), `source` and `memory_mask` (the
source tokens the encoder reads, and the padding mask of the memory they become), `encoder_bias`
(added to the encoder's self-attention scores), and `decoder_draw` (positions a decoding session
fixes once per source; a scheme keeps no state between calls). Each class fills its name in the
registry of `model.positions` (pipeline.params.model.POSITIONS). The length study's schemes
(randomized, alibi, bos, offset, ...) override the same hooks in pipeline/study/positions.py.
"""

import math

import torch
from torch import nn

from pipeline.params.model import POSITIONS


def sinusoidal_positions(max_len, d_model):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(...) (section 3.5)."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)  # (d_model/2,)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
    return pe  # (max_len, d_model)


class NoPositions(nn.Module):
    """No position information at all: the base every scheme overrides a hook of."""

    def __init__(self, config):
        super().__init__()

    def vectors(self, tokens, start, encoder, drawn=None):
        """What embed() adds for positions start..start+T: (T, d_model), (B, T, d_model) or None."""
        return None

    def source(self, src):
        """The source tokens (B, T) as the encoder reads them."""
        return src

    def memory_mask(self, src_mask):
        """The source's padding mask (B, 1, 1, T) as the memory's keys need it, or None."""
        return src_mask

    def encoder_bias(self, size):
        """(h, T, T) added to the encoder's self-attention scores, or None."""
        return None

    def decoder_draw(self, memory):
        """The positions a decoding session fixes once per source, drawn right after the encoder's
        (B, T_enc): randomized's at test time; None for every other scheme, and in training."""
        return None


@POSITIONS.implements("sinusoidal")
class Sinusoidal(NoPositions):
    """The paper's: PE[position] added in both stacks (section 3.5)."""

    def __init__(self, config):
        super().__init__(config)
        self.register_buffer("pe", sinusoidal_positions(config.max_len, config.d_model), persistent=False)

    def vectors(self, tokens, start, encoder, drawn=None):
        return self.pe[start : start + tokens.shape[1]]


@POSITIONS.implements("learned")
class Learned(NoPositions):
    """One trained vector per position, in both stacks."""

    def __init__(self, config):
        super().__init__(config)
        self.table = nn.Embedding(config.max_len, config.d_model)

    def vectors(self, tokens, start, encoder, drawn=None):
        return self.table.weight[start : start + tokens.shape[1]]

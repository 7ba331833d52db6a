"""How the model knows where a token is: the paper's sinusoids (section 3.5) and its learned
alternative, one trained vector per position ("nearly identical results", section 3.5). Each is a
small module whose `vectors(tokens, start)` is what embed() adds to the token embeddings at positions
start..start+T; POSITIONS names them as `model.positions` does.
"""

import math

import torch
from torch import nn


def sinusoidal_positions(max_len, d_model):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(...) (section 3.5)."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)  # (d_model/2,)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
    return pe  # (max_len, d_model)


class Sinusoidal(nn.Module):
    """The paper's: PE[position] added in both stacks (section 3.5)."""

    def __init__(self, config):
        super().__init__()
        self.register_buffer("pe", sinusoidal_positions(config.max_len, config.d_model), persistent=False)

    def vectors(self, tokens, start):
        """(T, d_model): the positions start..start+T."""
        return self.pe[start : start + tokens.shape[1]]


class Learned(nn.Module):
    """One trained vector per position, in both stacks."""

    def __init__(self, config):
        super().__init__()
        self.table = nn.Embedding(config.max_len, config.d_model)

    def vectors(self, tokens, start):
        return self.table.weight[start : start + tokens.shape[1]]


POSITIONS = {"sinusoidal": Sinusoidal, "learned": Learned}  # model.positions

"""The signed count read per digit through a hard threshold (cross-attention `signed_owed`): for each
token of the vocabulary, whether a copy is still owed (+1), none is (0), or one too many was written
(-1), however many copies the input holds. The decision "is a copy of this digit still owed" then
reads the same at length 100 as at 10: what the decoder sees is a function of which digits are owed,
never of how many.

The signed count (pipeline/study/signed_count.py) sums g_v (c_in_v - c_written_v) V_v over the
vocabulary, g_v the gate a digit's key opens and V_v its value, because a digit written and the same
digit in the input have the same key and value. This layer computes the same gates the same way (one
query, the input's keys, then the keys of the tokens written), splits each side by token, and sums
g_v clamp(c_in_v - c_written_v, -1, 1) V_v. It needs each memory row's token: the encoder sees each
token alone (check_signed_count), so a memory row is its token's row of the vocabulary's table (the
encoder run on every token once), up to rounding; the nearest row names it.
"""

import dataclasses
import math
from dataclasses import dataclass

import torch

from pipeline.model.transformer import additive_mask
from pipeline.study.signed_count import Signed, SignedCountLayer, SignedLayerCache
from pipeline.tokens import VOCAB


class SignedOwed(Signed):
    """The signed count's gates, read per digit through a hard threshold (OwedCountLayer)."""


@dataclass
class FedTokens:
    """What the owed count reads of the tokens fed: their rows through the encoder (B, T, d_model),
    the tokens (B, T), and the vocabulary's table, every token's row (VOCAB, d_model)."""

    rows: torch.Tensor
    tokens: torch.Tensor
    table: torch.Tensor


def one_hot(tokens, dtype):
    """(..., VOCAB): 1 at each token."""
    return (tokens[..., None] == torch.arange(VOCAB, device=tokens.device)).to(dtype)


def nearest_tokens(rows, table):
    """The token whose table row is nearest each row (B, T, d_model): (B, T)."""
    return ((rows[:, :, None, :] - table) ** 2).sum(-1).argmin(-1)


def valid_keys(memory_mask, memory):
    """(B, T_enc, 1): 1 where a memory row is a token of the input, 0 where padded."""
    if memory_mask is None:
        return memory.new_ones(memory.shape[0], memory.shape[1], 1)
    return torch.isfinite(memory_mask)[:, 0, 0, :, None].to(memory.dtype)


def owed_count(attention, q, kv, written_kv, counts, mask=None, written_mask=None):
    """Sum over the vocabulary of g_v clamp(c_in_v - c_written_v, -1, 1) V_v, then W^O.

    `kv` and `written_kv`: the input's and the written tokens' keys and values (B, h, T, d_k), from
    which the gates are computed as the signed count computes them (so that every reader of its
    weights sees the same); `counts`: (in_hot (B, T_enc, V), written_hot (B, T, V), values (1, h, V,
    d_k)), each input row's token (zero where padded), each written token, the vocabulary's values.
    A digit's gate is its gated copies over its copies, on both sides together."""
    (k, _), (k_w, _) = kv, written_kv
    in_hot, written_hot, values = counts
    scale, weights = math.sqrt(attention.d_k), attention.weights
    read = weights(q @ k.transpose(-2, -1) / scale, additive_mask(mask, q.dtype)) @ in_hot[:, None]
    written = weights(q @ k_w.transpose(-2, -1) / scale, additive_mask(written_mask, q.dtype))
    written = written @ written_hot[:, None]  # (B, h, T, V) both: g_v times the copies of v
    c_in = in_hot.sum(1, keepdim=True)  # (B, 1, V)
    steps = q.shape[2]  # the positions asked for: every one in training, the last one when decoding
    c_written = written_hot.cumsum(1)[:, written_hot.shape[1] - steps :]  # (B, T_q, V): up to each
    gates = (read + written) / (c_in + c_written).clamp(min=1)[:, None]
    owed = (c_in - c_written).clamp(-1.0, 1.0)[:, None]  # (B, 1, T, V)
    return attention.wo(((gates * owed) @ values).transpose(1, 2).flatten(2))


@dataclass
class OwedLayerCache(SignedLayerCache):
    """An owed count layer's cache: also the memory (to name its tokens once the table is known, at
    the first step), its rows' tokens (B, T_enc, V) and the tokens written (B, steps)."""

    memory: torch.Tensor = None
    in_hot: torch.Tensor = None
    written_tokens: torch.Tensor = None

    def reorder(self, rows, n):
        super().reorder(rows, n)
        self.in_hot = self.in_hot[rows]
        self.written_tokens[:, :n] = self.written_tokens[rows, :n]


def vocabulary_rows(model, device):
    """Every token's row through the encoder (VOCAB, d_model): the tokens read as one sequence, or in
    sequences of max_len where the model reads fewer than VOCAB tokens (the encoder sees each token
    alone, so the rows are the same either way)."""
    every = torch.arange(VOCAB, device=device)
    return torch.cat(
        [SignedCountLayer.rows_fed(model, part[None])[0] for part in every.split(model.config.max_len)]
    )


class OwedCountLayer(SignedCountLayer):
    """The paper's decoder layer whose cross-attention is the owed count."""

    @staticmethod
    def rows_fed(model, tokens):
        return FedTokens(
            SignedCountLayer.rows_fed(model, tokens), tokens, vocabulary_rows(model, tokens.device)
        )

    def values_of(self, table):
        return self.cross.project_kv(table[None])[1]  # (1, h, V, d_k)

    def forward(self, y, memory, self_mask, memory_mask=None, fed=None):
        in_hot = one_hot(nearest_tokens(memory, fed.table), memory.dtype) * valid_keys(memory_mask, memory)
        counts = (in_hot, one_hot(fed.tokens, memory.dtype), self.values_of(fed.table))
        written = self.cross.project_kv(fed.rows)

        def cross(h):
            q = self.cross.project_q(h)
            kv = self.cross.project_kv(memory)
            return owed_count(self.cross, q, kv, written, counts, memory_mask, self_mask)

        return self.sublayers(y, lambda h: self.attn(h, h, self_mask), cross)

    def step(self, y, cache: OwedLayerCache, t, memory_mask=None, fed=None):
        self_attn = self.cached_self_attention(cache, t)
        if t == 0:
            tokens = nearest_tokens(cache.memory, fed.table)
            cache.in_hot = one_hot(tokens, cache.memory.dtype) * valid_keys(memory_mask, cache.memory)
        cache.written_k[:, :, t : t + 1], cache.written_v[:, :, t : t + 1] = self.cross.project_kv(fed.rows)
        cache.written_tokens[:, t : t + 1] = fed.tokens
        written = (cache.written_k[:, :, : t + 1], cache.written_v[:, :, : t + 1])
        written_hot = one_hot(cache.written_tokens[:, : t + 1], y.dtype)
        counts = (cache.in_hot, written_hot, self.values_of(fed.table))

        def cross(h):
            q = self.cross.project_q(h)
            return owed_count(self.cross, q, (cache.cross_k, cache.cross_v), written, counts, memory_mask)

        return self.sublayers(y, self_attn, cross)

    def start_cache(self, memory, steps):
        signed = super().start_cache(memory, steps)
        tokens = torch.zeros(memory.shape[0], steps, dtype=torch.long, device=memory.device)
        kept = {f.name: getattr(signed, f.name) for f in dataclasses.fields(signed)}
        return OwedLayerCache(**kept, memory=memory, written_tokens=tokens)

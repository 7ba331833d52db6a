"""The length study's signed count: a cross-attention that reads the input's tokens and, through the
same query, key, value and gate and with the opposite sign, the tokens written so far. Where a
digit's key opens the gate, the head holds (copies in the input) - (copies written), exactly: a
prior built for sorting, which the report names as one.

The study's model composes it (pipeline/study/model.py): `Signed` is the weighting `signed` of
`model.attention` (the sigmoid's gates), and `SignedCountLayer` the decoder layer that
cross-attention brings, a subclass of the paper's that also reads the tokens fed. Each token fed
passes through the encoder as the input's own tokens do (`rows_fed`), so that a digit written and
the same digit in the input have the same key and value; that holds only where the encoder sees each
token alone
(encoder attention none, positions bos: pipeline/study/params.py, check_signed_count).

Two names read the difference through a bound, so that "is a copy still owed" reads the same whatever
the count: `signed_tanh` passes each coordinate of the heads' difference through tanh, `signed_clamp`
clamps it to [-1, 1], a hard threshold at one copy's worth. A coordinate that one digit's value alone
feeds then says owed or not; one that several digits feed saturates on their sum, so the bound is per
digit only as far as training gives each digit coordinates of its own.
"""

import math
from dataclasses import dataclass

import torch

from pipeline.model.cache import LayerCache
from pipeline.model.transformer import DecoderLayer, additive_mask
from pipeline.study.attention import Sigmoid


class Signed(Sigmoid):
    """The signed count's gates: the sigmoid's, applied alike to the input's keys and to the keys of
    the tokens written so far (SignedCountLayer); `owed` reads the heads' difference (as counted)."""

    @staticmethod
    def owed(difference):
        return difference


class SignedTanh(Signed):
    """The signed count with each coordinate of the difference through tanh: bounded by 1."""

    owed = staticmethod(torch.tanh)


class SignedClamp(Signed):
    """The signed count with each coordinate of the difference clamped to [-1, 1]: a hard threshold."""

    @staticmethod
    def owed(difference):
        return difference.clamp(-1.0, 1.0)


def signed_count(attention, q, kv, written_kv, mask=None, written_mask=None):
    """The input's gated values minus the gated values of the tokens written so far, one query, one
    gate, one value map for both, read through the weighting's `owed`, then W^O once (`attention`: a
    MultiHeadAttention)."""
    k, v = kv
    k_w, v_w = written_kv
    scale = math.sqrt(attention.d_k)
    weights = attention.weights
    read = weights(q @ k.transpose(-2, -1) / scale, additive_mask(mask, q.dtype)) @ v
    written = weights(q @ k_w.transpose(-2, -1) / scale, additive_mask(written_mask, q.dtype)) @ v_w
    return attention.wo(weights.owed(read - written).transpose(1, 2).flatten(2))


@dataclass
class SignedLayerCache(LayerCache):
    """A signed count layer's cache: also the keys and values of the tokens written (B, h, steps, d_k)."""

    written_k: torch.Tensor = None
    written_v: torch.Tensor = None

    def reorder(self, rows, n):
        super().reorder(rows, n)
        self.written_k[:, :, :n] = self.written_k[rows, :, :n]
        self.written_v[:, :, :n] = self.written_v[rows, :, :n]


class SignedCountLayer(DecoderLayer):
    """The paper's decoder layer whose cross-attention is the signed count."""

    @staticmethod
    def rows_fed(model, tokens):
        """Each token fed (B, T) through the encoder as the input's own tokens go: (B, T, d_model)."""
        x = model.embed(tokens, encoder=True)
        for layer in model.encoder:
            x = layer(x)
        return model.encoder_norm(x)

    def forward(self, y, memory, self_mask, memory_mask=None, fed=None):
        """All positions at once; the tokens written read under the causal mask."""
        written = self.cross.project_kv(fed)

        def cross(h):
            q = self.cross.project_q(h)
            return signed_count(self.cross, q, self.cross.project_kv(memory), written, memory_mask, self_mask)

        return self.sublayers(y, lambda h: self.attn(h, h, self_mask), cross)

    def step(self, y, cache: SignedLayerCache, t, memory_mask=None, fed=None):
        """One new position t: the token fed (`fed`, its row) joins the cached written rows."""
        self_attn = self.cached_self_attention(cache, t)
        cache.written_k[:, :, t : t + 1], cache.written_v[:, :, t : t + 1] = self.cross.project_kv(fed)
        written = (cache.written_k[:, :, : t + 1], cache.written_v[:, :, : t + 1])

        def cross(h):
            q = self.cross.project_q(h)
            return signed_count(self.cross, q, (cache.cross_k, cache.cross_v), written, memory_mask)

        return self.sublayers(y, self_attn, cross)

    def start_cache(self, memory, steps):
        plain = super().start_cache(memory, steps)
        room = [torch.empty_like(plain.self_k) for _ in range(2)]
        return SignedLayerCache(plain.self_k, plain.self_v, plain.cross_k, plain.cross_v, *room)

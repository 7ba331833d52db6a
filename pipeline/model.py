"""The encoder-decoder Transformer of lesson 10, from scratch (Vaswani et al., 2017, section 3).

Reads top-down, small to large: positions, attention, feed-forward, encoder layer, decoder layer,
model. Masks are boolean with True = "may not look" (the lesson's `prohibido`), broadcastable to
(B, h, T_q, T_k).
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

from pipeline.params import ModelParams
from pipeline.tokens import VOCAB


def sinusoidal_positions(max_len, d_model):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(...) (section 3.5)."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)  # (d_model/2,)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
    return pe  # (max_len, d_model)


def causal_mask(size, device=None):
    """(T, T), True above the diagonal: token i may not look at any j > i (section 3.2.3)."""
    return torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)


def padding_mask(lengths, size):
    """(B, 1, 1, T), True at padded key positions, from each row's real length."""
    positions = torch.arange(size, device=lengths.device)
    return (positions[None, :] >= lengths[:, None])[:, None, None, :]


class MultiHeadAttention(nn.Module):
    """Multi-head attention (section 3.2.2): self-attention when xq is xkv, cross otherwise."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.heads, self.d_k = heads, d_model // heads
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(d_model, d_model) for _ in range(4))

    def split_heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def forward(self, xq, xkv, mask=None, return_weights=False):
        q, k, v = (
            self.split_heads(self.wq(xq)),
            self.split_heads(self.wk(xkv)),
            self.split_heads(self.wv(xkv)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, h, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = scores.softmax(-1)  # (B, h, T_q, T_k)
        out = (weights @ v).transpose(1, 2).flatten(2)  # (B, T_q, h * d_k)
        out = self.wo(out)
        return (out, weights) if return_weights else out


def feed_forward(d_model, d_ff):
    """Position-wise FFN (section 3.3): up to d_ff, ReLU, back down to d_model."""
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class Residual(nn.Module):
    """One sublayer's wrapper: post-norm LayerNorm(x + Sublayer(x)) as the paper, or pre-norm."""

    def __init__(self, d_model, dropout, norm):
        super().__init__()
        self.norm, self.ln, self.drop = norm, nn.LayerNorm(d_model), nn.Dropout(dropout)

    def forward(self, x, sublayer):
        if self.norm == "pre":
            return x + self.drop(sublayer(self.ln(x)))
        return self.ln(x + self.drop(sublayer(x)))


class EncoderLayer(nn.Module):
    """Self-attention, then FFN, each wrapped in residual + LayerNorm (section 3.1)."""

    def __init__(self, d_model, heads, d_ff, dropout, norm="post"):
        super().__init__()
        self.attn, self.ffn = MultiHeadAttention(d_model, heads), feed_forward(d_model, d_ff)
        self.sub = nn.ModuleList(Residual(d_model, dropout, norm) for _ in range(2))

    def forward(self, x, src_mask=None):
        x = self.sub[0](x, lambda h: self.attn(h, h, src_mask))
        return self.sub[1](x, self.ffn)


@dataclass
class DecoderTrace:
    """What a decoder layer looked at: cross-attention weights (B, h, T_dec, T_enc)."""

    cross_attention: torch.Tensor


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the memory, FFN (section 3.1)."""

    def __init__(self, d_model, heads, d_ff, dropout, norm="post"):
        super().__init__()
        self.attn, self.cross = MultiHeadAttention(d_model, heads), MultiHeadAttention(d_model, heads)
        self.ffn = feed_forward(d_model, d_ff)
        self.sub = nn.ModuleList(Residual(d_model, dropout, norm) for _ in range(3))

    def forward(self, y, memory, self_mask, memory_mask=None, trace=None):
        y = self.sub[0](y, lambda h: self.attn(h, h, self_mask))

        def cross(h):
            out, weights = self.cross(h, memory, memory_mask, return_weights=True)
            if trace is not None:
                trace.append(DecoderTrace(weights.detach()))
            return out

        y = self.sub[1](y, cross)
        return self.sub[2](y, self.ffn)


class Transformer(nn.Module):
    """Encoder-decoder with one embedding matrix used three times (section 3.4)."""

    def __init__(self, config: ModelParams, vocab=VOCAB):
        super().__init__()
        c = self.config = config
        self.embedding = nn.Embedding(vocab, c.d_model)  # shared: encoder in, decoder in, logits
        self.register_buffer("pe", sinusoidal_positions(c.max_len, c.d_model), persistent=False)
        layer_args = (c.d_model, c.heads, c.d_ff, c.dropout, c.norm)
        self.encoder = nn.ModuleList(EncoderLayer(*layer_args) for _ in range(c.layers))
        self.decoder = nn.ModuleList(DecoderLayer(*layer_args) for _ in range(c.layers))
        # Pre-norm leaves the residual stream un-normalised: a final LayerNorm closes each stack.
        final = c.norm == "pre"
        self.encoder_norm = nn.LayerNorm(c.d_model) if final else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model) if final else nn.Identity()
        self.drop = nn.Dropout(c.dropout)

    def embed(self, tokens):
        """sqrt(d_model) * E[t] + PE[position], then dropout (sections 3.4, 3.5, 5.4)."""
        T = tokens.shape[1]
        if T > self.config.max_len:
            raise ValueError(f"sequence of {T} tokens exceeds max_len = {self.config.max_len}")
        return self.drop(self.embedding(tokens) * math.sqrt(self.config.d_model) + self.pe[:T])

    def encode(self, src, src_mask=None):
        """The memory: (B, T_enc, d_model). The encoder runs once per input."""
        x = self.embed(src)
        for layer in self.encoder:
            x = layer(x, src_mask)
        return self.encoder_norm(x)

    def decode(self, tgt_in, memory, memory_mask=None, trace=None):
        """Logits (B, T_dec, vocab) = h E^T; `trace`, a list, collects each layer's DecoderTrace."""
        y = self.embed(tgt_in)
        self_mask = causal_mask(tgt_in.shape[1], tgt_in.device)
        for layer in self.decoder:
            y = layer(y, memory, self_mask, memory_mask, trace)
        return self.decoder_norm(y) @ self.embedding.weight.T  # (B, T_dec, vocab)

    def forward(self, src, tgt_in, src_mask=None):
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask)


def count_parameters(module):
    return sum(p.numel() for p in module.parameters())

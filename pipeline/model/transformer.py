"""The encoder-decoder Transformer of lesson 10, from scratch (Vaswani et al., 2017, section 3).

Reads top-down, small to large: positions, attention, feed-forward, encoder layer, decoder layer,
the decoder's key/value cache, model. Masks are boolean with True = "may not look" (the lesson's
`prohibido`), broadcastable to (B, h, T_q, T_k); inside the model they travel in additive form
(0 or -inf, see `additive_mask`), which gives the same scores as masked_fill and costs less.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

from pipeline.core.tokens import BOS, VOCAB
from pipeline.infra.params import ModelParams


def sinusoidal_positions(max_len, d_model):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(...) (section 3.5)."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2) / d_model)  # (d_model/2,)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
    return pe  # (max_len, d_model)


def random_positions(batch, size, max_len, device=None):
    """(B, T): each row a sorted random subset of range(max_len), drawn from torch's generator as
    dropout is (Ruoss et al., 2023: a training sequence takes positions a longer one would have)."""
    return torch.rand(batch, max_len, device=device).argsort(-1)[:, :size].sort(-1).values


def alibi_bias(heads, size, device=None):
    """(h, T, T) = -m_h |i - j| with slopes m_h = 2^(-8h/heads), h = 1..heads (Press et al., 2022):
    added to self-attention scores, it favours near keys, each head at its own range."""
    slopes = torch.tensor([2.0 ** (-8.0 * h / heads) for h in range(1, heads + 1)], device=device)
    i = torch.arange(size, device=device)
    return -slopes[:, None, None] * (i[:, None] - i[None, :]).abs()  # (h, T, T)


def causal_mask(size, device=None):
    """(T, T), True above the diagonal: token i may not look at any j > i (section 3.2.3)."""
    return torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)


def padding_mask(lengths, size):
    """(B, 1, 1, T), True at padded key positions, from each row's real length."""
    positions = torch.arange(size, device=lengths.device)
    return (positions[None, :] >= lengths[:, None])[:, None, None, :]


def additive_mask(mask, dtype=torch.float32):
    """A boolean mask (True = may not look) as 0 / -inf to add to the scores; None stays None.

    score + 0 is the score and score + (-inf) is -inf, bit for bit what masked_fill gives, in one
    cheap addition instead of a broadcast masked_fill (and its backward) per attention.
    """
    if mask is None or mask.dtype != torch.bool:
        return mask
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(mask, float("-inf"))


def visible_keys(mask, size):
    """How many keys each query may look at, from a boolean or additive mask: (..., T_q, 1), or the
    scalar `size` without a mask."""
    if mask is None:
        return torch.tensor(float(size))
    allowed = ~mask if mask.dtype == torch.bool else torch.isfinite(mask)
    return allowed.sum(-1, keepdim=True).clamp(min=1).to(torch.float32)


class MultiHeadAttention(nn.Module):
    """Multi-head attention (section 3.2.2): self-attention when xq is xkv, cross otherwise.

    With `attention="log_length"` each query's scores are multiplied by log n, n the
    number of keys it may look at (Chiang and Cholak, 2022; Nakanishi, 2025): a softmax over more
    keys is made sharper in step, so that one key can keep the weight it had among fewer.
    """

    def __init__(self, d_model, heads, attention="softmax"):
        super().__init__()
        self.heads, self.d_k = heads, d_model // heads
        self.length_scaled = attention == "log_length"
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(d_model, d_model) for _ in range(4))

    def split_heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def project_q(self, xq):
        return self.split_heads(self.wq(xq))  # (B, h, T_q, d_k)

    def project_kv(self, xkv):
        """Keys and values (B, h, T_k, d_k) each: what a decoding cache keeps."""
        return self.split_heads(self.wk(xkv)), self.split_heads(self.wv(xkv))

    def attend(self, q, k, v, mask=None):
        """softmax(Q K^T / sqrt(d_k)) V with heads joined by W^O (equation 1): (output, weights)."""
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, h, T_q, T_k)
        if self.length_scaled:  # before the mask: a query that sees one key has log 1 = 0 for all
            scores = scores * visible_keys(mask, k.shape[-2]).to(scores.dtype).log()
        if mask is not None:
            scores = scores + additive_mask(mask, scores.dtype)  # -inf where it may not look
        weights = scores.softmax(-1)  # (B, h, T_q, T_k)
        out = (weights @ v).transpose(1, 2).flatten(2)  # (B, T_q, h * d_k)
        return self.wo(out), weights

    def forward(self, xq, xkv, mask=None, return_weights=False):
        out, weights = self.attend(self.project_q(xq), *self.project_kv(xkv), mask)
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

    def __init__(self, d_model, heads, d_ff, dropout, norm="post", attention="softmax"):
        super().__init__()
        self.attn, self.ffn = MultiHeadAttention(d_model, heads, attention), feed_forward(d_model, d_ff)
        self.sub = nn.ModuleList(Residual(d_model, dropout, norm) for _ in range(2))

    def forward(self, x, src_mask=None):
        x = self.sub[0](x, lambda h: self.attn(h, h, src_mask))
        return self.sub[1](x, self.ffn)


@dataclass
class DecoderTrace:
    """What a decoder layer looked at: cross-attention weights (B, h, T_dec, T_enc)."""

    cross_attention: torch.Tensor


@dataclass
class LayerCache:
    """One decoder layer's keys and values for decoding token by token (each (B, h, T, d_k))."""

    self_k: torch.Tensor  # (B, h, steps, d_k): filled up to DecoderCache.length
    self_v: torch.Tensor
    cross_k: torch.Tensor  # (B, h, T_enc, d_k): computed once from the memory
    cross_v: torch.Tensor


@dataclass
class DecoderCache:
    """What decoding keeps between steps: per layer K/V, the memory's mask, tokens fed so far."""

    layers: list[LayerCache]
    memory_mask: torch.Tensor | None  # additive (B, 1, 1, T_enc), or None
    steps: int  # room for this many tokens (BOS included)
    length: int = 0  # tokens fed so far

    def reorder(self, rows):
        """Keep rows `rows` (B',) in this order, as beam search does when hypotheses are re-ranked."""
        n = self.length
        for c in self.layers:
            c.self_k[:, :, :n] = c.self_k[rows, :, :n]
            c.self_v[:, :, :n] = c.self_v[rows, :, :n]


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the memory, FFN (section 3.1)."""

    def __init__(self, d_model, heads, d_ff, dropout, norm="post", attention="softmax"):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, heads, attention)
        self.cross = MultiHeadAttention(d_model, heads, attention)
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

    def start_cache(self, memory, steps):
        """Cross-attention K/V from the memory (once), and room for `steps` self-attention K/V."""
        # (B, h, T_enc, d_k) each, made contiguous once rather than copied by every step's matmul
        cross_k, cross_v = (x.contiguous() for x in self.cross.project_kv(memory))
        B, h, _, d_k = cross_k.shape
        empty = cross_k.new_empty(B, h, steps, d_k)
        return LayerCache(empty, torch.empty_like(empty), cross_k, cross_v)

    def step(self, y, cache: LayerCache, t, memory_mask=None, trace=None):
        """The layer at one new position t, y (B, 1, d_model): attends to positions 0..t only, so
        no causal mask is needed; the same sublayers and weights as forward()."""

        def self_attn(h):
            q, (k, v) = self.attn.project_q(h), self.attn.project_kv(h)  # (B, h, 1, d_k) each
            cache.self_k[:, :, t : t + 1], cache.self_v[:, :, t : t + 1] = k, v
            out, _ = self.attn.attend(q, cache.self_k[:, :, : t + 1], cache.self_v[:, :, : t + 1])
            return out

        def cross(h):
            q = self.cross.project_q(h)
            out, weights = self.cross.attend(q, cache.cross_k, cache.cross_v, memory_mask)
            if trace is not None:
                trace.append(DecoderTrace(weights.detach()))
            return out

        y = self.sub[0](y, self_attn)
        y = self.sub[1](y, cross)
        return self.sub[2](y, self.ffn)


class Transformer(nn.Module):
    """Encoder-decoder with one embedding matrix used three times (section 3.4)."""

    def __init__(self, config: ModelParams, vocab=VOCAB):
        super().__init__()
        c = self.config = config
        self.embedding = nn.Embedding(vocab, c.d_model)  # shared: encoder in, decoder in, logits
        self.register_buffer("pe", sinusoidal_positions(c.max_len, c.d_model), persistent=False)
        self.register_buffer("causal", additive_mask(causal_mask(c.max_len)), persistent=False)
        layer_args = (c.d_model, c.heads, c.d_ff, c.dropout, c.norm, c.attention)
        self.encoder = nn.ModuleList(EncoderLayer(*layer_args) for _ in range(c.layers))
        self.decoder = nn.ModuleList(DecoderLayer(*layer_args) for _ in range(c.layers))
        # Pre-norm leaves the residual stream un-normalised: a final LayerNorm closes each stack.
        final = c.norm == "pre"
        self.encoder_norm = nn.LayerNorm(c.d_model) if final else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model) if final else nn.Identity()
        self.drop = nn.Dropout(c.dropout)
        # The length study's positional schemes (params.POSITIONS); created last, so that every other weight
        # starts as the sinusoidal model's does under the same seed.
        if c.positions == "learned":
            self.position_embedding = nn.Embedding(c.max_len, c.d_model)  # one vector per position
        if c.positions == "alibi":
            self.register_buffer("alibi", alibi_bias(c.heads, c.max_len), persistent=False)

    def embed(self, tokens, start=0, encoder=False):
        """sqrt(d_model) * E[t] + PE[position], then dropout (sections 3.4, 3.5, 5.4); positions
        count from `start` (a decoding step feeds one token at its position)."""
        end = start + tokens.shape[1]
        if end > self.config.max_len:
            raise ValueError(f"sequence of {end} tokens exceeds max_len = {self.config.max_len}")
        x = self.embedding(tokens) * math.sqrt(self.config.d_model)
        positions = self.position_vectors(tokens, start, encoder)
        return self.drop(x if positions is None else x + positions)

    def position_vectors(self, tokens, start, encoder):
        """What embed() adds for positions start..start+T: (T, d_model), (B, T, d_model) or None."""
        scheme, end = self.config.positions, start + tokens.shape[1]
        if scheme == "sinusoidal" or (scheme == "none_encoder" and not encoder):
            return self.pe[start:end]
        if scheme == "learned":
            return self.position_embedding.weight[start:end]
        if scheme == "randomized" and self.training:  # evaluation reads positions 0, 1, 2, ...
            rows = random_positions(tokens.shape[0], end, self.config.max_len, tokens.device)  # (B, end)
            return self.pe[rows[:, start:]]  # (B, T, d_model)
        if scheme == "randomized":
            return self.pe[start:end]
        return None  # none_encoder's encoder, alibi and bos: no position vectors

    def source_mask(self, mask):
        """The source's padding mask as the memory's keys need it: with positions bos, the memory has
        one more row first, the BOS every query may look at."""
        if mask is None or self.config.positions != "bos":
            return mask
        return torch.cat([torch.zeros_like(mask[..., :1]), mask], dim=-1)

    def encode(self, src, src_mask=None):
        """The memory: (B, T_enc, d_model), one row more with positions bos (BOS first). The encoder
        runs once per input."""
        if self.config.positions == "bos":  # BOS opens the source as it opens the target
            src = torch.cat([torch.full_like(src[:, :1], BOS), src], dim=1)
        x = self.embed(src, encoder=True)
        src_mask = additive_mask(self.source_mask(src_mask), x.dtype)  # once, not in every layer
        if self.config.positions == "alibi":  # the distance bias of every head, with the padding
            T = src.shape[1]
            src_mask = self.alibi[:, :T, :T] if src_mask is None else src_mask + self.alibi[:, :T, :T]
        for layer in self.encoder:
            x = layer(x, src_mask)
        return self.encoder_norm(x)

    def decode(self, tgt_in, memory, memory_mask=None, trace=None):
        """Logits (B, T_dec, vocab) = h E^T; `trace`, a list, collects each layer's DecoderTrace."""
        y = self.embed(tgt_in)
        T = tgt_in.shape[1]
        self_mask = self.causal[:T, :T].to(y.dtype)  # (T, T): 0 on and below the diagonal, -inf above
        memory_mask = additive_mask(self.source_mask(memory_mask), y.dtype)
        for layer in self.decoder:
            y = layer(y, memory, self_mask, memory_mask, trace)
        return self.decoder_norm(y) @ self.embedding.weight.T  # (B, T_dec, vocab)

    def start_cache(self, memory, memory_mask=None, steps=None):
        """A DecoderCache for decoding up to `steps` tokens (BOS included; default max_len)."""
        steps = self.config.max_len if steps is None else steps
        if steps > self.config.max_len:
            raise ValueError(f"{steps} decoding steps exceed max_len = {self.config.max_len}")
        layers = [layer.start_cache(memory, steps) for layer in self.decoder]
        return DecoderCache(layers, additive_mask(self.source_mask(memory_mask), memory.dtype), steps)

    def decode_step(self, token, cache: DecoderCache, trace=None):
        """Logits (B, vocab) for the next token after feeding `token` (B,) at position cache.length.

        The same result as decode() over all tokens so far, last position, but each step costs one
        position: self-attention K/V of earlier positions come from the cache, cross-attention K/V
        were computed once by start_cache. `trace` collects DecoderTrace (B, h, 1, T_enc) per layer.
        """
        t = cache.length
        if t >= cache.steps:
            raise ValueError(f"the cache has room for {cache.steps} tokens; this is token {t + 1}")
        y = self.embed(token[:, None], start=t)  # (B, 1, d_model)
        for layer, layer_cache in zip(self.decoder, cache.layers, strict=True):
            y = layer.step(y, layer_cache, t, cache.memory_mask, trace)
        cache.length = t + 1
        return (self.decoder_norm(y) @ self.embedding.weight.T)[:, 0]  # (B, vocab)

    def forward(self, src, tgt_in, src_mask=None):
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask)


def count_parameters(module):
    return sum(p.numel() for p in module.parameters())

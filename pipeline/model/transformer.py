"""The encoder-decoder Transformer of lesson 10, from scratch (Vaswani et al., 2017, section 3).

Reads top-down, small to large: masks, multi-head attention, feed-forward, residual sublayer,
encoder layer, decoder layer, model. It holds the paper's model and the lesson's options only: the
paper's sinusoids or learned positions (positions.py), softmax attention (attention.py), post- or
pre-norm. The model composes its modules as the Annotated Transformer's make_model does: each layer
takes its attention's weighting and its residual wrapper as components, and the model builds its
layers and its positions in methods of their own, so that another model (the length study's,
pipeline/study/model.py) composes or subclasses these without a branch here. Masks are boolean with
True = "may not look" (the lesson's `prohibido`), broadcastable to (B, h, T_q, T_k); inside the model
they travel in additive form (0 or -inf, see `additive_mask`), which gives the same scores as
masked_fill and costs less.

The configuration is a ModelConfig (pipeline/params/model.py): the fields of `model:` in
params.yaml, or the copy a checkpoint carries.
"""

import math

import torch
from torch import nn

from pipeline.model import draws
from pipeline.model.attention import Softmax
from pipeline.model.cache import DecoderCache, LayerCache
from pipeline.model.positions import POSITIONS
from pipeline.params.model import ModelConfig, check_config
from pipeline.tokens import VOCAB


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
    return torch.zeros_like(mask, dtype=dtype).masked_fill_(mask, float("-inf"))


# ---------------------------------------------------------------- the layers' training pass
# torch's Linear and LayerNorm, whose training pass takes the steps that seeds trained together take,
# so that a seed rounds alike alone or beside others. Seeds trained together run the model under
# torch.func.vmap over weights with a leading seed axis (pipeline/core/seed_axis.py): there a linear
# layer is one batched product (bmm) and its bias an add, a weight's gradient the batched product of
# the inputs and the output's gradient, and a LayerNorm normalises, then scales and shifts, in two
# steps. A seed trained alone calls the model directly, where nn.Linear is one addmm, whose weight's
# gradient multiplies the same numbers in the other order, and nn.LayerNorm one fused kernel: each
# rounds otherwise in the last bits. In training these layers take vmap's steps on a seed axis of
# one, which a batched product computes as any one slice of a larger batch (tests/test_together.py
# holds a seed's bytes alone and beside others). Out of training (decoding, probes) they are torch's.


def seed_axis_product(x, weight_t, bias=None):
    """x (..., d_in) times weight_t (d_in, d_out), plus bias, as vmap computes it for one seed: one
    batched product of all x's rows on a seed axis of one (its gradients are batched products too),
    then the bias added to those rows (N, d_out), whose gradient is then a sum over the N rows in
    vmap's order. The keys' bias has a gradient of zero but for rounding (a softmax ignores what it
    adds to a whole row of scores), which Adam turns into steps: a sum in another order moves it."""
    y = torch.bmm(x.reshape(1, -1, x.shape[-1]), weight_t[None])  # (1, N, d_out)
    if bias is not None:
        y = bias.view(1, 1, -1) + y
    return y.view(*x.shape[:-1], -1)


class Linear(nn.Linear):
    def forward(self, x):
        if not self.training:
            return super().forward(x)
        return seed_axis_product(x, self.weight.t(), self.bias)


class LayerNorm(nn.LayerNorm):
    def forward(self, x):
        if not self.training:
            return super().forward(x)
        return (
            nn.functional.layer_norm(x, self.normalized_shape, None, None, self.eps) * self.weight + self.bias
        )


class MultiHeadAttention(nn.Module):
    """Multi-head attention (section 3.2.2): self-attention when xq is xkv, cross otherwise. Its
    weighting, the module that turns scores into weights, is the paper's softmax unless one is given."""

    def __init__(self, d_model, heads, weights=None):
        super().__init__()
        self.heads, self.d_k = heads, d_model // heads
        self.weights = Softmax() if weights is None else weights
        self.wq, self.wk, self.wv, self.wo = (Linear(d_model, d_model) for _ in range(4))

    def split_heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def project_q(self, xq):
        return self.split_heads(self.wq(xq))  # (B, h, T_q, d_k)

    def project_kv(self, xkv):
        """Keys and values (B, h, T_k, d_k) each: what a decoding cache keeps."""
        return self.split_heads(self.wk(xkv)), self.split_heads(self.wv(xkv))

    def attend(self, q, k, v, mask=None):
        """weights(Q K^T / sqrt(d_k)) V with heads joined by W^O (equation 1, with the paper's softmax
        or the weighting given; pipeline/model/hooks.py reads them)."""
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, h, T_q, T_k)
        weights = self.weights(scores, additive_mask(mask, scores.dtype))  # (B, h, T_q, T_k)
        out = (weights @ v).transpose(1, 2).flatten(2)  # (B, T_q, h * d_k)
        return self.wo(out)

    def forward(self, xq, xkv, mask=None):
        return self.attend(self.project_q(xq), *self.project_kv(xkv), mask)


def feed_forward(d_model, d_ff):
    """Position-wise FFN (section 3.3): up to d_ff, ReLU, back down to d_model."""
    return nn.Sequential(Linear(d_model, d_ff), nn.ReLU(), Linear(d_ff, d_model))


class Dropout(nn.Module):
    """Dropout (section 5.4): each element kept with probability 1 - p and scaled by 1 / (1 - p), as
    nn.Dropout does, with the mask drawn as uniform numbers against p: the same distribution, from
    a kernel that computes alike on every CPU, and faster here than nn.Dropout's bernoulli_."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = draws.uniform(x, x.shape, x.dtype).ge(self.p)  # kept where True
        return x * keep.to(x.dtype).mul_(1 / (1 - self.p))


class PostNorm(nn.Module):
    """One sublayer's wrapper as the paper: LayerNorm(x + Sublayer(x)) (section 3.1), called with the
    stream and the sublayer."""

    def __init__(self, d_model, dropout):
        super().__init__()
        self.drop, self.ln = Dropout(dropout), LayerNorm(d_model)

    def forward(self, x, sublayer):
        return self.ln(x + self.drop(sublayer(x)))

    closes_stack = False  # the stream leaves each sublayer normalised: no LayerNorm closes the stack

    def without_sum(self, x, sublayer):
        """The same wrapper with x not added back (the depth probe's stacks without the sum)."""
        return self.ln(self.drop(sublayer(x)))


class PreNorm(PostNorm):
    """x + Sublayer(LayerNorm(x)): the stream itself is never normalised inside a stack, so a final
    LayerNorm closes it (`closes_stack`)."""

    closes_stack = True

    def forward(self, x, sublayer):
        return x + self.drop(sublayer(self.ln(x)))

    def without_sum(self, x, sublayer):
        return self.drop(sublayer(self.ln(x)))


NORMS = {"post": PostNorm, "pre": PreNorm}  # model.norm: the residual wrapper of every sublayer


class EncoderLayer(nn.Module):
    """Self-attention, then FFN, each wrapped in residual + LayerNorm (section 3.1); `norm`: the
    wrapper's class, `weights`: the self-attention's weighting (the paper's softmax by default)."""

    def __init__(self, d_model, heads, d_ff, dropout, norm=PostNorm, weights=None):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, heads, weights)
        self.ffn = feed_forward(d_model, d_ff)
        self.sub = nn.ModuleList(norm(d_model, dropout) for _ in range(2))

    def forward(self, x, src_mask=None):
        x = self.sub[0](x, lambda h: self.attn(h, h, src_mask))
        return self.sub[1](x, self.ffn)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the memory, FFN (section 3.1); `norm`: the residual
    wrapper's class, `weights` and `cross_weights`: each attention's weighting (softmax by default)."""

    def __init__(self, d_model, heads, d_ff, dropout, norm=PostNorm, weights=None, cross_weights=None):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, heads, weights)
        self.cross = MultiHeadAttention(d_model, heads, cross_weights)
        self.ffn = feed_forward(d_model, d_ff)
        self.sub = nn.ModuleList(norm(d_model, dropout) for _ in range(3))

    def forward(self, y, memory, self_mask, memory_mask=None):
        """All positions at once (training, teacher forcing)."""

        def cross(h):
            q = self.cross.project_q(h)
            return self.cross.attend(q, *self.cross.project_kv(memory), memory_mask)

        return self.sublayers(y, lambda h: self.attn(h, h, self_mask), cross)

    def step(self, y, cache: LayerCache, t, memory_mask=None):
        """The layer at one new position t, y (B, 1, d_model): attends to positions 0..t only, so
        no causal mask is needed; the same sublayers and weights as forward()."""

        def cross(h):
            return self.cross.attend(self.cross.project_q(h), cache.cross_k, cache.cross_v, memory_mask)

        return self.sublayers(y, self.cached_self_attention(cache, t), cross)

    def cached_self_attention(self, cache: LayerCache, t):
        """Self-attention of the token at t over the cached keys and values of 0..t (its own added)."""

        def self_attn(h):
            q, (k, v) = self.attn.project_q(h), self.attn.project_kv(h)  # (B, h, 1, d_k) each
            cache.self_k[:, :, t : t + 1], cache.self_v[:, :, t : t + 1] = k, v
            return self.attn.attend(q, cache.self_k[:, :, : t + 1], cache.self_v[:, :, : t + 1])

        return self_attn

    def sublayers(self, y, self_attn, cross):
        """Self-attention, cross-attention over the memory, FFN, each a function of the normalised
        (or raw) stream that its residual wrapper hands it."""
        y = self.sub[0](y, self_attn)
        y = self.sub[1](y, cross)
        return self.sub[2](y, self.ffn)

    def start_cache(self, memory, steps):
        """Cross-attention K/V from the memory (once), and room for `steps` self-attention K/V."""
        # (B, h, T_enc, d_k) each, made contiguous once rather than copied by every step's matmul
        cross_k, cross_v = (x.contiguous() for x in self.cross.project_kv(memory))
        B, h, _, d_k = cross_k.shape
        empty = cross_k.new_empty(B, h, steps, d_k)
        return LayerCache(empty, torch.empty_like(empty), cross_k, cross_v)


class Transformer(nn.Module):
    """Encoder-decoder with one embedding matrix used three times (section 3.4)."""

    config_class = ModelConfig  # what a checkpoint's stored configuration is read as
    check_config = staticmethod(check_config)  # its rules between fields

    def __init__(self, config, vocab=VOCAB):
        super().__init__()
        c = self.config = config
        self.embedding = nn.Embedding(vocab, c.d_model)  # shared: encoder in, decoder in, logits
        self.register_buffer("causal", additive_mask(causal_mask(c.max_len)), persistent=False)
        self.encoder = nn.ModuleList(self.encoder_layer() for _ in range(c.layers))
        self.decoder = nn.ModuleList(self.decoder_layer() for _ in range(c.layers))
        # Pre-norm (and any wrapper that leaves the stream un-normalised) closes each stack with a LayerNorm.
        final = self.residual().closes_stack
        self.encoder_norm = LayerNorm(c.d_model) if final else nn.Identity()
        self.decoder_norm = LayerNorm(c.d_model) if final else nn.Identity()
        self.drop = Dropout(c.dropout)
        # Created last, so that every other weight starts as the paper's model's does under the
        # same seed, whatever the positions.
        self.positions = self.position_vectors()

    # ------------------------------------------------------------ what the model is built of

    def sizes(self):
        c = self.config
        return {"d_model": c.d_model, "heads": c.heads, "d_ff": c.d_ff, "dropout": c.dropout}

    def residual(self):
        """The residual wrapper's class of every sublayer (`model.norm`)."""
        return NORMS[self.config.norm]

    def encoder_layer(self):
        return EncoderLayer(**self.sizes(), norm=self.residual())

    def decoder_layer(self):
        return DecoderLayer(**self.sizes(), norm=self.residual())

    def position_vectors(self):
        """The positions' module (`model.positions`)."""
        return POSITIONS[self.config.positions](self.config)

    @property
    def longest_source(self):
        """The longest source the model reads."""
        return self.config.max_len

    # ------------------------------------------------------------ the forward passes

    def embedded_tokens(self, tokens, start=0):
        """sqrt(d_model) * E[t] (section 3.4) for tokens at positions start.., within max_len."""
        end = start + tokens.shape[1]
        if end > self.config.max_len:
            raise ValueError(f"sequence of {end} tokens exceeds max_len = {self.config.max_len}")
        return self.embedding(tokens) * math.sqrt(self.config.d_model)

    def embed(self, tokens, start=0):
        """sqrt(d_model) * E[t] + PE[position], then dropout (sections 3.4, 3.5, 5.4); positions
        count from `start` (a decoding step feeds one token at its position)."""
        x = self.embedded_tokens(tokens, start)
        return self.drop(x + self.positions.vectors(tokens, start))

    def encode(self, src, src_mask=None):
        """The memory: (B, T_enc, d_model), computed once per input."""
        x = self.embed(src)
        return self.run_encoder(x, additive_mask(src_mask, x.dtype))  # the mask once, not in every layer

    def run_encoder(self, x, mask):
        """The encoder's layers over embedded inputs x (B, T, d_model), `mask` additive or None."""
        for layer in self.encoder:
            x = layer(x, mask)
        return self.encoder_norm(x)

    def decode_states(self, tgt_in, memory, memory_mask=None):
        """The decoder's last states h (B, T_dec, d_model), which the logits read."""
        y = self.embed(tgt_in)
        T = tgt_in.shape[1]
        self_mask = self.causal[:T, :T].to(y.dtype)  # (T, T): 0 on and below the diagonal, -inf above
        memory_mask = additive_mask(memory_mask, y.dtype)
        for layer in self.decoder:
            y = layer(y, memory, self_mask, memory_mask)
        return self.decoder_norm(y)

    def logits(self, states):
        """(..., vocab) = h E^T; in training as seeds trained together compute it (model/transformer.py)."""
        if self.training:
            return seed_axis_product(states, self.embedding.weight.T)
        return states @ self.embedding.weight.T

    def decode(self, tgt_in, memory, memory_mask=None):
        """Logits (B, T_dec, vocab) = h E^T."""
        return self.logits(self.decode_states(tgt_in, memory, memory_mask))

    def decoding(self, memory, memory_mask=None):
        """The decoder bound to one encoded source, as greedy decoding calls it step after step:
        tokens so far (B, T) -> logits (B, T, vocab)."""
        return lambda tgt_in: self.decode(tgt_in, memory, memory_mask)

    def cache_steps(self, steps):
        steps = self.config.max_len if steps is None else steps
        if steps > self.config.max_len:
            raise ValueError(f"{steps} decoding steps exceed max_len = {self.config.max_len}")
        return steps

    def start_cache(self, memory, memory_mask=None, steps=None):
        """A DecoderCache for decoding up to `steps` tokens (BOS included; default max_len)."""
        steps = self.cache_steps(steps)
        layers = [layer.start_cache(memory, steps) for layer in self.decoder]
        return DecoderCache(layers, additive_mask(memory_mask, memory.dtype), steps)

    def next_position(self, cache: DecoderCache):
        """The position the next token fed takes, checked against the cache's room."""
        t = cache.length
        if t >= cache.steps:
            raise ValueError(f"the cache has room for {cache.steps} tokens; this is token {t + 1}")
        return t

    def decode_step(self, token, cache: DecoderCache):
        """Logits (B, vocab) for the next token after feeding `token` (B,) at position cache.length.

        The same result as decode() over all tokens so far, last position, but each step costs one
        position: self-attention K/V of earlier positions come from the cache, cross-attention K/V
        were computed once by start_cache.
        """
        t = self.next_position(cache)
        y = self.embed(token[:, None], start=t)  # (B, 1, d_model)
        for layer, layer_cache in zip(self.decoder, cache.layers, strict=True):
            y = layer.step(y, layer_cache, t, cache.memory_mask)
        cache.length = t + 1
        return (self.decoder_norm(y) @ self.embedding.weight.T)[:, 0]  # (B, vocab)

    def forward(self, src, tgt_in, src_mask=None):
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask)


def count_parameters(module):
    return sum(p.numel() for p in module.parameters())

"""The length study's model: the paper's Transformer (pipeline/model/transformer.py) with a variant's
positions, attention weightings and residual wrapper composed into it, every name a variant may take
found here (pipeline/study/options.py lists them with their facts; a name without a class is a
one-line error). The paper's model knows none of them; this one subclasses it, and adds what the
study's schemes read beside the paper's path:

- the positions' hooks (pipeline/study/positions.py): the source the encoder reads (BOS opens it),
  its memory's mask, a bias on the encoder's scores (ALiBi), and positions a decoding session draws
  once per source (randomized's at test time), which the session hands to every step;
- the tokens fed, read beside the decoder's stream (`rows_fed`): the signed counts' decoder layers
  (pipeline/study/signed_count.py, owed_count.py) read them through the encoder.

A checkpoint rebuilds the class its configuration names (`load_model`).
"""

import dataclasses
from dataclasses import dataclass

import torch

from pipeline.infra.errors import ConfigError
from pipeline.model.attention import Softmax
from pipeline.model.cache import DecoderCache
from pipeline.model.checkpoint import load_checkpoint
from pipeline.model.transformer import (
    DecoderLayer,
    EncoderLayer,
    PostNorm,
    PreNorm,
    Transformer,
    additive_mask,
)
from pipeline.study import attention, options, owed_count, positions, rezero, signed_count
from pipeline.study.options import ATTENTION, StudyModelConfig, attention_kinds

POSITION_CLASSES = {
    "sinusoidal": positions.Sinusoidal,
    "none_encoder": positions.NoneInEncoder,
    "learned": positions.Learned,
    "randomized": positions.Randomized,
    "alibi": positions.ALiBi,
    "bos": positions.BOSFirst,
    "offset": positions.Offset,
    "bos_offset": positions.BOSOffset,
}
WEIGHTINGS = {  # an attention's weighting; a gated one starts its bias at model.sigmoid_bias
    "softmax": Softmax,
    "log_length": attention.LogLength,
    "sigmoid": attention.Sigmoid,
    "sigmoid_log": attention.SigmoidLog,
    "sigmoid_st": attention.StraightThrough,
    "split": attention.Split,
    "hard_sigmoid": attention.HardSigmoid,
    "signed": signed_count.Signed,
    "signed_tanh": signed_count.SignedTanh,
    "signed_clamp": signed_count.SignedClamp,
    "signed_owed": owed_count.SignedOwed,
    "none": attention.NoAttention,
}
RESIDUALS = {"post": PostNorm, "pre": PreNorm, "rezero": rezero.ReZero}
# A cross-attention that reads more than the memory brings its decoder layer; every other decodes
# with the study's plain layer (the paper's, taking the tokens fed and reading none of them).
DECODER_LAYERS = {
    "signed": signed_count.SignedCountLayer,
    "signed_tanh": signed_count.SignedCountLayer,
    "signed_clamp": signed_count.SignedCountLayer,
    "signed_owed": owed_count.OwedCountLayer,
}


def class_of(found, name, what):
    """The class that builds option `name`, or one line saying none does."""
    if name not in found:
        raise ConfigError(
            f"{what} = {name}: no class of the length study builds it (pipeline/study/model.py)"
        )
    return found[name]


def weighting(name, heads, sigmoid_bias):
    """The weighting module of one attention: a gated one takes a learned bias per head."""
    cls = class_of(WEIGHTINGS, name, "model.attention")
    return cls(heads, sigmoid_bias) if ATTENTION[name].gated else cls()


class StudyDecoderLayer(DecoderLayer):
    """The paper's decoder layer in the study's model, which hands every layer the tokens fed: this
    one reads none of them."""

    @staticmethod
    def rows_fed(model, tokens):
        return None

    def forward(self, y, memory, self_mask, memory_mask=None, fed=None):
        return super().forward(y, memory, self_mask, memory_mask)

    def step(self, y, cache, t, memory_mask=None, fed=None):
        return super().step(y, cache, t, memory_mask)


@dataclass
class StudyDecoderCache(DecoderCache):
    """The paper's cache and the positions the session drew for the decoder (randomized's at test
    time; else None)."""

    drawn: torch.Tensor | None = None  # (B, T_enc)

    def reorder(self, rows):
        if self.drawn is not None:
            self.drawn = self.drawn[rows]
        super().reorder(rows)


class StudyTransformer(Transformer):
    """The paper's Transformer with a study variant's positions, attention and residual wrapper
    (`config`: a StudyModelConfig)."""

    config_class = StudyModelConfig
    check_config = staticmethod(options.check_config)

    def residual(self):
        return class_of(RESIDUALS, self.config.norm, "model.norm")

    def encoder_layer(self):
        c, (encoder, _, _) = self.config, attention_kinds(self.config.attention)
        return EncoderLayer(
            **self.sizes(), norm=self.residual(), weights=weighting(encoder, c.heads, c.sigmoid_bias)
        )

    def decoder_layer(self):
        c, (_, decoder, cross) = self.config, attention_kinds(self.config.attention)
        layer = DECODER_LAYERS.get(cross, StudyDecoderLayer)
        own, read = (weighting(name, c.heads, c.sigmoid_bias) for name in (decoder, cross))
        return layer(**self.sizes(), norm=self.residual(), weights=own, cross_weights=read)

    def position_vectors(self):
        return class_of(POSITION_CLASSES, self.config.positions, "model.positions")(self.config)

    @property
    def longest_source(self):
        return options.longest_source(self.config)

    def embed(self, tokens, start=0, encoder=False, drawn=None):
        """The paper's embedding with the scheme's positions: which stack reads it (`encoder`) and the
        decoding session's positions (`drawn`, from decoder_positions)."""
        x = self.embedded_tokens(tokens, start)
        vectors = self.positions.vectors(tokens, start, encoder, drawn)
        return self.drop(x if vectors is None else x + vectors)

    def encode(self, src, src_mask=None):
        """The memory: (B, T_enc, d_model), one row more where the scheme opens the source with BOS."""
        src = self.positions.source(src)
        x = self.embed(src, encoder=True)
        mask = additive_mask(self.positions.memory_mask(src_mask), x.dtype)
        bias = self.positions.encoder_bias(src.shape[1])  # (h, T, T) or None
        if bias is not None:
            mask = bias if mask is None else mask + bias
        return self.run_encoder(x, mask)

    def rows_fed(self, tokens):
        """What the decoder's layers read of the tokens fed (B, T) beside their stream, once for all
        layers: None but for the signed counts' layers."""
        return self.decoder[0].rows_fed(self, tokens)

    def decoder_positions(self, memory):
        """What a decoding session fixes once per source, right after encoding it: the positions a
        scheme draws for the decoder at test time (randomized's, (B, T_enc)); None for the others."""
        return self.positions.decoder_draw(memory)

    def decode_states(self, tgt_in, memory, memory_mask=None, drawn=None):
        """The decoder's last states (B, T_dec, d_model); a call without `drawn` is a session of its own."""
        y = self.embed(tgt_in, drawn=self.decoder_positions(memory) if drawn is None else drawn)
        T = tgt_in.shape[1]
        self_mask = self.causal[:T, :T].to(y.dtype)
        memory_mask = additive_mask(self.positions.memory_mask(memory_mask), y.dtype)
        fed = self.rows_fed(tgt_in)
        for layer in self.decoder:
            y = layer(y, memory, self_mask, memory_mask, fed)
        return self.decoder_norm(y)

    def decode(self, tgt_in, memory, memory_mask=None, drawn=None):
        return self.logits(self.decode_states(tgt_in, memory, memory_mask, drawn))

    def decoding(self, memory, memory_mask=None):
        drawn = self.decoder_positions(memory)  # one session: every step at the same positions
        return lambda tgt_in: self.decode(tgt_in, memory, memory_mask, drawn)

    def start_cache(self, memory, memory_mask=None, steps=None, drawn=None):
        """The paper's cache, the memory's mask as the scheme reads it, and the session's positions."""
        steps = self.cache_steps(steps)
        layers = [layer.start_cache(memory, steps) for layer in self.decoder]
        memory_mask = additive_mask(self.positions.memory_mask(memory_mask), memory.dtype)
        drawn = self.decoder_positions(memory) if drawn is None else drawn
        return StudyDecoderCache(layers, memory_mask, steps, drawn=drawn)

    def decode_step(self, token, cache: StudyDecoderCache):
        t = self.next_position(cache)
        y = self.embed(token[:, None], start=t, drawn=cache.drawn)  # (B, 1, d_model)
        fed = self.rows_fed(token[:, None])
        for layer, layer_cache in zip(self.decoder, cache.layers, strict=True):
            y = layer.step(y, layer_cache, t, cache.memory_mask, fed)
        cache.length = t + 1
        return (self.decoder_norm(y) @ self.embedding.weight.T)[:, 0]  # (B, vocab)


def built_for(model, longest):
    """The model, or where its source carries no positions and `longest` is beyond its max_len, the
    same weights in a model built for sources of `longest` tokens: its buffers (the causal mask,
    any sinusoids) are functions of max_len, its weights are not."""
    if longest <= model.longest_source or not options.reads_any_length(model.config):
        return model
    with torch.random.fork_rng():  # building a model draws initial weights, overwritten below
        config = dataclasses.replace(model.config, max_len=options.max_len_for(model.config, longest))
        longer = type(model)(config)
    longer.load_state_dict(model.state_dict())
    return longer.to(next(model.parameters()).device).train(model.training)


def load_model(path, device="cpu"):
    """(model in eval mode, its record) of a checkpoint, the lesson's or a study variant's: the
    configuration it carries names its class (a variant's names its attention)."""
    return load_checkpoint(path, device, model_class=model_class_of)


def model_class_of(stored):
    """The model class of a stored configuration: the study's where it names an attention."""
    return StudyTransformer if isinstance(stored, dict) and "attention" in stored else Transformer

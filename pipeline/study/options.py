"""The length study's options: every positions scheme, attention weighting and residual wrapper a study
variant may name, with the facts its parameter rules need, and the model configuration a variant's
checkpoint carries. Torch-free, so the study's parameters parse without loading it; the classes that
build each name are in pipeline/study/model.py, which holds one for every name here (a test says so).
The lesson's model knows none of them (pipeline/params/model.py): it takes the paper's options only.
"""

from dataclasses import dataclass

from pipeline.infra.errors import ConfigError
from pipeline.params.model import check_heads
from pipeline.params.rules import ANY_FLOAT, POSITIVE_INT, float_in, one_of, per_kind, section

KINDS = ("encoder", "decoder", "cross")  # encoder self-attention, decoder self-attention, cross


@dataclass(frozen=True)
class PositionRules:
    sinusoids: bool = False  # reads the sinusoid table: d_model must be even
    draws_positions: bool = False  # draws positions from [0, max_len): max_len must exceed training lengths
    source_rows: int = 0  # rows it adds to the source (BOS)
    any_length: bool = False  # the source carries no positions: built for any length it is asked


@dataclass(frozen=True)
class AttentionRules:
    gated: bool = False  # a learned bias per head, started at model.sigmoid_bias
    counts_written: bool = False  # a cross-attention that also reads the tokens written (the signed counts)


@dataclass(frozen=True)
class NormRules:
    closes_stack: bool = False  # leaves the stream un-normalised: a final LayerNorm closes each stack


POSITIONS = {  # model.positions of a study variant: the paper's two and the study's
    "sinusoidal": PositionRules(sinusoids=True),
    "none_encoder": PositionRules(sinusoids=True, any_length=True),
    "learned": PositionRules(),
    "randomized": PositionRules(sinusoids=True, draws_positions=True),
    "alibi": PositionRules(),
    "bos": PositionRules(source_rows=1, any_length=True),
    "offset": PositionRules(sinusoids=True, draws_positions=True),
    "bos_offset": PositionRules(sinusoids=True, draws_positions=True, source_rows=1),
}
ATTENTION = {  # each attention's weighting: the paper's softmax and the study's
    "softmax": AttentionRules(),
    "log_length": AttentionRules(),
    "sigmoid": AttentionRules(gated=True),
    "sigmoid_log": AttentionRules(gated=True),
    "sigmoid_st": AttentionRules(gated=True),
    "split": AttentionRules(gated=True),
    "hard_sigmoid": AttentionRules(gated=True),
    "signed": AttentionRules(gated=True, counts_written=True),
    "signed_tanh": AttentionRules(gated=True, counts_written=True),
    "signed_clamp": AttentionRules(gated=True, counts_written=True),
    "signed_owed": AttentionRules(gated=True, counts_written=True),
    "none": AttentionRules(),
}
NORMS = {  # the residual wrapper: the paper's post-norm, the lesson's pre-norm, and ReZero
    "post": NormRules(),
    "pre": NormRules(closes_stack=True),
    "rezero": NormRules(closes_stack=True),
}


def attention_kinds(attention):
    """`softmax` -> (softmax, softmax, softmax); `softmax/sigmoid/sigmoid` -> one name per kind."""
    names = tuple(attention.split("/"))
    return names * len(KINDS) if len(names) == 1 else names


def counts_written(attention):
    """Whether the cross-attention of `attention` is a signed count (it reads the tokens written too)."""
    return ATTENTION[attention_kinds(attention)[2]].counts_written


def uses_sigmoid_bias(attention):
    """Whether model.sigmoid_bias matters: some attention of `attention` has a learned gate."""
    return any(ATTENTION[name].gated for name in attention_kinds(attention))


@section
class StudyModelConfig:
    """A study variant's model: the paper's sizes with the study's positions, attention and residual
    wrapper. Its fields, in this order, are what every variant's checkpoint carries."""

    d_model: POSITIVE_INT
    heads: POSITIVE_INT
    layers: POSITIVE_INT  # encoder and decoder layers each
    d_ff: POSITIVE_INT
    dropout: float_in(0.0, 1.0)
    # post: LayerNorm(x + F(x)) as the paper; pre: x + F(LayerNorm(x)); rezero: x + a F(x), a learned
    # scalar from 0 (Bachlechner et al., 2020), no LayerNorm inside a stack: one closes it
    norm: one_of(*NORMS)
    positions: one_of(*POSITIONS)
    attention: per_kind(tuple(ATTENTION), KINDS)  # one name, or one per kind
    sigmoid_bias: ANY_FLOAT  # a sigmoid gate's learned bias b_h at the start
    max_len: POSITIVE_INT


def longest_source(config):
    """The longest source the model reads: max_len, less the rows a positions scheme adds (BOS)."""
    return config.max_len - POSITIONS[config.positions].source_rows


def reads_any_length(config):
    """Whether the model is built for any source length (its source carries no positions)."""
    return POSITIONS[config.positions].any_length


def max_len_for(config, longest):
    """The max_len that reads sources of `longest` tokens, BOS rows included."""
    return longest + POSITIONS[config.positions].source_rows


def check_config(key, config, train_lengths=()):
    """Rules between fields: d_k = d_model / heads, a cross-attention that sees the input, sinusoids in
    (sin, cos) pairs, positions drawn (randomized, offset) from a range [0, max_len) larger than the
    longest training sequence."""
    check_heads(key, config)
    if attention_kinds(config.attention)[KINDS.index("cross")] == "none":
        raise ConfigError(
            f"{key}.attention = {config.attention}: cross-attention 'none' leaves the decoder blind to the "
            "input; 'none' is for the encoder's or the decoder's self-attention (none/sigmoid/sigmoid)"
        )
    scheme = POSITIONS[config.positions]
    if scheme.sinusoids and config.d_model % 2:
        raise ConfigError(f"{key}.d_model = {config.d_model} must be even for {config.positions} positions")
    if scheme.draws_positions and train_lengths and max(train_lengths) >= config.max_len:
        raise ConfigError(
            f"{key}.positions = {config.positions} draws positions from [0, max_len) = "
            f"[0, {config.max_len}): max_len must exceed the longest training length, {max(train_lengths)}"
        )

"""The model's configuration: the fields of `model:` in params.yaml, each with the rule that checks
it, the names and their rules taken from pipeline/model/options.py (torch-free)."""

from pipeline.infra.errors import ConfigError
from pipeline.infra.rules import ANY_FLOAT, POSITIVE_INT, float_in, one_of, per_kind, section
from pipeline.model.options import KINDS, POSITIONS, WEIGHTINGS, attention_kinds


@section
class ModelConfig:
    """The encoder-decoder of lesson 10 (paper section 3) and the length study's schemes."""

    d_model: POSITIVE_INT
    heads: POSITIVE_INT
    layers: POSITIVE_INT  # encoder and decoder layers each
    d_ff: POSITIVE_INT
    dropout: float_in(0.0, 1.0)
    norm: one_of("post", "pre")
    positions: one_of(*POSITIONS)
    attention: per_kind(WEIGHTINGS, KINDS)  # one name, or one per kind
    sigmoid_bias: ANY_FLOAT  # sigmoid attention's learned b_h at the start
    max_len: POSITIVE_INT


def longest_source(config):
    """The longest source the model reads: max_len, less the rows a positions scheme adds (BOS)."""
    return config.max_len - POSITIONS[config.positions].source_rows


def check_heads(key, sizes):
    """d_k = d_model / heads must be a whole number (`sizes` has d_model and heads)."""
    if sizes.d_model % sizes.heads:
        raise ConfigError(
            f"{key}.d_model = {sizes.d_model} is not divisible by {key}.heads = {sizes.heads}: "
            "each head needs d_k = d_model / heads"
        )


def check_config(key, config, train_lengths=()):
    """Rules between fields: d_k = d_model / heads, sinusoids in (sin, cos) pairs, positions drawn
    (randomized, offset) from a range [0, max_len) larger than the longest training sequence."""
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

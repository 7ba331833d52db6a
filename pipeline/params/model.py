"""The model's section of params.yaml: ModelConfig, each field with the rule that checks it: the
paper's model (section 3) and the lesson's options only, the paper's positions or its learned
alternative, post-norm as the paper or the pre-norm the lesson discusses. Torch-free, so that the
stages that only read results parse their parameters without loading it. The length study's
variants take other options, which it names and checks in its own wing (pipeline/study/options.py);
a name the lesson's model does not take is refused here in one line.
"""

from typing import Literal

from pipeline.infra.errors import ConfigError
from pipeline.params.rules import POSITIVE_INT, allowing, float_in, section

POSITIONS = ("sinusoidal", "learned")  # the paper's sinusoids, one trained vector per position (3.5)
NORMS = ("post", "pre")  # LayerNorm(x + F(x)) as the paper; x + F(LayerNorm(x)), lesson 6's


@section
class ModelConfig:
    """The encoder-decoder of lesson 10 (paper section 3)."""

    d_model: POSITIVE_INT
    heads: POSITIVE_INT
    layers: POSITIVE_INT  # encoder and decoder layers each
    d_ff: POSITIVE_INT
    dropout: float_in(0.0, 1.0)
    # another position scheme, weighting or norm is the length study's: a variant of study/params.yaml
    norm: allowing(Literal[NORMS], f"one of {', '.join(NORMS)} (another norm goes in a study variant)")
    positions: allowing(
        Literal[POSITIONS], f"one of {', '.join(POSITIONS)} (another scheme goes in a study variant)"
    )
    max_len: POSITIVE_INT


def check_heads(key, sizes):
    """d_k = d_model / heads must be a whole number (`sizes` has d_model and heads)."""
    if sizes.d_model % sizes.heads:
        raise ConfigError(
            f"{key}.d_model = {sizes.d_model} is not divisible by {key}.heads = {sizes.heads}: "
            "each head needs d_k = d_model / heads"
        )


def check_config(key, config, train_lengths=()):
    """Rules between fields: d_k = d_model / heads, sinusoids in (sin, cos) pairs."""
    check_heads(key, config)
    if config.positions == "sinusoidal" and config.d_model % 2:
        raise ConfigError(f"{key}.d_model = {config.d_model} must be even for sinusoidal positions")

"""What params.yaml may name for the model, and the facts about each that the parameter rules need,
without torch: the stages that only read results (data, report) parse their parameters without
loading it. The modules that build each option (positions.SCHEMES, attention.WEIGHTS) carry the same
names; tests/test_model.py holds them equal."""

from dataclasses import dataclass

from pipeline.infra.errors import ConfigError
from pipeline.tokens import DIGITS

KINDS = ("encoder", "decoder", "cross")  # encoder self-attention, decoder self-attention, cross
# model.attention's names, and those of them with a learned bias per head (model.sigmoid_bias)
WEIGHTINGS = ("softmax", "log_length", "sigmoid", "sigmoid_log", "sigmoid_st", "split", "none")
GATED = ("sigmoid", "sigmoid_log", "sigmoid_st", "split")


@dataclass(frozen=True)
class PositionRules:
    sinusoids: bool = False  # reads the sinusoid table: d_model must be even
    draws_positions: bool = False  # draws positions from [0, max_len): max_len must exceed training lengths
    source_rows: int = 0  # rows it adds to the source (BOS)


POSITIONS = {  # model.positions's names
    "sinusoidal": PositionRules(sinusoids=True),
    "none_encoder": PositionRules(sinusoids=True),
    "learned": PositionRules(),
    "randomized": PositionRules(sinusoids=True, draws_positions=True),
    "alibi": PositionRules(),
    "bos": PositionRules(source_rows=1),
    "offset": PositionRules(sinusoids=True, draws_positions=True),
    "bos_offset": PositionRules(sinusoids=True, draws_positions=True, source_rows=1),
}


def attention_kinds(attention):
    """`softmax` -> (softmax, softmax, softmax); `softmax/sigmoid/sigmoid` -> one name per kind."""
    names = tuple(attention.split("/"))
    return names * len(KINDS) if len(names) == 1 else names


def uses_sigmoid_bias(attention):
    """Whether model.sigmoid_bias matters: some attention of `attention` has a learned gate."""
    return any(name in GATED for name in attention_kinds(attention))


# The hand-set counting sort's shape (pipeline/model/handset.py builds it), here so that checking
# train.init = handset does not load the construction: editing it reruns only the stages that build it.
HANDSET_SHAPE = {"d_model": 32, "heads": 4, "positions": "bos", "norm": "post"}


def check_handset_fits(config, key="init"):
    """The construction needs the sums model at the lesson's width: refuse anything else up front."""
    wrong = {k: v for k, v in HANDSET_SHAPE.items() if getattr(config, k) != v}
    if wrong or config.d_ff < 2 * DIGITS or config.attention.split("/")[1:] != ["sigmoid", "sigmoid"]:
        raise ConfigError(
            f"{key} = handset needs d_model 32, 4 heads, d_ff >= 20, post-norm, positions bos and sigmoid "
            f"attention in the decoder (softmax, sigmoid or none in the encoder); this variant has "
            f"d_model {config.d_model}, {config.heads} heads, d_ff {config.d_ff}, {config.norm}-norm, "
            f"positions {config.positions}, attention {config.attention}"
        )

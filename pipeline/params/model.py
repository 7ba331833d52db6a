"""The model's section of params.yaml: ModelConfig, each field with the rule that checks it, and the
registry of the options it names (positions, attention, norm).

Each registry lists the names params.yaml accepts, with the facts about each that the parameter rules
need, and no torch: the stages that only read results (data, report) parse their parameters without
loading it. The model's own classes fill it as they are defined (`@POSITIONS.implements("bos")` in
pipeline/model/positions.py), so a name is written once here and once on the class that builds it;
a class for an unknown name, or a second class for a name, fails at import. An option marked `study`
is the length study's: its class lives in pipeline/study/ (loaded by pipeline/study/schemes.py), and
only a study variant may name it; the lesson's model holds the paper's options and pre-norm, which
the lesson discusses, and refuses the study's in one line (check_lesson_model).
"""

from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.infra.errors import ConfigError
from pipeline.params.rules import ANY_FLOAT, POSITIVE_INT, float_in, one_of, per_kind, section

KINDS = ("encoder", "decoder", "cross")  # encoder self-attention, decoder self-attention, cross


class Options(Mapping):
    """One option's registry: its names in order, each name's facts (`facts[name]`), and, once the
    model's modules have loaded, the class that builds it (`registry[name]`)."""

    def __init__(self, key, facts):
        self.key, self.facts, self._classes = key, dict(facts), {}

    def implements(self, name):
        """Class decorator: the class builds option `name`."""

        def fill(cls):
            if name not in self.facts:
                raise ValueError(f"{cls.__name__} implements {self.key} = {name}, which is not registered")
            if name in self._classes:
                raise ValueError(
                    f"{self.key} = {name} has two classes: {self._classes[name].__name__}, {cls.__name__}"
                )
            self._classes[name] = cls
            return cls

        return fill

    def __getitem__(self, name):
        if name not in self._classes:
            raise KeyError(f"{self.key} = {name}: no class builds it (pipeline.model not loaded?)")
        return self._classes[name]

    def __contains__(self, name):
        return name in self.facts

    def __iter__(self):
        return iter(self.facts)

    def __len__(self):
        return len(self.facts)


@dataclass(frozen=True)
class PositionRules:
    study: bool = False  # the length study's alone (pipeline/study/positions.py)
    sinusoids: bool = False  # reads the sinusoid table: d_model must be even
    draws_positions: bool = False  # draws positions from [0, max_len): max_len must exceed training lengths
    source_rows: int = 0  # rows it adds to the source (BOS)
    any_length: bool = False  # the source carries no positions: built for any length it is asked


@dataclass(frozen=True)
class AttentionRules:
    study: bool = False  # the length study's alone (pipeline/study/attention.py, signed_count.py, ...)
    gated: bool = False  # a learned bias per head, started at model.sigmoid_bias
    counts_written: bool = False  # a cross-attention that also reads the tokens written (the signed counts)


@dataclass(frozen=True)
class NormRules:
    study: bool = False  # the length study's alone (pipeline/study/rezero.py)
    closes_stack: bool = False  # leaves the stream un-normalised: a final LayerNorm closes each stack


POSITIONS = Options(  # model.positions (pipeline/model/positions.py)
    "model.positions",
    {
        "sinusoidal": PositionRules(sinusoids=True),
        "none_encoder": PositionRules(study=True, sinusoids=True, any_length=True),
        "learned": PositionRules(),
        "randomized": PositionRules(study=True, sinusoids=True, draws_positions=True),
        "alibi": PositionRules(study=True),
        "bos": PositionRules(study=True, source_rows=1, any_length=True),
        "offset": PositionRules(study=True, sinusoids=True, draws_positions=True),
        "bos_offset": PositionRules(study=True, sinusoids=True, draws_positions=True, source_rows=1),
    },
)
ATTENTION = Options(  # model.attention's weightings (pipeline/model/attention.py)
    "model.attention",
    {
        "softmax": AttentionRules(),
        "log_length": AttentionRules(study=True),
        "sigmoid": AttentionRules(study=True, gated=True),
        "sigmoid_log": AttentionRules(study=True, gated=True),
        "sigmoid_st": AttentionRules(study=True, gated=True),
        "split": AttentionRules(study=True, gated=True),
        "hard_sigmoid": AttentionRules(study=True, gated=True),
        "signed": AttentionRules(study=True, gated=True, counts_written=True),
        "signed_tanh": AttentionRules(study=True, gated=True, counts_written=True),
        "signed_clamp": AttentionRules(study=True, gated=True, counts_written=True),
        "signed_owed": AttentionRules(study=True, gated=True, counts_written=True),
        "none": AttentionRules(study=True),
    },
)
NORMS = Options(  # model.norm's residual wrappers (pipeline/model/transformer.py)
    "model.norm",
    {
        "post": NormRules(),
        "pre": NormRules(closes_stack=True),
        "rezero": NormRules(study=True, closes_stack=True),
    },
)


def lesson_names(options):
    """The names of `options` the lesson's model may take: those not marked the study's."""
    return [name for name, facts in options.facts.items() if not facts.study]


def attention_kinds(attention):
    """`softmax` -> (softmax, softmax, softmax); `softmax/sigmoid/sigmoid` -> one name per kind."""
    names = tuple(attention.split("/"))
    return names * len(KINDS) if len(names) == 1 else names


def counts_written(attention):
    """Whether the cross-attention of `attention` is a signed count (it reads the tokens written too)."""
    return ATTENTION.facts[attention_kinds(attention)[2]].counts_written


def uses_sigmoid_bias(attention):
    """Whether model.sigmoid_bias matters: some attention of `attention` has a learned gate."""
    return any(ATTENTION.facts[name].gated for name in attention_kinds(attention))


@section
class ModelConfig:
    """The encoder-decoder of lesson 10 (paper section 3) and the length study's schemes."""

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
    sigmoid_bias: ANY_FLOAT  # sigmoid attention's learned b_h at the start
    max_len: POSITIVE_INT


def longest_source(config):
    """The longest source the model reads: max_len, less the rows a positions scheme adds (BOS)."""
    return config.max_len - POSITIONS.facts[config.positions].source_rows


def reads_any_length(config):
    """Whether the model is built for any source length (its source carries no positions)."""
    return POSITIONS.facts[config.positions].any_length


def max_len_for(config, longest):
    """The max_len that reads sources of `longest` tokens, BOS rows included."""
    return longest + POSITIONS.facts[config.positions].source_rows


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
    scheme = POSITIONS.facts[config.positions]
    if scheme.sinusoids and config.d_model % 2:
        raise ConfigError(f"{key}.d_model = {config.d_model} must be even for {config.positions} positions")
    if scheme.draws_positions and train_lengths and max(train_lengths) >= config.max_len:
        raise ConfigError(
            f"{key}.positions = {config.positions} draws positions from [0, max_len) = "
            f"[0, {config.max_len}): max_len must exceed the longest training length, {max(train_lengths)}"
        )


def check_lesson_model(key, config):
    """The lesson's model takes the paper's options and pre-norm; a name only the length study's
    variants take is refused, naming where it goes."""
    named = [("positions", config.positions, POSITIONS), ("norm", config.norm, NORMS)]
    named += [("attention", name, ATTENTION) for name in attention_kinds(config.attention)]
    in_variant = {"positions": "positions", "attention": "attention", "norm": "model.norm"}
    for field, name, options in named:
        if options.facts[name].study:
            raise ConfigError(
                f"{key}.{field} = {getattr(config, field)}: '{name}' is one of the length study's options; "
                f"the lesson's model takes {', '.join(lesson_names(options))} (a study variant takes it: "
                f"study.variants.<name>.{in_variant[field]})"
            )

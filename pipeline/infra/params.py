"""params.yaml parsed once into frozen, typed dataclasses; every invalid value is one clear error.

Each field carries a rule (in its dataclass metadata, from pipeline/infra/rules.py) that converts
and checks the raw YAML value.
"""

import dataclasses
import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pipeline.infra.choices import (
    ATTENTION_KINDS,
    ATTENTIONS,
    DEFAULT_STUDY_VARIANTS,
    POSITIONS,
    STUDY_VARIANTS,
    parse_variant,
)
from pipeline.infra.errors import ConfigError
from pipeline.infra.rules import (
    POSITIVE_FLOAT,
    POSITIVE_INT,
    float_in,
    int_at_least,
    list_of,
    one_of,
    per_kind,
    spec,
)

BETAS = list_of(float_in(0.0, 1.0, low_open=True), "numbers in (0, 1)", length=2)

# ------------------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class DataParams:
    """The sorting task: sources of random digits, targets their sorted copy."""

    train_lengths: tuple = spec((10,), list_of(POSITIVE_INT, "integers >= 1", unique=True))
    train_size: int = spec(768_000, POSITIVE_INT)
    test_lengths: tuple = spec((6, 8, 10, 12, 14), list_of(POSITIVE_INT, "integers >= 1", True))
    test_size: int = spec(10_000, POSITIVE_INT)
    seed: int = spec(0, int_at_least(0))


@dataclass(frozen=True)
class ModelParams:
    """The encoder-decoder of lesson 10 (paper section 3), at the lesson's size."""

    d_model: int = spec(32, POSITIVE_INT)
    heads: int = spec(4, POSITIVE_INT)
    layers: int = spec(2, POSITIVE_INT)
    d_ff: int = spec(128, POSITIVE_INT)
    dropout: float = spec(0.1, float_in(0.0, 1.0))
    norm: str = spec("post", one_of("post", "pre"))
    positions: str = spec("sinusoidal", one_of(*POSITIONS))  # see POSITIONS
    attention: str = spec("softmax", per_kind(ATTENTIONS, ATTENTION_KINDS))  # see ATTENTIONS
    sigmoid_bias: float = spec(-8.0, float_in(-math.inf, math.inf))  # sigmoid attention's b_h at start
    max_len: int = spec(64, POSITIVE_INT)


@dataclass(frozen=True)
class Recipe:
    """The paper's recipe (section 5.3-5.4) as lesson 10 runs it: what the lesson's model and the
    study's variants both train with."""

    steps: int = spec(1200, POSITIVE_INT)
    batch_size: int = spec(64, POSITIVE_INT)
    lr: float = spec(0.002, POSITIVE_FLOAT)
    betas: tuple = spec((0.9, 0.98), BETAS)
    eps: float = spec(1e-9, POSITIVE_FLOAT)
    warmup: int = spec(100, POSITIVE_INT)
    label_smoothing: float = spec(0.1, float_in(0.0, 1.0))
    seeds: tuple = spec((0, 1, 2), list_of(int_at_least(0), "integers >= 0", unique=True))
    device: str = spec("auto", one_of("auto", "cpu", "cuda"))


@dataclass(frozen=True)
class TrainParams(Recipe):
    """The lesson's model's training: the recipe on ten seeds, with progress and resume."""

    seeds: tuple = spec(tuple(range(10)), list_of(int_at_least(0), "integers >= 0", unique=True))

    log_every: int = spec(300, POSITIVE_INT)
    resume_every: int = spec(0, int_at_least(0))  # 0: off; N: save a resumable state every N steps


@dataclass(frozen=True)
class EvaluateParams:
    """How decoding is measured."""

    batch_size: int = spec(1000, POSITIVE_INT)
    show_failures: int = spec(3, int_at_least(0))
    beam_size: int = spec(4, POSITIVE_INT)  # the paper's beam (section 6.1); 1 is greedy
    length_penalty: float = spec(0.6, float_in(0.0, math.inf))  # alpha of Wu et al. (2016)


@dataclass(frozen=True)
class ProbeParams:
    """Lesson 6's probes of residual connections and LayerNorm, on toy stacks and real models."""

    depths: tuple = spec((1, 2, 4, 6, 8, 12), list_of(POSITIVE_INT, "integers >= 1", unique=True))
    sweep_layers: tuple = spec(
        (1, 2, 3, 4, 6, 8, 10, 12), list_of(POSITIVE_INT, "integers >= 1", unique=True)
    )
    seed: int = spec(0, int_at_least(0))


@dataclass(frozen=True)
class StudyModelParams:
    """Every study variant's model: the lesson's by default; positions and attention come from the
    variant's name."""

    d_model: int = spec(32, POSITIVE_INT)
    heads: int = spec(4, POSITIVE_INT)
    layers: int = spec(2, POSITIVE_INT)
    d_ff: int = spec(128, POSITIVE_INT)
    dropout: float = spec(0.0, float_in(0.0, 1.0))  # 0, not the lesson's 0.1: dropout blurs counts
    norm: str = spec("post", one_of("post", "pre"))
    sigmoid_bias: float = spec(-4.0, float_in(-math.inf, math.inf))  # `_sigmoid*`, `_sums`: b_h
    max_len: int = spec(64, POSITIVE_INT)


@dataclass(frozen=True)
class StudyTrainParams(Recipe):
    """Every study variant's recipe: the lesson's optimiser and schedule, trained longer."""

    steps: int = spec(4000, POSITIVE_INT)  # mixed lengths need more steps than 1200 to converge
    # by_length: each batch one length, no padding (1.20-1.27x a step); mixed: padded to the longest
    batches: str = spec("by_length", one_of("by_length", "mixed"))


@dataclass(frozen=True)
class StudyParams:
    """The length study: which positional schemes and training lengths sort lengths never trained
    on. It owns its recipe (model, train), so an experiment on the lesson's model retrains none of
    its variants."""

    variants: tuple = spec(
        DEFAULT_STUDY_VARIANTS, list_of(one_of(*STUDY_VARIANTS), "variant names", unique=True)
    )
    model: StudyModelParams = field(default_factory=StudyModelParams)
    train: StudyTrainParams = field(default_factory=StudyTrainParams)
    fixed_lengths: tuple = spec((10,), list_of(POSITIVE_INT, "integers >= 1", unique=True))  # `_fixed`
    train_lengths: tuple = spec(tuple(range(1, 11)), list_of(POSITIVE_INT, "integers >= 1", unique=True))
    max_length: int = spec(40, POSITIVE_INT)  # test every length 1..max_length a model's max_len allows
    test_size: int = spec(500, POSITIVE_INT)  # sequences per length (all of them where fewer exist)
    diagnosis_lengths: tuple = spec(
        (6, 8, 10, 12, 14, 20), list_of(POSITIVE_INT, "integers >= 1", unique=True)
    )
    seed: int = spec(0, int_at_least(0))


@dataclass(frozen=True)
class Params:
    data: DataParams = field(default_factory=DataParams)
    model: ModelParams = field(default_factory=ModelParams)
    train: TrainParams = field(default_factory=TrainParams)
    evaluate: EvaluateParams = field(default_factory=EvaluateParams)
    probe: ProbeParams = field(default_factory=ProbeParams)
    study: StudyParams = field(default_factory=StudyParams)


# ------------------------------------------------------------------------------------- parsing


def _unknown_key(key, known):
    close = difflib.get_close_matches(key.split(".")[-1], known, n=1)
    hint = f" (did you mean {'.'.join(key.split('.')[:-1] + close)}?)" if close else ""
    raise ConfigError(f"unknown parameter {key}{hint}; known: {', '.join(sorted(known))}")


def parse_section(cls, raw, prefix):
    if not isinstance(raw, dict):
        raise ConfigError(f"{prefix} must be a mapping of parameters, got {raw!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in raw:
        if key not in fields:
            _unknown_key(f"{prefix}.{key}", list(fields))
    missing = [name for name in fields if name not in raw]
    if missing:
        raise ConfigError(f"{prefix}: missing parameter(s) {', '.join(missing)}")
    values = {}
    for name, f in fields.items():
        if "rule" in f.metadata:
            values[name] = f.metadata["rule"](f"{prefix}.{name}", raw[name])
        else:  # a nested section
            values[name] = parse_section(f.type, raw[name], f"{prefix}.{name}")
    return cls(**values)


def _check_across(p: Params):
    """Rules that involve more than one value."""
    m = p.model
    check_heads("model", m)
    check_positions("model.positions", m.positions, m, p.data.train_lengths)
    if p.train.batch_size > p.data.train_size:
        raise ConfigError(
            f"train.batch_size = {p.train.batch_size} exceeds data.train_size = {p.data.train_size}: "
            "a batch must fit in the training set"
        )
    longest = m.max_len - (m.positions == "bos")  # positions bos open the source with BOS
    for key in ("train_lengths", "test_lengths"):
        for length in getattr(p.data, key):
            if length > longest:
                raise ConfigError(
                    f"data.{key} has {length}, beyond model.max_len = {m.max_len}"
                    + (" less the BOS that opens the source" if longest < m.max_len else "")
                    + f": lengths must be in [1, {longest}]"
                )
    check_heads("study.model", p.study.model)
    check_length_batches(p.study)
    sm = p.study.model
    for variant in p.study.variants:  # the study's tests and diagnosis stop at each model's max_len
        positions, lengths, _ = variant_recipe(variant, p)
        key = f"study.variants ({variant})"
        if max(lengths) > sm.max_len - (positions == "bos"):
            raise ConfigError(
                f"{key} trains on length {max(lengths)}, beyond study.model.max_len = {sm.max_len}"
                + (" less the BOS that opens the source" if positions == "bos" else "")
            )
        check_positions(key, positions, sm, lengths)


def check_length_batches(s):
    """One-length batches need a full batch of every training length: steps >= lengths."""
    lengths = max(len(s.fixed_lengths), len(s.train_lengths))
    if s.train.batches == "by_length" and s.train.steps < lengths:
        raise ConfigError(
            f"study.train.steps = {s.train.steps} is too few for study.train.batches = by_length: each "
            f"of the {lengths} training lengths needs a batch of its own (steps >= {lengths}), or use mixed"
        )


def check_heads(key, m):
    if m.d_model % m.heads:
        raise ConfigError(
            f"{key}.d_model = {m.d_model} is not divisible by {key}.heads = {m.heads}: "
            "each head needs d_k = d_model / heads"
        )


def check_positions(key, positions, m, train_lengths):
    """A positional scheme that fits the model: sinusoids come in (sin, cos) pairs, and randomized
    positions need a range [0, max_len) larger than the longest training sequence to sample from."""
    if positions in ("sinusoidal", "none_encoder", "randomized") and m.d_model % 2:
        raise ConfigError(f"d_model = {m.d_model} must be even for {positions} positions ({key})")
    if positions == "randomized" and max(train_lengths) >= m.max_len:
        raise ConfigError(
            f"{key} = randomized samples positions from [0, max_len) = [0, {m.max_len}): "
            f"max_len must exceed the longest training length, {max(train_lengths)}"
        )


def variant_recipe(variant, p: Params):
    """A study variant's positional scheme, training lengths and attention (see choices.parse_variant)."""
    positions, lengths, attention = parse_variant(variant)
    return positions, p.study.fixed_lengths if lengths == "fixed" else p.study.train_lengths, attention


def parse_params(raw) -> Params:
    """Validate a params mapping (as read from YAML) into Params, or raise ConfigError."""
    if not isinstance(raw, dict):
        raise ConfigError(f"params.yaml must hold a mapping of sections, got {raw!r}")
    sections = {f.name: f.type for f in dataclasses.fields(Params)}
    for key in raw:
        if key not in sections:
            _unknown_key(key, list(sections))
    values = {}
    for name, cls in sections.items():
        if name not in raw:
            raise ConfigError(f"params.yaml: missing section {name}")
        values[name] = parse_section(cls, raw[name], name)
    params = Params(**values)
    _check_across(params)
    return params


def load_params(path="params.yaml") -> Params:
    """Read and validate params.yaml."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: run from the project root") from None
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise ConfigError(f"{path} is not valid YAML{line}: {getattr(err, 'problem', err)}") from None
    return parse_params(raw)


def as_dict(obj):
    """A dataclass as plain, JSON-ready values (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(obj).items()}

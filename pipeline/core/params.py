"""params.yaml parsed once into frozen, typed dataclasses; every invalid value is one clear error.

The dataclasses declare each field's type and rule (pipeline/infra/rules.py), never a value:
params.yaml is the one source of values. The model's section is the model's own ModelConfig.
"""

import dataclasses
from dataclasses import dataclass, fields, make_dataclass
from pathlib import Path

import yaml

from pipeline.core.variants import check_study
from pipeline.infra.errors import ConfigError
from pipeline.infra.rules import (
    POSITIVE_FLOAT,
    POSITIVE_INT,
    check_keys,
    float_in,
    int_at_least,
    list_of,
    one_of,
    parse_section,
    per_kind,
    required,
    section,
)
from pipeline.model.config import ModelConfig, check_config, check_heads, longest_source
from pipeline.model.options import KINDS, POSITIONS, WEIGHTINGS

VARIANT_OWN = ("positions", "attention")  # what each study variant names for itself

LENGTHS = list_of(POSITIVE_INT, "integers >= 1", unique=True)
SEEDS = list_of(int_at_least(0), "integers >= 0", unique=True)
BETAS = list_of(float_in(0.0, 1.0, low_open=True), "numbers in (0, 1)", length=2)


@dataclass(frozen=True)
class DataParams:
    """The sorting task: sources of random digits, targets their sorted copy."""

    train_lengths: tuple = required(LENGTHS)
    train_size: int = required(POSITIVE_INT)
    test_lengths: tuple = required(LENGTHS)
    test_size: int = required(POSITIVE_INT)
    seed: int = required(int_at_least(0))


@dataclass(frozen=True)
class Recipe:
    """The paper's recipe (section 5.3-5.4) as lesson 10 runs it: what the lesson's model and the
    study's variants both train with."""

    steps: int = required(POSITIVE_INT)
    batch_size: int = required(POSITIVE_INT)
    lr: float = required(POSITIVE_FLOAT)
    betas: tuple = required(BETAS)
    eps: float = required(POSITIVE_FLOAT)
    warmup: int = required(POSITIVE_INT)
    label_smoothing: float = required(float_in(0.0, 1.0))
    seeds: tuple = required(SEEDS)
    device: str = required(one_of("auto", "cpu", "cuda"))


@dataclass(frozen=True)
class TrainParams(Recipe):
    """The lesson's model's training: the recipe, with progress and resume."""

    log_every: int = required(POSITIVE_INT)
    resume_every: int = required(int_at_least(0))  # 0: off; N: save a resumable state every N steps


@dataclass(frozen=True)
class EvaluateParams:
    """How decoding is measured."""

    batch_size: int = required(POSITIVE_INT)
    show_failures: int = required(int_at_least(0))
    beam_size: int = required(POSITIVE_INT)  # the paper's beam (section 6.1); 1 is greedy
    length_penalty: float = required(float_in(0.0, float("inf")))  # alpha of Wu et al. (2016)


@dataclass(frozen=True)
class NormParams:
    """The pre-norm comparison: how many of train.seeds (the first) are retrained with the other norm."""

    count: int = required(POSITIVE_INT)


@dataclass(frozen=True)
class ProbeParams:
    """Lesson 6's probes of residual connections and LayerNorm, on toy stacks and real models."""

    depths: tuple = required(LENGTHS)
    sweep_layers: tuple = required(LENGTHS)
    seed: int = required(int_at_least(0))


# Every study variant's model but its positions and attention, which each variant names: the model's
# own fields with the model's own rules (pipeline/model/config.py), so the two cannot drift apart.
StudyModelParams = make_dataclass(
    "StudyModelParams",
    [
        (f.name, f.type, required(f.metadata["rule"]))
        for f in fields(ModelConfig)
        if f.name not in VARIANT_OWN
    ],
    frozen=True,
)
StudyModelParams.__module__ = __name__  # picklable: parameters travel to the seeds' worker processes


@dataclass(frozen=True)
class StudyTrainParams(Recipe):
    """Every study variant's recipe: the lesson's optimiser and schedule, trained longer."""

    # by_length: each batch one length, no padding (1.20-1.27x a step); mixed: padded to the longest
    batches: str = required(one_of("by_length", "mixed"))
    # random: the paper's initialisation; handset: the hand-set counting sort (model/handset.py)
    init: str = required(one_of("random", "handset"))
    # the count hint's weight (pipeline/core/hint.py): 0 trains the sort alone
    count_hint: float = required(float_in(0.0, float("inf")))


@dataclass(frozen=True)
class StudyDataParams:
    """How every variant's training rows are drawn."""

    train_lengths: tuple = required(LENGTHS)
    # the share of rows drawn from k distinct digits (k uniform in 1..min(length, 10)), so that
    # training holds as many copies of one digit as longer inputs do; 0: every digit uniform
    repeats: float = required(float_in(0.0, 1.0))


@dataclass(frozen=True)
class BarParams:
    """What it takes to sort any length: `accuracy` exact sequences at every length in `lengths`
    (first to last), mean over at least `min_seeds` seeds, and no seed below `seed_floor`."""

    accuracy: float = required(float_in(0.0, 1.0, high_open=False))
    lengths: tuple = required(list_of(POSITIVE_INT, "integers >= 1", length=2))
    seed_floor: float = required(float_in(0.0, 1.0, high_open=False))
    min_seeds: int = required(POSITIVE_INT)


def overrides(cls):
    """A rule: some of `cls`'s keys, each checked by its own rule (a variant's own values)."""

    def rule(key, value):
        return parse_section(cls, {} if value is None else value, key, partial=True)

    return rule


@dataclass(frozen=True)
class Variant:
    """One variant of the length study: its positions and attention, and the study.model,
    study.train and study.data values it changes for itself alone (none where absent)."""

    positions: str = required(one_of(*POSITIONS))
    attention: str = required(per_kind(WEIGHTINGS, KINDS))
    model: dict = required(overrides(StudyModelParams))
    train: dict = required(overrides(StudyTrainParams))
    data: dict = required(overrides(StudyDataParams))


def variants_rule(key, value):
    """study.variants: a non-empty mapping of names to entries; an entry's model, train and data
    may be left out."""
    if not isinstance(value, dict) or not value:
        raise ConfigError(f"{key} = {value!r} is invalid: expected a mapping of variant names to entries")
    parsed = {}
    for name, entry in value.items():
        if not isinstance(entry, dict):
            raise ConfigError(
                f"{key}.{name} = {entry!r} is invalid: expected a mapping with positions and attention"
            )
        entry = {"model": None, "train": None, "data": None, **entry}
        parsed[str(name)] = parse_section(Variant, entry, f"{key}.{name}")
    return parsed


@dataclass(frozen=True)
class SearchSeeds:
    """The search's own seeds (pipeline/study/search.yaml), each set with one job: `screen` gives a
    row its first look, `confirm` retrains the rows near the bar and chooses the best of them. The
    study's own seeds (study.train.seeds and any a variant names) are held out from both: the
    search never trains them, so the study's verdict is on seeds nobody chose a recipe by."""

    screen: tuple = required(SEEDS)
    confirm: tuple = required(SEEDS)


@dataclass(frozen=True)
class StudyParams:
    """The length study: which positional schemes and attention sort lengths never trained on. It
    owns its recipe (model, train, data), so an experiment on the lesson's model retrains none of
    its variants."""

    variants: dict = required(variants_rule)  # name: Variant, each its own stage variant@<name>
    model: StudyModelParams = section()
    train: StudyTrainParams = section()
    data: StudyDataParams = section()
    bar: BarParams = section()
    search_seeds: SearchSeeds = section()
    max_length: int = required(POSITIVE_INT)  # test every length 1..max_length a model's max_len allows
    test_size: int = required(POSITIVE_INT)  # sequences per length (all of them where fewer exist)
    diagnosis_lengths: tuple = required(LENGTHS)
    seed: int = required(int_at_least(0))


@dataclass(frozen=True)
class Params:
    data: DataParams = section()
    model: ModelConfig = section()
    train: TrainParams = section()
    evaluate: EvaluateParams = section()
    norm: NormParams = section()
    probe: ProbeParams = section()
    study: StudyParams = section()


# ------------------------------------------------------------------------------------- parsing


def check_across(p: Params):
    """Rules that involve more than one value."""
    check_config("model", p.model, p.data.train_lengths)
    if p.train.batch_size > p.data.train_size:
        raise ConfigError(
            f"train.batch_size = {p.train.batch_size} exceeds data.train_size = {p.data.train_size}: "
            "a batch must fit in the training set"
        )
    longest = longest_source(p.model)
    for key in ("train_lengths", "test_lengths"):
        for length in getattr(p.data, key):
            if length > longest:
                raise ConfigError(
                    f"data.{key} has {length}, beyond model.max_len = {p.model.max_len}"
                    + (" less the BOS that opens the source" if longest < p.model.max_len else "")
                    + f": lengths must be in [1, {longest}]"
                )
    check_heads("study.model", p.study.model)
    low, high = p.study.bar.lengths
    if low > high:
        raise ConfigError(
            f"study.bar.lengths = {[low, high]} is invalid: expected [first, last] with first <= last"
        )
    check_study(p)


def parse_params(raw) -> Params:
    """Validate a params mapping (as read from YAML) into Params, or raise ConfigError."""
    if not isinstance(raw, dict):
        raise ConfigError(f"params.yaml must hold a mapping of sections, got {raw!r}")
    check_keys(raw, [f.name for f in dataclasses.fields(Params)], "")
    missing = [f.name for f in dataclasses.fields(Params) if f.name not in raw]
    if missing:
        raise ConfigError(f"params.yaml: missing section {missing[0]}")
    params = parse_section(Params, raw, "")
    check_across(params)
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

"""params.yaml parsed once into frozen, typed sections (pydantic dataclasses, pipeline/infra/rules.py);
every invalid value is one clear error.

The sections declare each field's type and rule, never a value: params.yaml is the one source of
values. The model's section is the model's own ModelConfig.
"""

import dataclasses
from pathlib import Path
from typing import Annotated

import pydantic
import yaml

from pipeline.core.reads import declared
from pipeline.core.variants import check_study
from pipeline.infra.errors import ConfigError
from pipeline.infra.rules import (
    NATURAL,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    float_in,
    list_of,
    mapping_of,
    one_of,
    overrides,
    parse,
    per_kind,
    section,
)
from pipeline.model.config import ModelConfig, check_config, check_heads, longest_source
from pipeline.model.options import KINDS, POSITIONS, WEIGHTINGS

VARIANT_OWN = ("positions", "attention")  # what each study variant names for itself

LENGTHS = list_of(POSITIVE_INT, unique=True)
SEEDS = list_of(NATURAL, unique=True)
BETAS = list_of(float_in(0.0, 1.0, low_open=True), length=2)


@section
class DataParams:
    """The sorting task: sources of random digits, targets their sorted copy."""

    train_lengths: LENGTHS
    train_size: POSITIVE_INT
    test_lengths: LENGTHS
    test_size: POSITIVE_INT
    seed: NATURAL


@section
class Recipe:
    """The paper's recipe (section 5.3-5.4) as lesson 10 runs it: what the lesson's model and the
    study's variants both train with."""

    steps: POSITIVE_INT
    batch_size: POSITIVE_INT
    lr: POSITIVE_FLOAT
    betas: BETAS
    eps: POSITIVE_FLOAT
    warmup: POSITIVE_INT
    label_smoothing: float_in(0.0, 1.0)
    seeds: SEEDS
    device: one_of("auto", "cpu", "cuda")


@section
class TrainParams(Recipe):
    """The lesson's model's training: the recipe, with progress and resume."""

    log_every: POSITIVE_INT
    resume_every: NATURAL  # 0: off; N: save a resumable state every N steps


@section
class EvaluateParams:
    """How decoding is measured."""

    batch_size: POSITIVE_INT
    show_failures: NATURAL
    beam_size: POSITIVE_INT  # the paper's beam (section 6.1); 1 is greedy
    length_penalty: float_in(0.0, float("inf"))  # alpha of Wu et al. (2016)


@section
class NormParams:
    """The pre-norm comparison: how many of train.seeds (the first) are retrained with the other norm."""

    count: POSITIVE_INT


@section
class ProbeParams:
    """Lesson 6's probes of residual connections and LayerNorm, on toy stacks and real models."""

    depths: LENGTHS
    sweep_layers: LENGTHS
    seed: NATURAL


# Every study variant's model but its positions and attention, which each variant names: the model's
# own fields with the model's own rules (pipeline/model/config.py), so the two cannot drift apart.
StudyModelParams = dataclasses.make_dataclass(
    "StudyModelParams",
    [(f.name, f.type) for f in dataclasses.fields(ModelConfig) if f.name not in VARIANT_OWN],
    frozen=True,
)
StudyModelParams.__module__ = __name__  # picklable: parameters travel to the seeds' worker processes
StudyModelParams = section(StudyModelParams)


@section
class StudyTrainParams(Recipe):
    """Every study variant's recipe: the lesson's optimiser and schedule, trained longer."""

    # by_length: each batch one length, no padding (1.20-1.27x a step); mixed: padded to the longest
    batches: one_of("by_length", "mixed")
    # random: the paper's initialisation; handset: the hand-set counting sort (model/handset.py)
    init: one_of("random", "handset")
    # the count hint's weight (pipeline/core/hint.py): 0 trains the sort alone
    count_hint: float_in(0.0, float("inf"))


@section
class StudyDataParams:
    """How every variant's training rows are drawn."""

    train_lengths: LENGTHS
    # the share of rows drawn from k distinct digits (k uniform in 1..min(length, 10)), so that
    # training holds as many copies of one digit as longer inputs do; 0: every digit uniform
    repeats: float_in(0.0, 1.0)


@section
class BarParams:
    """What it takes to sort any length: `accuracy` exact sequences at every length in `lengths`
    (first to last), mean over at least `min_seeds` seeds, and no seed below `seed_floor`."""

    accuracy: float_in(0.0, 1.0, high_open=False)
    lengths: list_of(POSITIVE_INT, length=2)
    seed_floor: float_in(0.0, 1.0, high_open=False)
    min_seeds: POSITIVE_INT


@section
class Variant:
    """One variant of the length study: its positions and attention, and the study.model,
    study.train and study.data values it changes for itself alone (none where absent)."""

    positions: one_of(*POSITIONS)
    attention: per_kind(WEIGHTINGS, KINDS)
    model: overrides(StudyModelParams)
    train: overrides(StudyTrainParams)
    data: overrides(StudyDataParams)


def with_overrides_named(entries):
    """A variant's model, train and data may be left out: none of its own values."""
    if not isinstance(entries, dict):
        return entries
    return {
        str(k): {"model": None, "train": None, "data": None, **v} if isinstance(v, dict) else v
        for k, v in entries.items()
    }


VARIANTS = Annotated[
    mapping_of(Variant, "a mapping of variant names to entries"),
    pydantic.BeforeValidator(with_overrides_named),
]


@section
class SearchSeeds:
    """The search's own seeds (pipeline/study/search.yaml), each set with one job: `screen` gives a
    row its first look, `confirm` retrains the rows near the bar and chooses the best of them. The
    study's own seeds (study.train.seeds and any a variant names) are held out from both: the
    search never trains them, so the study's verdict is on seeds nobody chose a recipe by."""

    screen: SEEDS
    confirm: SEEDS


@section
class StudyParams:
    """The length study: which positional schemes and attention sort lengths never trained on. It
    owns its recipe (model, train, data), so an experiment on the lesson's model retrains none of
    its variants."""

    # name: Variant, each its own stage variant@<name>
    variants: VARIANTS
    model: StudyModelParams
    train: StudyTrainParams
    data: StudyDataParams
    bar: BarParams
    search_seeds: SearchSeeds
    max_length: POSITIVE_INT  # test every length 1..max_length a model's max_len allows
    test_size: POSITIVE_INT  # sequences per length (all of them where fewer exist)
    diagnosis_lengths: LENGTHS
    seed: NATURAL


@section
class Params:
    data: DataParams
    model: ModelConfig
    train: TrainParams
    evaluate: EvaluateParams
    norm: NormParams
    probe: ProbeParams
    study: StudyParams


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
    params = parse(Params, raw)
    check_across(params)
    return params


def load_params(path="params.yaml", reads=None, own=None):
    """Read and validate params.yaml: all of Params, or what a stage that declares `reads` sees
    (pipeline/core/reads.py; `own`: a foreach stage's entry)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: run from the project root") from None
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise ConfigError(f"{path} is not valid YAML{line}: {getattr(err, 'problem', err)}") from None
    params = parse_params(raw)
    return params if reads is None else declared(params, reads, own)

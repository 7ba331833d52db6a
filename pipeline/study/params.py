"""The length study's parameters (study/params.yaml, the section `study`), what each of its variants
trains with (the study's model, recipe and data with the variant's positions, attention and own
values laid over them), and the rules those values must keep. Torch-free, as the lesson's are."""

import dataclasses
import functools
from typing import Annotated

import pydantic

from pipeline.infra.errors import ConfigError
from pipeline.params.model import check_heads
from pipeline.params.rules import (
    NATURAL,
    POSITIVE_INT,
    allowing,
    as_dict,
    float_in,
    list_of,
    mapping_of,
    one_of,
    overrides,
    parse,
    per_kind,
    section,
)
from pipeline.params.sections import LENGTHS, SEEDS, RecipeParams
from pipeline.study.options import (
    ATTENTION,
    KINDS,
    POSITIONS,
    StudyModelConfig,
    attention_kinds,
    check_config,
    longest_source,
)
from pipeline.tokens import DIGITS

VARIANT_OWN = ("positions", "attention")  # what each study variant names for itself

# Every study variant's model but its positions and attention, which each variant names: the variant
# model's own fields with its own rules (pipeline/study/options.py), so the two cannot drift apart.
StudyModelParams = dataclasses.make_dataclass(
    "StudyModelParams",
    [(f.name, f.type) for f in dataclasses.fields(StudyModelConfig) if f.name not in VARIANT_OWN],
    frozen=True,
)
StudyModelParams.__module__ = __name__  # picklable: parameters travel to the seeds' worker processes
StudyModelParams = section(StudyModelParams)


@section
class StudyTrainParams(RecipeParams):
    """Every study variant's recipe: the lesson's optimiser and schedule, trained longer."""

    # by_length: each batch one length, no padding (1.20-1.27x a step); mixed: padded to the longest
    batches: one_of("by_length", "mixed")
    # random: the paper's initialisation; handset: the counting sort set by hand (study/counting_sort.py);
    # handset_soft: the same with gates a few units wide, so that training can move every one
    init: one_of("random", "handset", "handset_soft")
    # the count hint's weight (pipeline/study/variant.py, CountHint): 0, off, trains the sort alone
    count_hint: float_in(0.0, float("inf")) = 0.0


@section
class StudyDataParams:
    """How every variant's training rows are drawn."""

    train_lengths: LENGTHS
    # the share of rows drawn from k distinct digits (k uniform in 1..min(length, 10)), so that
    # training holds as many copies of one digit as longer inputs do; 0: every digit uniform
    repeats: float_in(0.0, 1.0)
    # the share of rows in which one digit holds most of the row (more than half of it, up to all),
    # drawn from the rows `repeats` left uniform; 0: none
    long_counts: float_in(0.0, 1.0) = 0.0


@section
class BarParams:
    """What it takes to sort any length: `accuracy` exact sequences at every length in `lengths`
    (first to last), mean over at least `min_seeds` seeds, and no seed below `seed_floor`."""

    accuracy: float_in(0.0, 1.0, high_open=False)
    lengths: list_of(POSITIVE_INT, length=2)
    seed_floor: float_in(0.0, 1.0, high_open=False)
    min_seeds: POSITIVE_INT


# the verdict's kinds of input (pipeline/study/verdict_sets.py draws them)
VERDICT_KINDS = ("uniform", "repeats", "long_counts")


@section
class VerdictParams:
    """The study's verdict: the `variants` named, each trained on its own seeds, tested on sequences
    of a seed of the verdict's own (`seed`, never the search's study.seed) at lengths 1..`max_length`,
    `test_size` of each kind of input at each; a length passes only if every kind meets `bar`."""

    variants: list_of(allowing(str, "a variant's name", "variant names"), unique=True)
    kinds: list_of(one_of(*VERDICT_KINDS), unique=True)
    max_length: POSITIVE_INT
    test_size: POSITIVE_INT
    table_lengths: LENGTHS  # the lengths at which the report gives every seed
    bar: BarParams
    seed: NATURAL


@section
class Variant:
    """One variant of the length study: its positions and attention, and the study.model,
    study.train and study.data values it changes for itself alone (none where absent)."""

    positions: one_of(*POSITIONS)
    attention: per_kind(tuple(ATTENTION), KINDS)
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
    verdict: VerdictParams

    @functools.cached_property
    def recipes(self):
        """{variant name: what it trains with, (config, recipe, data)}: resolved once, when the
        study's rules check them (check_study), and read from here after."""
        return {
            name: variant_recipe(v, self.model, self.train, self.data) for name, v in self.variants.items()
        }


# ------------------------------------------------------------------------------- the variants


def variant_recipe(variant: Variant, model: StudyModelParams, train: StudyTrainParams, data: StudyDataParams):
    """What a variant trains with: (its model's config, its recipe, how its rows are drawn): the
    study's own model, recipe and data with the variant's positions, attention and own values."""
    config = StudyModelConfig(
        **{**as_dict(model), **variant.model, "positions": variant.positions, "attention": variant.attention}
    )
    return config, dataclasses.replace(train, **variant.train), dataclasses.replace(data, **variant.data)


def with_variant(study: StudyParams, name, entry):
    """The study with `entry` (a variant as study/params.yaml writes it) as its one variant, `name`, and the
    one variant its verdict would judge, checked by the study's rules: how the search trains each of
    its rows (ranked on the search's sequences, never the verdict's)."""
    variants = parse(VARIANTS, {name: entry}, "study.variants")
    verdict = dataclasses.replace(study.verdict, variants=(name,))
    trying = dataclasses.replace(study, variants=variants, verdict=verdict)
    check_study(trying)
    return trying


# The hand-set counting sort's shape (pipeline/study/counting_sort.py builds it), here so that checking
# train.init = handset does not load the construction: editing it reruns only the stages that build it.
HANDSET_SHAPE = {"d_model": 32, "heads": 4, "positions": "bos", "norm": "post"}


def check_handset_fits(config, key="init"):
    """The construction needs the sums model at the lesson's width: refuse anything else up front."""
    wrong = {k: v for k, v in HANDSET_SHAPE.items() if getattr(config, k) != v}
    if wrong or config.d_ff < 2 * DIGITS or attention_kinds(config.attention)[1:] != ("sigmoid", "sigmoid"):
        raise ConfigError(
            f"{key} = handset needs d_model 32, 4 heads, d_ff >= 20, post-norm, positions bos and sigmoid "
            f"attention in the decoder (softmax, sigmoid or none in the encoder); this variant has "
            f"d_model {config.d_model}, {config.heads} heads, d_ff {config.d_ff}, {config.norm}-norm, "
            f"positions {config.positions}, attention {config.attention}"
        )


def check_signed_count(key, config):
    """The signed count (pipeline/study/signed_count.py, each of its names) is a cross-attention that
    reads the tokens written through the encoder as it reads the input: the same rows only where the
    encoder sees each token alone."""
    encoder, decoder, cross = attention_kinds(config.attention)
    misplaced = [n for n in (encoder, decoder) if ATTENTION[n].counts_written]
    if misplaced:
        raise ConfigError(
            f"{key}.attention = {config.attention}: '{misplaced[0]}' is a cross-attention that also reads "
            f"the decoder's input; name it third (none/none/{misplaced[0]})"
        )
    if ATTENTION[cross].counts_written and (encoder != "none" or config.positions != "bos"):
        raise ConfigError(
            f"{key}.attention = {config.attention} with positions {config.positions}: the signed count "
            "reads the tokens written through the encoder as it reads the input, which is the same "
            "rows only where the encoder sees each token alone: encoder attention none, positions bos"
        )


def check_seed_sets(seeds):
    shared = sorted(set(seeds.screen) & set(seeds.confirm))
    if shared:
        raise ConfigError(
            f"study.search_seeds: seed {shared[0]} is in both screen and confirm: a confirmation needs "
            "seeds the screen did not choose by"
        )


def check_bar_lengths(key, bar):
    low, high = bar.lengths
    if low > high:
        raise ConfigError(
            f"{key}.lengths = {[low, high]} is invalid: expected [first, last] with first <= last"
        )


def check_verdict(study: StudyParams):
    """The verdict judges variants the study trains, on sequences nobody ranked a row by, at lengths
    it tests."""
    verdict = study.verdict
    check_bar_lengths("study.verdict.bar", verdict.bar)
    unknown = [v for v in verdict.variants if v not in study.variants]
    if unknown:
        raise ConfigError(f"study.verdict.variants names {unknown[0]}, which is not in study.variants")
    if verdict.seed == study.seed:
        raise ConfigError(
            f"study.verdict.seed = {verdict.seed} is study.seed, whose test sequences the search ranks its "
            "rows by: the verdict needs sequences of its own"
        )
    beyond = [n for n in (verdict.bar.lengths[1], *verdict.table_lengths) if n > verdict.max_length]
    if beyond:
        raise ConfigError(
            f"study.verdict: length {beyond[0]} is beyond study.verdict.max_length = {verdict.max_length}"
        )


def check_study(study: StudyParams):
    """The study's rules across values: its model's heads, the bars' lengths in order, the search's
    seed sets apart, the verdict's own, each variant's model fits its lengths and its recipe its
    batches."""
    check_heads("study.model", study.model)
    check_bar_lengths("study.bar", study.bar)
    check_seed_sets(study.search_seeds)
    check_verdict(study)
    for name, (config, recipe, data) in study.recipes.items():
        key, lengths = f"study.variants.{name}", data.train_lengths
        check_signed_count(key, config)
        check_config(key, config, lengths)
        if max(lengths) > longest_source(config):
            raise ConfigError(
                f"{key} trains on length {max(lengths)}, beyond its max_len = {config.max_len}"
                + (" less the BOS that opens the source" if longest_source(config) < config.max_len else "")
            )
        if recipe.init != "random":
            check_handset_fits(config, f"{key}: train.init")
        if data.repeats + data.long_counts > 1:
            raise ConfigError(
                f"{key}: data.repeats = {data.repeats:g} and data.long_counts = {data.long_counts:g} share "
                "the rows: together at most 1"
            )
        if recipe.batches == "by_length" and recipe.steps < len(lengths):
            raise ConfigError(
                f"{key}: train.steps = {recipe.steps} is too few for train.batches = by_length: each of "
                f"the {len(lengths)} training lengths needs a batch of its own (steps >= {len(lengths)}), "
                "or use mixed"
            )

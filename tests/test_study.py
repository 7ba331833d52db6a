"""The length study: its parameters, test sets, summary, words, variants and their recipe."""

from pathlib import Path

import numpy as np
import pytest

from pipeline.core.data import row_keys
from pipeline.infra import files
from pipeline.infra.errors import ConfigError, PipelineError
from pipeline.params import lesson
from pipeline.study.bar import reach, row_reach
from pipeline.study.diagnosis import first_errors
from pipeline.study.load import parse_params
from pipeline.study.options import ATTENTION, POSITIONS
from pipeline.study.sets import every_sequence, make_test_sets
from pipeline.study.study import bar_standing, length_table, load_variant, variant_table, with_variant
from pipeline.study.variant import with_seeds
from tests.test_params import DEFAULT, with_value

ROOT = Path(__file__).resolve().parents[1]
BAR = parse_params(DEFAULT).study.bar


def with_variants(variants, **study):
    """params.yaml with study.variants replaced by `variants` (which the verdict then judges) and
    other study values set."""
    raw = with_value("study.variants", variants)
    if isinstance(variants, dict) and variants:
        raw["study"]["verdict"]["variants"] = list(variants)
    for key, value in study.items():  # a mapping updates the section, keeping its other values
        raw["study"][key] = raw["study"][key] | value if isinstance(value, dict) else value
    return raw


# ----------------------------------------------------------------------------- params


@pytest.mark.parametrize(
    "dotted, value, words",
    [
        ("model.positions", "rope", ["model.positions", "'rope'", "sinusoidal, learned", "a study variant"]),
        (
            "study.variants",
            {"v": {"positions": "bos_sometimes", "attention": "softmax"}},
            ["study.variants.v.positions", "'bos_sometimes'", "bos"],
        ),
        ("study.variants", {}, ["study.variants", "a mapping of variant names"]),
        ("study.variants", ["bos_mixed"], ["study.variants", "a mapping of variant names"]),
        ("study.variants", {"v": {"positions": "bos"}}, ["study.variants.v", "missing", "attention"]),
        (
            "study.variants",
            {"v": {"positions": "bos", "attention": "softmax", "modle": {}}},
            ["study.variants.v.modle", "did you mean study.variants.v.model"],
        ),
        (
            "study.variants",
            {"v": {"positions": "bos", "attention": "softmax", "model": {"heads": 5}}},
            ["study.variants.v.d_model = 32", "heads = 5"],
        ),
        (
            "study.variants",
            {"v": {"positions": "bos", "attention": "softmax", "train": {"lr": -1}}},
            ["study.variants.v.train.lr", "-1"],
        ),
        ("study.train.steps", 0, ["study.train.steps", "integer >= 1"]),
        ("study.train.steps", 5, ["study.variants.bos_mixed: train.steps = 5", "by_length", "steps >= 10"]),
        ("study.model.heads", 5, ["study.model.d_model = 32", "study.model.heads = 5"]),
        ("study.data.train_lengths", [1, 64], ["study.variants.bos_mixed trains on length 64", "max_len"]),
        ("study.bar.lengths", [20, 1], ["study.bar.lengths", "first <= last"]),
        ("study.bar.accuracy", 1.5, ["study.bar.accuracy", "1.5"]),
        (
            "study.variants",
            {"v": {"positions": "bos", "attention": "softmax/softmax/none"}},
            ["study.variants.v.attention", "cross-attention 'none'"],
        ),
    ],
)
def test_bad_study_and_position_values(dotted, value, words):
    with pytest.raises(ConfigError) as caught:
        parse_params(with_variants(value) if dotted == "study.variants" else with_value(dotted, value))
    message = str(caught.value)
    assert "\n" not in message and all(word in message for word in words), message


def test_bos_needs_a_position_for_itself():
    raw = with_variants(
        {"v": {"positions": "bos", "attention": "log_length"}}, data={"train_lengths": [1, 64]}
    )
    with pytest.raises(ConfigError, match=r"study.variants.v trains on length 64.*less the BOS"):
        parse_params(raw)


def test_randomized_needs_room_to_sample():
    raw = with_variants(
        {"r": {"positions": "randomized", "attention": "softmax", "model": {"max_len": 10}}},
        data={"train_lengths": [1, 10]},
    )
    with pytest.raises(
        ConfigError, match=r"study.variants.r.positions = randomized.*longest training length, 10"
    ):
        parse_params(raw)


def test_every_scheme_and_attention_makes_a_variant():
    """Every positions scheme with every attention, and a variant that changes its own recipe:
    each parses into the study's recipe with its own values."""
    variants = {
        f"{p}_{a}": {"positions": p, "attention": a}
        for p in POSITIONS
        for a in ATTENTION
        if a != "none" and not ATTENTION[a].counts_written  # a signed count: a cross-attention only, below
    }
    variants["bos_signed"] = {"positions": "bos", "attention": "none/none/signed"}
    variants["sums_fixed"] = {
        "positions": "bos",
        "attention": "none/sigmoid/sigmoid",
        "model": {"sigmoid_bias": -8},
        "train": {"steps": 8000, "seeds": [0]},
        "data": {"train_lengths": [10]},
    }
    params = parse_params(with_variants(variants))
    s = params.study
    for name in variants:
        config, recipe, data = s.recipes[name]
        assert (config.positions, config.attention) == (
            variants[name]["positions"],
            variants[name]["attention"],
        )
    config, recipe, data = s.recipes["sums_fixed"]
    assert (config.sigmoid_bias, recipe.steps, recipe.seeds, data.train_lengths) == (-8.0, 8000, (0,), (10,))
    assert (config.d_model, recipe.lr) == (params.study.model.d_model, params.study.train.lr)  # the rest kept
    assert set(DEFAULT["study"]["variants"]) == {
        "bos_mixed",
        "bos_mixed_sums",
        "signed_count_hint_repeats",
        "sums_count_hint_repeats",
        "signed_owed_repeats",
    }  # lean: softmax, the best sums recipe the count margin diagnoses, the best on uniform digits, it
    # less its prior, and the best on three kinds


# ------------------------------------------------------------------------------ study


def test_test_sets_hold_every_short_sequence_and_avoid_training():
    assert every_sequence(2).shape == (100, 2) and len({tuple(r) for r in every_sequence(3)}) == 1000
    train = np.random.default_rng(0).integers(0, 10, (3000, 5)).astype(np.int8)
    keys = set(row_keys(train, np.full(3000, 5)))
    sets, overlap = make_test_sets([2, 5], 200, 0, keys)
    assert len(sets[2]) == 100 and overlap[5] == 0
    assert not set(row_keys(sets[5], np.full(200, 5))) & keys


def test_a_length_is_at_the_bar_only_where_the_mean_and_every_seed_are():
    """The reach stops at the first length whose mean meets the bar's accuracy with a seed under its
    floor, and a search row recorded under the mean-only rule reads the same once recomputed."""
    seq_acc = {n: [1.0] * BAR.min_seeds for n in range(1, 21)}
    seq_acc[5] = [1.0] * (BAR.min_seeds - 1) + [BAR.seed_floor - 0.005]  # the mean is still at the bar
    assert sum(seq_acc[5]) / len(seq_acc[5]) >= BAR.accuracy
    assert reach(seq_acc, BAR) == 4 and bar_standing(seq_acc, BAR.min_seeds, BAR)["bar_up_to_length"] == 4
    accuracy = {str(s): {str(n): seq_acc[n][s] for n in seq_acc} for s in range(BAR.min_seeds)}
    assert row_reach({"reach": 20, "accuracy": accuracy}, BAR) == 4
    assert row_reach({"reach": 0, "accuracy": {}, "failed": "diverged"}, BAR) == 0


def test_the_bar_standing_and_the_tables_by_length():
    seed = [{"length": n, "seq_acc": 1 - 0.0001 * n, "digit_acc": 1} for n in range(1, 23)]
    worse = [{**r, "seq_acc": 0.95} if r["length"] == 17 else r for r in seed]
    rows = with_variant("a", with_seeds({0: seed, 3: worse}))
    assert (
        len(rows) == 44 and {"variant": "a", "seed": 3, "length": 17, "seq_acc": 0.95, "digit_acc": 1} in rows
    )
    seq_acc = {n: [r["seq_acc"] for r in rows if r["length"] == n] for n in range(1, 23)}
    out = bar_standing(seq_acc, 2, BAR)
    assert out["bar_worst_length"] == 17 and not out["meets_bar"] and out["bar_up_to_length"] == 16
    assert (
        out["bar_min_seq_acc"] == pytest.approx((0.9983 + 0.95) / 2) and out["bar_min_seed_seq_acc"] == 0.95
    )
    assert out["mean_seq_acc_beyond_bar"] == pytest.approx(1 - 0.00215)  # lengths 21-22, past the bar's 1-20
    clean = {n: [1 - 0.0001 * n] * BAR.min_seeds for n in range(1, 23)}
    assert bar_standing(clean, BAR.min_seeds, BAR)["meets_bar"]
    assert not bar_standing(clean, BAR.min_seeds - 1, BAR)["meets_bar"]  # a seed too few
    table = length_table(rows, ["a"], [1, 2]).splitlines()
    assert table[0] == "length,a,a_std,a_min,a_max" and table[1].startswith("1,0.999900,0.000000")
    assert variant_table(rows, "a").splitlines()[17].startswith("17,0.974150,0.034")


def test_repeat_heavy_rows_hold_many_copies_of_one_digit():
    from pipeline.study.sets import training_set

    plain, heavy = training_set([10], 2000, 0), training_set([10], 2000, 0, repeats=0.5)
    copies = lambda d: [max(list(row).count(x) for x in range(10)) for row in d["source"]]  # noqa: E731
    assert sum(c >= 5 for c in copies(heavy)) > 5 * sum(c >= 5 for c in copies(plain))
    assert (heavy["target"] == np.sort(heavy["source"], axis=1)).all()
    assert (training_set([10], 2000, 0)["source"] == plain["source"]).all()  # no share: the same rows


def test_a_study_variant_trains_from_the_studys_own_recipe():
    raw = with_variants(
        {"a": {"positions": "alibi", "attention": "softmax"}},
        train={**DEFAULT["study"]["train"], "steps": 7, "lr": 0.003},
        data={"train_lengths": [1, 3]},
    )
    raw["model"].update({"max_len": 16, "d_model": 8})
    raw["train"]["lr"] = 0.5
    s = parse_params(raw).study
    config, recipe, data = s.recipes["a"]
    assert (config.positions, data.train_lengths, recipe.steps) == ("alibi", (1, 3), 7)
    assert (config.d_model, config.dropout, recipe.lr) == (32, 0.0, 0.003)  # the study's, not model.*


def test_the_studys_default_recipe_is_the_lessons():
    study = parse_params(DEFAULT).study
    for name in ("d_model", "heads", "layers", "d_ff", "norm", "max_len"):
        assert getattr(study.model, name) == getattr(lesson.MODEL, name)
    for name in ("batch_size", "lr", "betas", "eps", "warmup", "label_smoothing"):
        assert getattr(study.train, name) == getattr(lesson.RECIPE, name)


def test_the_study_refuses_a_missing_or_stale_variant(tmp_path):
    params = parse_params(with_variants({"a": {"positions": "alibi", "attention": "softmax"}}))
    path = tmp_path / "a.json"
    with pytest.raises(PipelineError, match=r"a.json is missing: run `dvc repro variant@a`"):
        load_variant(params.study, "a", path)
    record = {"positions": "alibi", "attention": "softmax", "train_lengths": list(range(1, 11))}
    record |= {"steps": params.study.train.steps, "seeds": list(params.study.train.seeds)}
    files.write_json(path, record)
    assert load_variant(params.study, "a", path) == record
    files.write_json(path, record | {"steps": 7})
    with pytest.raises(PipelineError, match=r"stale \(steps 7 != 4000\)"):
        load_variant(params.study, "a", path)


def test_first_errors_name_the_first_mistake():
    target = np.array([[1, 1, 3, 5]] * 5)
    pred = np.array(
        [
            [1, 1, 3, 5],  # right
            [1, 3, 5, 5],  # moved on from 1 before its second copy
            [1, 1, 1, 3],  # a third 1
            [1, 1, 5, 5],  # jumped past the 3
            [0, 1, 3, 5],  # anything else
        ]
    )
    assert first_errors(pred, target) == {
        "too_few_copies": 0.2,
        "extra_copy": 0.2,
        "skipped_digit": 0.2,
        "other": 0.2,
    }

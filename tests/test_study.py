"""The length study: its parameters, test sets, summary, words, variants and their recipe."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipeline.core.data import row_keys
from pipeline.infra import files
from pipeline.infra.choices import STUDY_ATTENTIONS
from pipeline.infra.errors import ConfigError, PipelineError
from pipeline.infra.params import (
    STUDY_VARIANTS,
    ModelParams,
    StudyParams,
    TrainParams,
    parse_params,
)
from pipeline.report.study_section import section
from pipeline.study.diagnosis import first_errors
from pipeline.study.gather import length_table, load_variant, summarise
from pipeline.study.sets import every_sequence, make_test_sets
from pipeline.study.text import diagnosis_text
from pipeline.study.variant import variant_params, variant_path
from tests.conftest import tiny_params
from tests.test_params import DEFAULT, with_value

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- params


@pytest.mark.parametrize(
    "dotted, value, words",
    [
        ("model.positions", "rope", ["model.positions", "'rope'", "sinusoidal", "alibi", "bos"]),
        ("study.variants", ["bos_sometimes"], ["study.variants[0]", "bos_mixed"]),
        ("study.variants", [], ["study.variants", "non-empty"]),
        ("study.train.steps", 0, ["study.train.steps", "integer >= 1"]),
        ("study.train.steps", 5, ["study.train.steps = 5", "by_length", "steps >= 10"]),
        ("study.model.heads", 5, ["study.model.d_model = 32", "study.model.heads = 5"]),
        ("study.train_lengths", [1, 64], ["study.variants (bos_mixed)", "64", "max_len"]),
        ("study.variants", ["bos_mixed_log_lengths"], ["study.variants[0]", "bos_mixed_log_length"]),
    ],
)
def test_bad_study_and_position_values(dotted, value, words):
    with pytest.raises(ConfigError) as caught:
        parse_params(with_value(dotted, value))
    assert all(word in str(caught.value) for word in words)


def test_bos_needs_a_position_for_itself():
    raw = with_value("study.variants", ["bos_mixed_log_length"])
    raw["study"]["train_lengths"] = [1, 64]
    with pytest.raises(ConfigError, match=r"\(bos_mixed_log_length\) trains on length 64.*less the BOS"):
        parse_params(raw)


def test_randomized_needs_room_to_sample():
    raw = with_value("model.max_len", 10)
    raw["model"]["positions"] = "randomized"
    with pytest.raises(ConfigError, match="max_len must exceed the longest training length, 10"):
        parse_params(raw)
    raw = with_value("study.variants", ["randomized_mixed"])
    raw["study"]["model"]["max_len"] = 10
    with pytest.raises(ConfigError, match=r"study.variants \(randomized_mixed\)"):
        parse_params(raw)


def test_every_study_variant_parses_and_builds():
    params = parse_params(with_value("study.variants", list(STUDY_VARIANTS)))
    for variant in STUDY_VARIANTS:
        p = variant_params(params, variant)
        lengths = "_fixed" if "_fixed" in variant else "_mixed"
        positions, suffix = variant.split(lengths)
        assert p.model.attention == STUDY_ATTENTIONS[suffix] and p.model.positions == positions
        assert p.data.train_lengths == ((10,) if "_fixed" in variant else tuple(range(1, 11)))
        t = p.study.train
        assert p.train.steps == t.steps and p.data.train_size == t.steps * t.batch_size
    assert {"bos_mixed", "bos_mixed_log_length", "bos_mixed_sums"} == set(
        DEFAULT["study"]["variants"]
    )  # lean


# ------------------------------------------------------------------------------ study


def test_test_sets_hold_every_short_sequence_and_avoid_training():
    assert every_sequence(2).shape == (100, 2) and len({tuple(r) for r in every_sequence(3)}) == 1000
    train = np.random.default_rng(0).integers(0, 10, (3000, 5)).astype(np.int8)
    keys = set(row_keys(train, np.full(3000, 5)))
    sets, overlap = make_test_sets([2, 5], 200, 0, keys)
    assert len(sets[2]) == 100 and overlap[5] == 0
    assert not set(row_keys(sets[5], np.full(200, 5))) & keys


def test_summary_and_bar():
    seed = {
        k: v
        for n in range(1, 23)
        for k, v in [(f"length_{n}_seq_acc", 1 - 0.0001 * n), (f"length_{n}_digit_acc", 1)]
    }
    per_seed = {0: seed, 3: {**seed, "length_17_seq_acc": 0.95}}
    out = summarise(per_seed, range(1, 23))
    assert out["length_17_seq_acc_seed3"] == 0.95 and out["length_17_seq_acc_seed0"] == 0.9983
    assert out["worst_length_1_20"] == 17 and not out["meets_bar"] and out["bar_up_to_length"] == 16
    assert out["length_17_seq_acc"] == pytest.approx((0.9983 + 0.95) / 2)
    assert out["mean_seq_acc_21_22"] == pytest.approx(1 - 0.00215)
    assert summarise({0: seed}, range(1, 23))["meets_bar"]
    table = length_table({"a": out}, [1, 2]).splitlines()
    assert table[0] == "length,a,a_std,a_min,a_max" and table[1].startswith("1,0.999900,0.000000")


def test_the_words_follow_the_numbers():
    def length(n, speed, ends9):
        return {
            "seq_acc": 0.5,
            "sorted": 1.0,
            "missing_digit": 0.9 if n < 10 else 0.0,
            "extra_digit": 0.0,
            "starts_with_0_given_no_0": 0.0,
            "ends_with_9_given_no_9": ends9,
            "rank_speed": speed,
            "attention_speed": speed,
            "acc_by_position": [1.0] * n,
        }

    diag = {
        "seeds": [0, 1],
        "trained_lengths": [10],
        "lengths": {"6": length(6, 0.6, 0.0), "14": length(14, 1.4, 0.8)},
    }
    text = diagnosis_text(diag)
    assert "0.60 at 6" in text and "1.40 at 14" in text and "80.0 % at 14 (present)" in text
    assert "Shorter inputs (6)" in text and "Longer inputs (14)" in text
    metrics = {"v_length_1_seq_acc": 1.0, "v_length_1_seq_acc_std": 0.0, "v_min_seq_acc_1_20": 1.0}
    metrics |= {"v_worst_length_1_20": 1, "v_meets_bar": False, "v_bar_up_to_length": 1}
    meta = {
        "variants": {"v": {"positions": "bos", "train_lengths": [1, 2, 3], "steps": 5, "seeds": [0]}},
        "bar": {"accuracy": 0.99, "lengths": [1, 20]},
    }
    lines = "\n".join(section(metrics, meta, text))
    assert "## Length generalisation" in lines and "| 1 | **100.0 ± 0.0** |" in lines
    assert "| 2 | – |" in lines and "| 4 | – |" in lines  # untested lengths
    assert "**Bar not met**" in lines


def test_a_study_variant_trains_from_the_studys_own_recipe():
    params = tiny_params(model={"max_len": 16, "d_model": 8}, train={"lr": 0.5})
    s = params.study
    study = dataclasses.replace(
        s, train=dataclasses.replace(s.train, steps=7, lr=0.003), train_lengths=(1, 3)
    )
    p = variant_params(dataclasses.replace(params, study=study), "alibi_mixed")
    assert (p.model.positions, p.data.train_lengths, p.train.steps) == ("alibi", (1, 3), 7)
    assert (p.model.d_model, p.model.dropout, p.train.lr) == (32, 0.0, 0.003)  # the study's, not model.*


def test_the_studys_default_recipe_is_the_lessons():
    lesson, study = ModelParams(), StudyParams()
    for name in ("d_model", "heads", "layers", "d_ff", "norm", "max_len"):
        assert getattr(study.model, name) == getattr(lesson, name)
    for name in ("batch_size", "lr", "betas", "eps", "warmup", "label_smoothing"):
        assert getattr(study.train, name) == getattr(TrainParams(), name)


def test_no_variant_stage_depends_on_the_lessons_model_or_training():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    params = stages["variant"]["do"]["params"]
    assert params and not [p for p in params if str(p).split(".")[0] in ("model", "train", "data")]


def test_the_study_refuses_a_missing_or_stale_variant(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    params = parse_params(with_value("study.variants", ["alibi_mixed"]))
    with pytest.raises(PipelineError, match=r"alibi_mixed.json is missing: run `dvc repro variant@"):
        load_variant(params, "alibi_mixed")
    record = {"positions": "alibi", "attention": "softmax", "train_lengths": list(range(1, 11))}
    record |= {"steps": params.study.train.steps, "seeds": list(params.study.train.seeds)}
    files.write_json(variant_path("alibi_mixed"), record)
    assert load_variant(params, "alibi_mixed") == record
    files.write_json(variant_path("alibi_mixed"), record | {"steps": 7})
    with pytest.raises(PipelineError, match=r"stale \(steps 7 != 4000\)"):
        load_variant(params, "alibi_mixed")


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

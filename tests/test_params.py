"""Every invalid parameter is one clear line naming the key, the value and what is allowed."""

import copy
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PARAMS_YAML

from pipeline.infra.errors import ConfigError
from pipeline.study.load import Params, load_params, parse_params
from pipeline.study.params import StudyParams, Variant

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = PARAMS_YAML  # the lesson's params.yaml and the study's study/params.yaml, as one mapping


def with_value(dotted, value):
    raw = copy.deepcopy(DEFAULT)
    *path, last = dotted.split(".")
    node = raw
    for key in path:
        node = node[key]
    node[last] = value
    return raw


def without(dotted):
    raw = copy.deepcopy(DEFAULT)
    section, key = dotted.split(".")
    del raw[section][key]
    return raw


BAD = [
    # (params, words the message must contain)
    (with_value("train.steps", 0), ["train.steps", "0", "integer >= 1"]),
    (with_value("train.steps", 2.5), ["train.steps", "2.5", "integer"]),
    (with_value("train.steps", "many"), ["train.steps", "'many'"]),
    (with_value("train.steps", True), ["train.steps", "True"]),
    (with_value("train.batch_size", -4), ["train.batch_size", "-4"]),
    (with_value("model.dropout", 1.0), ["model.dropout", "1.0", "[0.0, 1.0)"]),
    (with_value("model.dropout", -0.1), ["model.dropout", "-0.1"]),
    (with_value("train.label_smoothing", 1.5), ["train.label_smoothing", "1.5", "[0.0, 1.0)"]),
    (with_value("train.lr", 0), ["train.lr", "0", "(0.0, inf)"]),
    (with_value("train.lr", "fast"), ["train.lr", "'fast'"]),
    (with_value("train.lr", ".nan"), ["train.lr", "nan"]),
    (with_value("train.eps", -1e-9), ["train.eps"]),
    (with_value("train.betas", [0.9, 1.0]), ["train.betas[1]", "1.0", "(0.0, 1.0)"]),
    (with_value("train.betas", [0.9]), ["train.betas", "list of 2"]),
    (with_value("train.betas", 0.9), ["train.betas", "0.9"]),
    (with_value("train.seeds", []), ["train.seeds", "[]", "non-empty list"]),
    (with_value("train.seeds", [0, 0]), ["train.seeds", "without repeats"]),
    (with_value("train.seeds", [-1]), ["train.seeds[0]", "-1"]),
    (with_value("train.device", "tpu"), ["train.device", "'tpu'", "auto, cpu, cuda"]),
    (with_value("model.norm", "middle"), ["model.norm", "'middle'", "post, pre"]),
    (with_value("model.heads", 5), ["model.d_model = 32", "not divisible", "model.heads = 5"]),
    (with_value("model.d_model", 30), ["model.d_model = 30", "not divisible"]),
    (with_value("data.test_lengths", [6, 0]), ["data.test_lengths[1]", "0"]),
    (with_value("data.test_lengths", []), ["data.test_lengths", "non-empty"]),
    (with_value("data.test_lengths", [6, 80]), ["data.test_lengths", "80", "model.max_len = 64"]),
    (with_value("data.train_lengths", [65]), ["data.train_lengths", "65", "max_len"]),
    (
        with_value("model.positions", "bos"),
        ["model.positions = 'bos'", "sinusoidal, learned", "a study variant"],
    ),
    (
        with_value("model.attention", "softmax/sigmoid/sigmoid"),
        ["model.attention = softmax/sigmoid/sigmoid", "softmax attention only", "study.variants"],
    ),
    (
        with_value("model.norm", "rezero"),
        ["model.norm = 'rezero'", "post, pre", "a study variant"],
    ),
    (with_value("data.train_size", 10), ["train.batch_size = 64", "data.train_size = 10"]),
    (with_value("train.stpes", 5), ["unknown parameter train.stpes", "did you mean train.steps"]),
    (with_value("modle", {}), ["unknown parameter modle", "did you mean model"]),
    (without("train.warmup"), ["train", "missing", "warmup"]),
    (with_value("study.verdict.seed", 0), ["study.verdict.seed = 0", "study.seed", "sequences of its own"]),
    (
        with_value("study.verdict.variants", ["nope"]),
        ["study.verdict.variants", "nope", "not in study.variants"],
    ),
    (with_value("study.verdict.table_lengths", [20, 120]), ["length 120", "study.verdict.max_length = 100"]),
    (with_value("study.verdict.kinds", ["uniform", "sorted"]), ["study.verdict.kinds[1]", "'sorted'"]),
    (
        with_value(
            "study.verdict.bar", {"accuracy": 0.99, "lengths": [40, 1], "seed_floor": 0.98, "min_seeds": 20}
        ),
        ["study.verdict.bar.lengths = [40, 1]"],
    ),
    (with_value("train", [1, 2]), ["train must be a mapping"]),
]


@pytest.mark.parametrize("raw, words", BAD, ids=[" ".join(w[:1]) + f"#{i}" for i, (_, w) in enumerate(BAD)])
def test_bad_parameter_names_key_value_and_allowed(raw, words):
    with pytest.raises(ConfigError) as caught:
        parse_params(raw)
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_default_params_are_valid():
    params = parse_params(DEFAULT)
    assert params.train.betas == (0.9, 0.98) and params.model.d_model == 32


def test_exp_run_style_numbers_are_accepted_as_numbers():
    # `dvc exp run -S train.lr=1e-06` writes 1e-06, which PyYAML reads as a string.
    raw = yaml.safe_load(yaml.safe_dump(DEFAULT).replace("lr: 0.002", "lr: 1e-06"))
    assert isinstance(raw["train"]["lr"], str)
    assert parse_params(raw).train.lr == 1e-6


def test_invalid_yaml_is_one_line_with_its_line_number(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("data:\n  seed: [0\nmodel: {}\n")
    with pytest.raises(ConfigError, match=r"not valid YAML at line \d+"):
        load_params(path)


@pytest.mark.parametrize(
    "text, words",
    [
        ("bad: [", ["not valid YAML"]),
        (yaml.safe_dump(with_value("data.test_size", 0)), ["data.test_size = 0"]),
    ],
)
def test_stage_prints_one_line_exits_nonzero_and_writes_nothing(tmp_path, text, words):
    (tmp_path / "params.yaml").write_text(text)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.stages.data",
            "--train",
            "t.npz",
            "--test",
            "s.npz",
            "--metrics",
            "m.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["params.yaml"]  # no output written


def declared_sections():
    """Every section of params.yaml's dataclasses, with its path: the model's config, the study's
    sub-sections and a variant's."""
    sections = [((), Params), *(((f.name,), f.type) for f in dataclasses.fields(Params))]
    sections += [
        (("study", f.name), f.type)
        for f in dataclasses.fields(StudyParams)
        if dataclasses.is_dataclass(f.type)
    ]
    return sections


def test_the_parameter_dataclasses_declare_a_value_only_for_an_option_that_is_off():
    """params.yaml is the one source of values: every field of every section is required (a rule, no
    default), but for an option the lesson leaves off, whose default is the value that leaves it off
    (0: no weight decay, no floor, no count hint), for a section built in code."""
    off = []
    for _, cls in [*declared_sections(), ((), Variant)]:
        for f in dataclasses.fields(cls):
            assert f.default_factory is dataclasses.MISSING, (cls, f.name)
            if f.default is not dataclasses.MISSING:
                assert f.default == 0 and not isinstance(f.default, bool), (cls, f.name, f.default)
                off.append(f.name)
    assert sorted(set(off)) == ["count_hint", "long_counts", "lr_floor", "weight_decay"]


def test_params_yaml_names_every_field_even_one_with_a_default():
    """A default never stands in for params.yaml: the files (the lesson's and the study's) name every
    field of every section, so that `dvc exp run -S` varies a value each stage depends on."""
    raw = PARAMS_YAML
    for path, cls in declared_sections():
        section = raw
        for key in path:
            section = section[key]
        assert set(section) == {f.name for f in dataclasses.fields(cls)}, path

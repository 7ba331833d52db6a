"""The length study's search tool: rows recorded as they finish, resumed without retraining, seeds
reused across rows, every row reproducible by the `dvc exp run` it names; bad rows are one error."""

import json

import pytest
import yaml

from pipeline.infra.errors import ConfigError
from pipeline.report.search_section import section
from pipeline.tools.search import command, load_rows, recipe_of, row_params, run_search

SMALL = {"study.train.steps": 20, "study.test_size": 20, "study.max_length": 22}


@pytest.fixture(scope="module")
def raw():
    with open("params.yaml") as f:
        return yaml.safe_load(f)


@pytest.fixture(scope="module")
def searched(raw, tmp_path_factory):
    path = tmp_path_factory.mktemp("search") / "search.json"
    rows = [
        {"variant": "bos_mixed_sums", "set": SMALL},
        {"variant": "randomized_mixed", "set": SMALL},
        {"variant": "bos_mixed_sums", "set": SMALL, "seeds": [0, 1]},
    ]
    run_search(raw, rows, workers=1, path=path)
    return raw, rows, path


def test_every_row_is_recorded_with_its_recipe_and_command(searched):
    _, rows, path = searched
    recorded = json.loads(path.read_text())["rows"]
    assert [(r["variant"], r["seeds"]) for r in recorded] == [
        ("bos_mixed_sums", [0]),
        ("randomized_mixed", [0]),
        ("bos_mixed_sums", [0, 1]),
    ]
    sums = recorded[0]
    assert (
        sums["recipe"]["model"]["attention"] == "none/sigmoid/sigmoid"
        and "sigmoid_bias" in sums["recipe"]["model"]
    )
    assert "sigmoid_bias" not in recorded[1]["recipe"]["model"]  # a softmax model has no gate
    assert set(sums["accuracy"]["0"]) == {str(n) for n in range(1, 23)} and sums["acc_40"] is None
    assert recorded[2]["accuracy"]["0"] == sums["accuracy"]["0"]  # seed 0 trained once, reused
    assert "accuracy_plain_positions" in recorded[1]  # randomized: also tested at 0, 1, 2, ...
    assert command(rows[0]).startswith("dvc exp run -S 'study.variants=[bos_mixed_sums]'")
    assert "study.train.steps=20" in command(rows[0])


def test_a_second_search_trains_nothing(searched, capsys):
    raw, rows, path = searched
    before = path.read_text()
    run_search(raw, rows, workers=1, path=path)
    assert "0 rows to run (0 seeds to train), 3 recorded" in capsys.readouterr().out
    assert path.read_text() == before


def test_the_report_shows_every_row(searched):
    _, _, path = searched
    lines = section(json.loads(path.read_text()))
    table = [line for line in lines if line.startswith("| bos_mixed_sums |")]
    assert len(table) == 2 and any("drawn positions (now)" in line for line in lines)
    assert any("No configuration meets the bar" in line for line in lines)


def test_bad_rows_are_one_clear_error(raw, tmp_path):
    with pytest.raises(ConfigError, match="model.d_model is not a study"):
        row_params(raw, {"variant": "bos_mixed", "set": {"model.d_model": 64}})
    with pytest.raises(ConfigError, match="study.model.width is not a parameter"):
        row_params(raw, {"variant": "bos_mixed", "set": {"study.model.width": 64}})
    with pytest.raises(ConfigError, match="study.variants"):
        row_params(raw, {"variant": "bos_sometimes"})
    with pytest.raises(ConfigError, match="study.train.steps.x is not a parameter"):
        row_params(raw, {"variant": "bos_mixed", "set": {"study.train.steps.x": 3}})
    bad = tmp_path / "rows.yaml"
    for text, error in [
        ("- {variant: bos_mixed, seed: [0]}", "a row has variant, set, seeds and why"),
        ("- {variant: bos_mixed, set: [1]}", "a row's set is a mapping"),
        ("- {variant: bos_mixed, set: {study.train.seeds: [1]}}", "belong in the row's variant and seeds"),
        ("variant: bos_mixed", "expected a list of rows"),
    ]:
        bad.write_text(text + "\n")
        with pytest.raises(ConfigError, match=error):
            load_rows(bad)


def test_the_recipe_keeps_the_gates_bias_wherever_a_gate_is(raw):
    for variant, has_bias in [("bos_mixed", False), ("bos_mixed_split", True), ("bos_mixed_sums", True)]:
        params = row_params(raw, {"variant": variant})
        assert ("sigmoid_bias" in recipe_of(params, variant)["model"]) == has_bias


def test_the_committed_rows_parse(raw):
    for row in load_rows():
        row_params(raw, row)

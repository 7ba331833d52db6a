"""The length study's search and its seeds: three sets, each with one job, and the variants' models
kept as checkpoints anyone can sort with."""

import json
from pathlib import Path

import pytest
from conftest import PARAMS_YAML, laid_over

from pipeline.infra.errors import ConfigError
from pipeline.study import search
from pipeline.study.bar import (
    as_trained,
    best_confirmed,
    chosen_variant,
    held_out,
    recipe_of,
    search_rank,
    without_steps,
)
from pipeline.study.load import load_params, parse_params
from pipeline.study.search import load_rows, row_study, run_search, with_seeds
from pipeline.study.sets import study_test_sets
from pipeline.study.variant import run_variant
from pipeline.tools import sort
from pipeline.tools.search_spread import makespan, whole_search_tasks

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32, "max_len": 16}
TINY_STUDY = {  # a study that trains in seconds: two variants, one with fewer seeds of its own
    "study": {
        "variants": {
            "base": {"positions": "bos", "attention": "softmax", "train": {"seeds": [100]}},
            "sums": {"positions": "bos", "attention": "none/sigmoid/sigmoid"},
        },
        "model": SMALL,
        "train": {"steps": 8, "batch_size": 16, "warmup": 2, "seeds": [100, 101], "device": "cpu"},
        "data": {"train_lengths": [1, 2, 3]},
        "search_seeds": {"screen": [0], "confirm": [10, 11]},
        "max_length": 5,
        "test_size": 8,
        "diagnosis_lengths": [3],
        "verdict": {
            "variants": ["base"],
            "max_length": 5,
            "test_size": 8,
            "table_lengths": [5],
            "bar": {"accuracy": 0.99, "lengths": [1, 5], "seed_floor": 0.98, "min_seeds": 1},
        },
    }
}


def tiny_raw(**study):
    raw = laid_over(PARAMS_YAML, TINY_STUDY)
    raw["study"]["variants"] = dict(TINY_STUDY["study"]["variants"])  # replaced whole, not merged
    raw["study"].update(study)
    return raw


def test_the_default_study_judges_seeds_no_search_row_trains():
    params = load_params(ROOT / "params.yaml")
    assert held_out(params.study)
    rows = with_seeds(load_rows(ROOT / "pipeline/study/search.yaml"), params.study)  # refuses held-out seeds
    assert rows and all(row["seeds"] for row in rows)


def test_a_row_names_a_seed_set_and_may_not_train_a_held_out_seed():
    params = parse_params(tiny_raw())
    rows = with_seeds(
        [{"name": "a", "variant": {}}, {"name": "b", "variant": {}, "seeds": "confirm"}], params.study
    )
    assert [r["seeds"] for r in rows] == [[0], [10, 11]]
    with pytest.raises(ConfigError, match="row c trains seed 101, which the study holds out"):
        with_seeds([{"name": "c", "variant": {}, "seeds": [5, 101]}], params.study)
    with pytest.raises(ConfigError, match="row d: seeds = 'all' is invalid: expected screen or confirm"):
        with_seeds([{"name": "d", "variant": {}, "seeds": "all"}], params.study)


def test_screen_and_confirm_are_apart_and_a_study_on_search_seeds_is_not_held_out():
    with pytest.raises(ConfigError, match="seed 10 is in both screen and confirm"):
        parse_params(tiny_raw(search_seeds={"screen": [10], "confirm": [10, 11]}))
    assert not held_out(parse_params(tiny_raw(search_seeds={"screen": [100], "confirm": [10]})).study)


def test_the_search_screens_confirms_and_the_best_confirmed_row_is_the_studys_variant(tmp_path):
    raw = tiny_raw()
    sums = {"positions": "bos", "attention": "none/sigmoid/sigmoid"}
    rows = [
        {"name": "sums", "variant": sums, "why": "screen"},
        {"name": "sums_confirm", "variant": sums, "seeds": "confirm", "why": "confirm"},
        {"name": "base_confirm", "variant": {"positions": "bos", "attention": "softmax"}, "seeds": "confirm"},
    ]
    out, params = tmp_path / "search.json", parse_params(raw)
    run_search(params.study, params.evaluate.batch_size, rows, out, workers=1)
    recorded = {r["name"]: r for r in json.loads(out.read_text())["rows"]}
    assert [recorded[n]["seeds"] for n in ("sums", "sums_confirm")] == [[0], [10, 11]]
    assert set(recorded["sums_confirm"]["accuracy"]) == {"10", "11"}
    best = best_confirmed(recorded.values(), params.study.search_seeds.confirm)
    assert best["min_seed"] == max(recorded[n]["min_seed"] for n in ("sums_confirm", "base_confirm"))
    row, variant = chosen_variant(params.study, recorded.values())
    assert row == best and recipe_of(params.study, variant) == best["recipe"]
    before = out.read_text()
    run_search(params.study, params.evaluate.batch_size, rows, out, workers=1)  # all recorded: none retrained
    assert out.read_text() == before


def test_a_variants_checkpoints_are_outputs_and_sort_digits(tmp_path, capsys):
    s = parse_params(tiny_raw()).study
    config, recipe, data = s.recipes["base"]
    tests, _ = study_test_sets(s.train, s.data, s.seed, s.max_length, s.test_size, s.diagnosis_lengths)
    (tmp_path / "base").mkdir()
    record, _ = run_variant(
        "base", config, recipe, data, tests, s.seed, s.diagnosis_lengths, 1000, tmp_path / "base", workers=1
    )
    assert record["seeds"] == [100] and sorted(p.name for p in (tmp_path / "base").iterdir()) == [
        "seed_100.pt"
    ]
    sort.main(["--checkpoint", str(tmp_path / "base/seed_100.pt"), "3", "1", "2"])
    printed = capsys.readouterr().out
    assert "input : 3 1 2" in printed and "trained on lengths [1, 2, 3]" in printed
    # its source carries no positions: built for 40 digits, though its max_len holds 15
    sort.main(["--checkpoint", str(tmp_path / "base/seed_100.pt"), "21" * 20])
    assert "input : " + " ".join("21" * 20) in capsys.readouterr().out


def test_the_default_study_trains_the_searchs_best_confirmed_row():
    """The committed choice: the study variant whose recipe is the best row on the confirmation seeds,
    but for its steps, which the study may cut where the loss curve is flat."""
    params = load_params(ROOT / "params.yaml")
    rows = json.loads((ROOT / "metrics/search.json").read_text())["rows"]
    s = params.study
    row, variant = chosen_variant(s, rows)
    assert row is not None, "no row of metrics/search.json is trained on study.search_seeds.confirm"
    assert variant is not None, f"no variant of study.variants trains {row['name']}'s recipe"
    assert without_steps(recipe_of(s, variant)) == without_steps(as_trained(row["recipe"]))
    assert len(s.recipes[variant][1].seeds) >= s.bar.min_seeds


def test_every_screen_that_beats_the_best_confirmed_rows_screen_is_confirmed():
    """The search's rule on the committed rows: a screen that ranks above the screen of the best
    confirmed row (its worst seed at the bar's lengths, then how far it sorts at the bar, then its
    mean at 40) is retrained on the confirmation seeds, so the choice cannot miss a row that looked
    better on first sight."""
    params = load_params(ROOT / "params.yaml")
    rows = json.loads((ROOT / "metrics/search.json").read_text())["rows"]
    confirm, screen = params.study.search_seeds.confirm, params.study.search_seeds.screen
    best = best_confirmed(rows, confirm)
    screens = [r for r in rows if r["seeds"] == list(screen)]
    confirmed = [json.dumps(r["recipe"], sort_keys=True) for r in rows if r["seeds"] == list(confirm)]
    (own,) = [r for r in screens if r["recipe"] == best["recipe"]]
    missing = [
        r["name"]
        for r in screens
        if search_rank(r) > search_rank(own) and json.dumps(r["recipe"], sort_keys=True) not in confirmed
    ]
    assert not missing, f"screens above {own['name']}'s {search_rank(own)}, not confirmed: {missing}"


def test_a_row_stopped_by_an_earlier_divergence_check_is_rerun_and_keeps_the_earlier_stop(tmp_path):
    params = parse_params(tiny_raw())
    row = {"name": "sums", "variant": {"positions": "bos", "attention": "none/sigmoid/sigmoid"}, "seeds": [0]}
    recipe = recipe_of(row_study(params.study, with_seeds([row], params.study)[0]), "sums")
    stopped = "training diverged at step 3: loss 25.86 (learning rate 6.00e-05)"
    out = tmp_path / "search.json"
    out.write_text(json.dumps({"rows": [{**row, "recipe": recipe, "accuracy": {}, "failed": stopped}]}))
    run_search(params.study, params.evaluate.batch_size, [row], out, workers=1)
    (rerun,) = json.loads(out.read_text())["rows"]
    assert "failed" not in rerun and set(rerun["accuracy"]) == {"0"}
    assert rerun["stopped_before"] == stopped
    before = out.read_text()
    run_search(params.study, params.evaluate.batch_size, [row], out, workers=1)  # now recorded: kept
    assert out.read_text() == before


def test_a_rows_seeds_train_in_groups_of_at_most_three(tmp_path, monkeypatch):
    params = parse_params(tiny_raw(search_seeds={"screen": [0], "confirm": [10, 11, 12, 13]}))
    groups = []
    monkeypatch.setattr(
        search, "train_and_test", lambda *job, kinds=None: groups.append(job[4]) or fake_results(job[4])
    )
    row = {
        "name": "sums",
        "variant": {"positions": "bos", "attention": "none/sigmoid/sigmoid"},
        "seeds": "confirm",
    }
    run_search(params.study, params.evaluate.batch_size, [row], tmp_path / "search.json", workers=1)
    assert groups == [[10, 11], [12, 13]]
    (recorded,) = json.loads((tmp_path / "search.json").read_text())["rows"]
    assert set(recorded["accuracy"]) == {"10", "11", "12", "13"}


def fake_results(seeds):
    """What train_and_test returns for `seeds`, without training: every length sorted."""
    return [{"accuracy": [{"length": n, "seq_acc": 1.0} for n in range(1, 6)]} for _ in seeds]


def test_the_projection_lays_the_longest_tasks_first_onto_the_slot_free_first():
    assert makespan([3, 3, 2, 2, 2], slots=2) == 7  # 3+2+2 on one slot, 3+2 on the other
    assert makespan([5, 1, 1], slots=4) == 5  # no number of slots goes below the longest task
    params = load_params(ROOT / "params.yaml")
    tasks = whole_search_tasks(params.study)  # the rows file's search from an empty results file
    assert all(steps > 0 and 1 <= seeds <= 3 for steps, seeds in tasks) and len(tasks) >= 86

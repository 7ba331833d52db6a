"""The stages' detail as tidy tables: written exactly, read back bit for bit, queried by seed."""

import json
import random

import pytest

from pipeline.infra.errors import DataError
from pipeline.infra.outputs import by_seed, read_table, select, spread, stage_outputs, write_outputs


def test_a_table_reads_back_every_float_bit_for_bit_and_the_headline_comes_last(tmp_path):
    rng = random.Random(0)
    rows = [
        {"seed": s, "length": n, "seq_acc": rng.random() / 3, "meets": n > 1} for s in (0, 3) for n in (1, 2)
    ]
    path = tmp_path / "metrics" / "stage.json"
    write_outputs(
        path, {"x": 1}, {"rows.csv": (rows, ["seed", "length", "seq_acc", "meets"])}, {"a.json": {"b": 2}}
    )
    frame = read_table(tmp_path / "metrics/stage/rows.csv")
    assert frame.to_dict("records") == rows  # the same floats, ints and booleans
    assert json.loads(path.read_text()) == {"x": 1} and (tmp_path / "metrics/stage/a.json").exists()
    assert by_seed(frame, "seq_acc", [3, 0], length=2) == [rows[3]["seq_acc"], rows[1]["seq_acc"]]
    assert len(select(frame, meets=True)) == 2


def test_a_stage_that_fails_midway_leaves_its_earlier_outputs_and_writes_no_headline(tmp_path):
    path, models = tmp_path / "metrics" / "train.json", tmp_path / "models"
    write_outputs(path, {"loss": 1.0}, others={"old.txt": "before"})
    models.mkdir()
    (models / "seed_0.pt").write_text("before")
    with pytest.raises(RuntimeError), stage_outputs(path, models) as out:
        out.file("new.txt", "after")
        (out.folders[0] / "seed_0.pt").write_text("after")
        raise RuntimeError("a seed diverged")
    assert (tmp_path / "metrics/train/old.txt").read_text() == "before"
    assert (
        not (tmp_path / "metrics/train/new.txt").exists() and (models / "seed_0.pt").read_text() == "before"
    )
    assert json.loads(path.read_text()) == {"loss": 1.0}
    assert sorted(p.name for p in (tmp_path / "metrics").iterdir()) == [
        "train",
        "train.json",
    ]  # no staging left
    with pytest.raises(ValueError, match="set no headline"), stage_outputs(path):
        pass


def test_a_query_that_finds_no_row_names_what_it_asked_for(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("seed,length,value\n0,1,0.5\n")
    frame = read_table(path)
    with pytest.raises(KeyError, match=r"value where \{'length': 2\} for seeds \[0\]"):
        by_seed(frame, "value", [0], length=2)
    with pytest.raises(KeyError, match="column 'decoder'"):
        select(frame, decoder="greedy")
    with pytest.raises(DataError, match=r"missing\.csv not found: run `dvc repro`"):
        read_table(tmp_path / "missing.csv")


def test_the_spread_over_seeds_is_the_mean_and_the_sample_deviation():
    assert spread([1.0, 3.0]) == (2.0, 2**0.5) and spread([0.25]) == (0.25, 0.0)

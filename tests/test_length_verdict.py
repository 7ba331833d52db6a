"""The length study's verdict: its own test sequences of three kinds, the signed count set by hand,
the hand-set readout of a trained count, a model built for any length where its source carries no
positions, and how a row stands against the bar."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline.core.decoding import accuracy_by_length, greedy_cached, sorted_tests
from pipeline.study.counting_sort import SUMS
from pipeline.study.model import StudyTransformer, built_for
from pipeline.study.params import VERDICT_KINDS, BarParams
from pipeline.study.readout import handset_readout
from pipeline.study.signed_handset import signed_handset_model
from pipeline.study.verdict import judge_kind, standing
from pipeline.study.verdict_rows import HANDSET, READOUT, TRAINED
from pipeline.study.verdict_sets import verdict_set

ROOT = Path(__file__).resolve().parents[1]
SIGNED = dataclasses.replace(SUMS, attention="none/none/signed", sigmoid_bias=-8.0)


def exact(model, source, decoders=None):
    rows, _ = accuracy_by_length(
        model, sorted_tests({source.shape[1]: source}), 500, decoders=decoders or {"g": greedy_cached}
    )
    return {r["decoder"]: r["seq_acc"] for r in rows}


# ------------------------------------------------------------------------------------ the sets


@pytest.mark.parametrize("kind", VERDICT_KINDS)
def test_each_kind_is_a_function_of_its_kind_length_size_and_seed(kind):
    a, b = verdict_set(kind, 30, 50, 1), verdict_set(kind, 30, 50, 1)
    assert a.shape == (50, 30) and a.dtype == np.int8 and np.array_equal(a, b)
    assert not np.array_equal(a, verdict_set(kind, 30, 50, 2))
    assert a.min() >= 0 and a.max() <= 9


def test_repeat_heavy_rows_hold_one_to_three_digits_and_long_counts_one_digit_in_most_of_the_row():
    repeats = verdict_set("repeats", 40, 300, 1)
    distinct = [len(set(row)) for row in repeats]
    assert set(distinct) == {1, 2, 3}
    most = [np.bincount(row, minlength=10).max() for row in verdict_set("long_counts", 40, 300, 1)]
    assert min(most) > 20 and max(most) == 40  # more than half, up to the whole row
    uniform_most = [np.bincount(row, minlength=10).max() for row in verdict_set("uniform", 40, 300, 1)]
    assert np.mean(uniform_most) < 10  # a uniform row's largest count is far below a long count's


def test_short_uniform_sets_are_every_sequence():
    assert len(verdict_set("uniform", 2, 200, 1)) == 100


# ------------------------------------------------------------------------ prior and readout


def test_a_model_whose_source_carries_no_positions_is_built_for_any_length():
    torch.manual_seed(0)
    model = StudyTransformer(dataclasses.replace(SIGNED, max_len=12)).eval()
    longer = built_for(model, 50)
    assert longer.config.max_len == 51 and longer is not model
    source = verdict_set("uniform", 8, 20, 3)
    src = torch.as_tensor(source, dtype=torch.long)
    assert torch.equal(greedy_cached(model, src), greedy_cached(longer, src))  # the same weights
    plain = dataclasses.replace(SIGNED, positions="sinusoidal", attention="softmax")
    sinusoidal = StudyTransformer(plain).eval()
    assert built_for(sinusoidal, 200) is sinusoidal  # its positions are its limit: left as it is


@pytest.mark.parametrize("kind", VERDICT_KINDS)
def test_the_signed_count_set_by_hand_sorts_every_kind_far_beyond_its_max_len(kind):
    model = built_for(signed_handset_model(SIGNED), 150)
    for n in (1, 7, 64, 150):
        assert exact(model, verdict_set(kind, n, 40, 5)) == {"g": 1.0}, n


def test_the_hand_set_readout_sorts_from_the_count_of_untrained_random_weights():
    """The signed count holds (copies in the input) - (copies written) for any weights: read by
    hand, even a model that never trained sorts; decoded by its own layers it does not."""
    torch.manual_seed(3)
    model = built_for(StudyTransformer(SIGNED).eval(), 80)
    for kind in VERDICT_KINDS:
        accuracy = exact(model, verdict_set(kind, 80, 30, 7), {"own": greedy_cached, "read": handset_readout})
        assert accuracy["read"] == 1.0 and accuracy["own"] < 0.5, (kind, accuracy)


def test_the_readout_hooks_are_removed_after_decoding():
    model = StudyTransformer(SIGNED).eval()
    handset_readout(model, torch.zeros(2, 5, dtype=torch.long))
    cross = model.decoder[0].cross
    assert not cross.wq._forward_hooks and not cross.wo._forward_hooks


# ------------------------------------------------------------------------------- the standing

VERDICT = type("Verdict", (), {})()  # what judge_kind and standing read of study.verdict
VERDICT.bar = BarParams(accuracy=0.99, lengths=(1, 6), seed_floor=0.98, min_seeds=2)
VERDICT.max_length, VERDICT.table_lengths, VERDICT.test_size, VERDICT.seed = 6, (3, 6), 20, 1


def rows_of(accuracy, decoder=TRAINED, variant="v", kind="uniform"):
    """Rows as the verdict writes them from {seed: {length: accuracy}}."""
    return [
        {"variant": variant, "kind": kind, "decoder": decoder, "seed": s, "length": n, "seq_acc": a}
        for s, by in accuracy.items()
        for n, a in by.items()
    ]


def test_judging_stops_at_the_first_failing_length_then_tests_the_table_lengths_only():
    torch.manual_seed(0)
    broken = StudyTransformer(SIGNED).eval()  # untrained: fails from length 2 or so
    rows, first = judge_kind("v", {"0": broken, "1": broken}, "uniform", VERDICT, 100, with_readout=True)
    tested = sorted({r["length"] for r in rows if r["decoder"] == TRAINED})
    assert first is not None and tested == sorted(
        {*range(1, first + 1), *(n for n in VERDICT.table_lengths if n > first)}
    )
    assert {r["length"] for r in rows if r["decoder"] == READOUT} == set(VERDICT.table_lengths)


def test_a_row_meets_the_bar_only_with_enough_seeds_every_kind_passing():
    good = {0: {n: 1.0 for n in range(1, 7)}, 1: {n: 1.0 for n in range(1, 7)}}
    rows = rows_of(good) + rows_of(good, kind="repeats")
    row = standing("v", [0, 1], {"uniform": None, "repeats": None}, rows, VERDICT)
    assert row["meets_bar"] and row["reach"] == 6 and row["fails_first_on"] == []
    one_seed = standing("v", [0], {"uniform": None, "repeats": None}, rows, VERDICT)
    assert not one_seed["meets_bar"] and not one_seed["judged"]
    failing = standing("v", [0, 1], {"uniform": None, "repeats": 4}, rows, VERDICT)
    assert not failing["meets_bar"] and failing["reach"] == 3 and failing["fails_first_on"] == ["repeats"]
    handset = standing(HANDSET, [], {"uniform": None}, rows_of({HANDSET: good[0]}, variant=HANDSET), VERDICT)
    assert not handset["judged"] and not handset["meets_bar"]  # never the verdict


def test_the_study_pages_section_title_names_the_lengths_the_verdict_tested():
    record = json.loads((ROOT / "metrics/verdict.json").read_text())
    tested = {
        int(line.split(",")[4])
        for line in (ROOT / "metrics/verdict/per_seed.csv").read_text().splitlines()[1:]
    }
    assert max(tested) == record["max_length"] and min(tested) == 1
    for page in ("README.md", "README.es.md"):
        text = (ROOT / "reports/study" / page).read_text()
        titles = [line for line in text.splitlines() if line.startswith("## ") and "1-10" in line]
        assert any(f"1-{record['max_length']} " in t for t in titles), (page, titles)

"""The claims as data (pipeline/report/claims.yaml) and the rules that judge them: each rule on
made-up values, and the file itself: ids once, kinds known, the lessons' words verbatim, every value
measured by the committed results."""

import importlib
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.infra.errors import DataError, PipelineError
from pipeline.report.claims import (
    KINDS,
    Claim,
    claims_csv,
    counts,
    evaluate,
    judge,
    load_claims,
    shorter_untrained,
)
from pipeline.report.judging import PRINTED_HALF, prediction_band, t_975
from pipeline.report.quantities import Measured
from pipeline.report.study.lesson_claims import shorter_failure
from pipeline.stages.report import report_params
from pipeline.tools.sort import parse_digits
from tests.conftest import tiny_params

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = load_claims()


def seeds_entry(expected, items="sequences"):
    return {"id": "x", "rule": "seeds", "expected": expected, **({"items": items} if items else {})}


def test_the_prediction_interval_is_students_for_one_more_run():
    values = [0.97, 0.98, 0.99]
    mean, half = prediction_band(values)
    sd = 0.01
    assert mean == pytest.approx(0.98) and half == pytest.approx(4.303 * sd * math.sqrt(1 + 1 / 3))
    _, with_lesson = prediction_band(values, lesson_items=1000)
    assert with_lesson == pytest.approx(math.hypot(half, 1.96 * math.sqrt(0.98 * 0.02 / 1000)))
    assert t_975(10) == 2.262 and t_975(200) == 1.96


def test_a_trained_claim_passes_inside_the_interval_and_fails_outside():
    values = [0.980, 0.984, 0.986, 0.979, 0.983]
    assert judge(seeds_entry(0.984), {"values": values, "items": 10000})["status"] == "pass"
    assert judge(seeds_entry(0.950), {"values": values, "items": 10000})["status"] == "fail"


def test_a_seed_within_the_lessons_printed_rounding_is_a_tie_not_below_it():
    """The lesson prints 99.9 %: a seed at 99.88 % may lie above its unrounded value."""
    values = [0.9988, 0.9982, 0.9980]
    judged = judge(seeds_entry(0.999, items="digits"), {"values": values, "items": 100000})
    assert "above 2 of 3 seeds, 1 within its printed rounding" in str(judged["seeds"])
    assert not judged["above_all"]
    clear = judge(seeds_entry(0.999, items="digits"), {"values": values[1:], "items": 100000})
    assert clear["above_all"] and "above every seed" in str(clear["seeds"])


def test_every_value_a_trained_claim_judges_is_printed_to_thousandths():
    """PRINTED_HALF is half a thousandth because the lesson prints each such value to thousandths."""
    for e in ENTRIES:
        if e.get("rule") == "seeds":
            thousandths = float(e["expected"]) / (2 * PRINTED_HALF)
            assert thousandths == pytest.approx(round(thousandths), abs=1e-9), e["id"]


def test_a_band_too_wide_cannot_discriminate():
    """Seeds from 5 % to 55 %: one more run could land anywhere; neither pass nor fail."""
    judged = judge(seeds_entry(0.09), {"values": [0.05, 0.2, 0.35, 0.55], "items": 10000})
    assert judged["status"] == "note" and judged["undecided"] and "cannot discriminate" in judged["tolerance"]
    loss = judge(seeds_entry(0.9, items=None), {"values": [0.5, 0.9, 1.3], "items": None})
    assert loss["undecided"]  # a loss band wider than 10 % of the value


def test_printed_rules_compare_at_the_lessons_precision():
    assert judge({"rule": {"decimals": 3}, "expected": "1.889"}, 1.88873)["status"] == "pass"
    assert judge({"rule": {"decimals": 3}, "expected": "1.889"}, 1.8896)["status"] == "fail"
    assert judge({"rule": {"significant": 4}, "expected": "5.182e-07"}, 5.1824e-07)["status"] == "pass"
    assert judge({"rule": "thirds", "expected": "2/3"}, 0.651)["status"] == "pass"
    assert judge({"rule": "thirds", "expected": "2/3"}, 0.4)["status"] == "fail"
    assert judge({"rule": "exact", "expected": 4}, 4)["status"] == "pass"


def test_rounding_majority_paired_and_notes():
    ref = {"dot_length": 128, "max_diff_float64": [1e-14], "logit_max_float64": [20.0],
           "max_diff_float32": [1e-5], "logit_max_float32": [20.0]}  # fmt: skip
    assert judge({"rule": "rounding", "expected": ""}, ref)["status"] == "pass"
    assert (
        judge({"rule": "rounding", "expected": ""}, {**ref, "max_diff_float32": [1e-3]})["status"] == "fail"
    )
    assert judge({"rule": "rounding", "expected": ""}, None)["status"] == "note"
    assert judge({"rule": "majority", "expected": ""}, {"same": 6, "seeds": 10})["status"] == "pass"
    assert judge({"rule": "majority", "expected": ""}, {"same": 5, "seeds": 10})["status"] == "fail"
    norm = {"post_minus_pre": 0.2, "post_minus_pre_2se": 0.1, "post_seq_acc": 0.98, "pre_seq_acc": 0.78}
    assert judge({"rule": "paired", "expected": ""}, {**norm, "diffs": [0.1, 0.3]})["status"] == "pass"
    assert judge({"rule": "note", "expected": "", "reason": "why"}, "12 s")["status"] == "note"


def test_the_headline_counts_measured_claims_only():
    def claim(kind, status, undecided=False):
        return Claim("x", "s", "c", "1", "1", "t", status, kind, undecided=undecided)

    tally = counts([claim("measured", "pass"), claim("measured", "note", True), claim("structural", "pass")])
    assert (tally["measured"], tally["measured_pass"], tally["measured_undecided"]) == (2, 1, 1)
    assert (tally["checks"], tally["checks_pass"], tally["fail"]) == (1, 1, 0)


def test_claims_file_ids_once_kinds_known_derivations_named():
    ids = [e["id"] for e in ENTRIES]
    assert len(ids) == len(set(ids)) > 80
    assert all(e["kind"] in KINDS for e in ENTRIES)
    assert all(e["of"] in ids for e in ENTRIES if e["kind"] == "derived")
    assert all(e.get("reason") for e in ENTRIES if e["rule"] == "note")
    assert 20 <= sum(e["kind"] == "measured" for e in ENTRIES) <= 35
    reruns = [e for e in ENTRIES if e["kind"] == "rerun"]  # lesson 6's seeded NumPy cells, run again
    assert reruns and all(e["source"] == "lesson 6" and e["rule"] != "seeds" for e in reruns)


def test_every_lesson_claim_quotes_the_lessons_words_verbatim():
    seeds = ROOT.parent / "shared" / "seeds"
    texts = [p.read_text() for p in sorted(seeds.glob("0*.txt"))]
    if not texts:
        pytest.skip("the lessons are not on this machine")
    missing = [e["id"] for e in ENTRIES if e.get("words") and not any(e["words"] in t for t in texts)]
    assert not missing, f"words not found verbatim in the lessons: {missing}"


def test_claims_csv_quotes_as_the_csv_module_does():
    note = Claim(
        "l10-time", "lesson 10", "a | in the claim", "about 10 s", "12 s", "hardware", "note", "measured"
    )
    text = claims_csv([note, Claim("x", "s", 'say "hi", twice', "1", "1", "exact", "pass", "structural")])
    assert text.splitlines() == [
        "id,source,claim,expected,reproduced,tolerance,status,kind,seeds,words,undecided,lesson_error,test,test_why",
        "l10-time,lesson 10,a | in the claim,about 10 s,12 s,hardware,note,measured,,,False,,,",
        'x,s,"say ""hi"", twice",1,1,exact,pass,structural,,,False,,,',
    ]


def claim_entry(**more):
    return {
        "id": "a",
        "source": "s",
        "kind": "measured",
        "claim": "c",
        "expected": 1,
        "value": "x.y",
        "rule": "exact",
        **more,
    }


def test_a_claim_that_applies_is_judged_and_one_without_its_value_stops_the_report_naming_it(tiny):
    assert [c.id for c in evaluate([claim_entry()], {"x.y": 1}, report_params(tiny))] == ["a"]
    with pytest.raises(DataError, match=r"claim a applies, but nothing measures x\.y"):
        evaluate([claim_entry()], {}, report_params(tiny))


def test_a_quantity_computed_from_metrics_the_run_did_not_write_stops_the_report_naming_the_claim(tiny):
    measured = Measured({}, {}, tiny.train.seeds, 20, {"q.x": lambda: {}["loss_step_1200"]})
    with pytest.raises(DataError, match="claim a applies, but 'loss_step_1200' was not measured"):
        evaluate([claim_entry(value="q.x")], measured, report_params(tiny))


def test_a_claim_reads_a_tidy_table_through_a_query_and_one_that_finds_no_row_stops_the_report(tiny):
    seeds = tiny.train.seeds
    losses = pd.DataFrame({"seed": [*seeds, *seeds], "steps": [1] * len(seeds) + [2] * len(seeds)})
    losses["loss"] = [0.5 + s for s in seeds] + [0.25 + s for s in seeds]
    measured = Measured({}, {"train/losses": losses}, seeds, 20, {})
    query = {"table": "train/losses", "column": "loss", "steps": 2}
    assert measured.query(query)["values"] == [0.25 + s for s in seeds]
    judged = evaluate([claim_entry(value=query, rule="seeds", expected=0.25)], measured, report_params(tiny))
    assert judged[0].per_seed == tuple(0.25 + s for s in seeds)
    by_length = pd.DataFrame({"length": [8, 10], "starts_with_0": [0.5, 0.625]})  # a table without seeds
    measured.tables["data/by_length"] = by_length
    assert measured.query({"table": "data/by_length", "column": "starts_with_0", "length": 10}) == 0.625
    for wrong, missing in (
        ({"steps": 3}, "for seeds"),
        ({"table": "train/loss"}, "table"),
        ({"step": 2}, "column"),
    ):
        with pytest.raises(DataError, match=f"claim a applies, but its query finds no .*{missing}"):
            evaluate(
                [claim_entry(value=query | wrong, rule="seeds", expected=0.25)], measured, report_params(tiny)
            )


def test_a_claim_is_left_out_only_where_its_applies_says_the_run_does_not_measure_it(tiny):
    tested, steps = tiny.data.test_lengths, tiny.train.steps
    assert evaluate([claim_entry(applies={"test_length": max(tested) + 1})], {}, report_params(tiny)) == []
    assert evaluate([claim_entry(applies={"steps": steps + 1})], {}, report_params(tiny)) == []
    assert (
        evaluate([claim_entry(applies={"probe_depth": max(tiny.probe.depths) + 1})], {}, report_params(tiny))
        == []
    )
    assert (
        evaluate([claim_entry(applies={"reads_length": tiny.model.max_len + 1})], {}, report_params(tiny))
        == []
    )
    with pytest.raises(DataError, match="claim a applies, but nothing measures"):
        evaluate([claim_entry(applies={"test_length": tested[0], "steps": steps})], {}, report_params(tiny))
    with pytest.raises(DataError, match="unknown applies lenght"):
        evaluate([claim_entry(applies={"lenght": 10})], {"x.y": 1}, report_params(tiny))


def lesson_model_rows(accuracy):
    """The study's per-seed table with the lesson's model (`pipeline`) at {length: [one per seed]}."""
    rows = [
        {"variant": "pipeline", "seed": s, "length": n, "seq_acc": a}
        for n, by_seed in accuracy.items()
        for s, a in enumerate(by_seed)
    ]
    return pd.DataFrame(rows + [{"variant": "other", "seed": 0, "length": 2, "seq_acc": 1.0}])


def test_even_the_shortest_fail_reads_every_shorter_length_training_never_drew(tiny):
    """«Hasta las más cortas fallan»: lengths 2 to 9 for a model trained on 10 (one digit, a copy, left
    out); a single seed at the bar at any of them fails the claim."""
    bar = tiny.study.bar
    assert shorter_untrained([10]) == list(range(2, 10)) and shorter_untrained([1, 2, 3, 5]) == [4]
    failing = {n: [0.1, 0.2] for n in range(1, 11)}
    value = shorter_failure(lesson_model_rows(failing), [10], bar)
    assert list(value["by_length"]) == list(range(2, 10)) and value["by_length"][9] == [0.1, 0.2]
    entry = claim_entry(rule="below_bar", expected="fails")
    assert judge(entry, value)["status"] == "pass"
    one_at_the_bar = failing | {9: [0.1, bar.accuracy]}
    assert judge(entry, shorter_failure(lesson_model_rows(one_at_the_bar), [10], bar))["status"] == "fail"
    with pytest.raises(KeyError):  # a length the study did not test
        shorter_failure(lesson_model_rows({n: [0.1] for n in range(1, 9)}), [10], bar)
    short = tiny_params(data={"train_lengths": [2], "test_lengths": [2]})
    applies = {"shorter_untrained": 1}
    assert evaluate([claim_entry(applies=applies)], {}, report_params(short)) == []


@pytest.mark.parametrize(
    "words, error",
    [
        (["3", "x"], "only the digits 0-9"),
        (["-1"], "only the digits 0-9"),
        ([], "give the digits"),
        (["1" * 65], "65 digits is more than this model's 64"),
    ],
)
def test_sort_cli_rejects_bad_input_in_one_line(words, error):
    with pytest.raises(PipelineError, match=error):
        parse_digits(words, 64)


def test_sort_cli_refuses_other_scripts_digits():
    for text in ("3²", "٣"):
        with pytest.raises(PipelineError, match="only the digits 0-9"):
            parse_digits([text], 64)


def test_sort_cli_reads_spaced_or_joined_digits():
    assert parse_digits(["3", "1", "4"], 64) == parse_digits(["314"], 64) == [3, 1, 4]


@pytest.mark.parametrize("length", [6, 14])
def test_a_digit_claims_sampling_error_counts_the_lessons_digits_at_its_length(length):
    """The lesson tested 1,000 sequences at every length: m x length digits, not m x 10. With seeds
    that agree exactly, the band is the lesson's own sampling error alone."""
    entry = {**seeds_entry(0.5, items="digits"), "applies": {"test_length": length}}
    low, high = judge(entry, {"values": [0.5, 0.5, 0.5], "items": 10000})["band"]
    assert (high - low) / 2 == pytest.approx(1.96 * math.sqrt(0.25 / (1000 * length)))


LESSON_FILES = {10: "002_2821ac794a08d866.txt", 6: "000_d57fe2a1e816378e.txt"}


def lesson_listings(lesson, text):
    """A lesson's code listings, by the line that names each in lesson_map.yaml: lesson 10's blocks
    after a line `python` (their first line); lesson 6's NumPy cells (the line after the import) and
    its exercise (the line that sets it, the one before the challenge's instructions)."""
    lines = text.splitlines()
    if lesson == 10:
        return [lines[i + 1] for i, line in enumerate(lines) if line == "python"]
    cells = [
        next(x for x in lines[i + 1 :] if x.strip()) for i, x in enumerate(lines) if x == "import numpy as np"
    ]
    exercises = [x for x in lines if x.startswith("Monta el bloque")]
    assert len(exercises) == text.count("This challenge")  # one setting line per challenge
    return cells + exercises


def test_the_lesson_map_covers_every_listing_of_both_lessons_in_their_order():
    from pipeline.report.context import LESSON_MAP

    seeds = ROOT.parent / "shared" / "seeds"
    if not all((seeds / name).exists() for name in LESSON_FILES.values()):
        pytest.skip("the lessons' text (../shared/seeds/) is not on this machine")
    mapped = yaml.safe_load(LESSON_MAP.read_text())
    ids = {e["id"] for e in ENTRIES}
    for lesson, name in LESSON_FILES.items():
        text = (seeds / name).read_text()
        listed = [x["first_line"] for x in mapped if x["lesson"] == lesson]
        assert listed == lesson_listings(lesson, text), f"lesson {lesson}"
        for x in (x for x in mapped if x["lesson"] == lesson):
            assert all(p["line"] in text and p["claims"] and set(p["claims"]) <= ids for p in x["prints"])
    assert [x["lesson"] for x in mapped] == sorted((x["lesson"] for x in mapped), reverse=True)
    for x in mapped:  # every function named exists
        module, _, name = x["function"].partition(":")
        assert hasattr(importlib.import_module(module), name), x["function"]

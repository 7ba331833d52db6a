"""The tolerance rules can fail: each is checked on both sides of its boundary."""

import pytest

from pipeline.infra.errors import PipelineError
from pipeline.report.claims.rules import about, accuracy_margin, exact, note, printed, printed_sci, seed_range
from pipeline.tools.sort import parse_digits


def test_exact_passes_only_on_equality():
    assert exact("a", "s", "c", 59_744, 59_744).status == "pass"
    assert exact("a", "s", "c", 59_744, 59_745).status == "fail"


def test_printed_compares_at_the_lessons_precision():
    assert printed("a", "s", "c", "1.889", 1.88873, 3).status == "pass"
    assert printed("a", "s", "c", "1.889", 1.8884, 3).status == "fail"
    assert printed_sci("a", "s", "c", "5.182e-07", 5.18236e-7, 3).status == "pass"
    assert printed_sci("a", "s", "c", "5.182e-07", 5.1836e-7, 3).status == "fail"


def test_seed_range_widens_by_the_margin_and_no_more():
    assert seed_range("a", "s", "c", 0.579, [0.56, 0.587], 0.0).status == "pass"
    assert seed_range("a", "s", "c", 0.60, [0.56, 0.587], 0.01).status == "fail"
    assert seed_range("a", "s", "c", 0.60, [0.56, 0.587], 0.02).status == "pass"
    # exactly on the widened edge at 0: float dust must not fail it
    assert seed_range("a", "s", "c", 0.0, [0.001, 0.013], 0.001).status == "pass"


def test_accuracy_margin_is_twice_the_standard_error_of_the_difference():
    assert accuracy_margin(0.5, 1000, 10_000) == pytest.approx(2 * (0.25 / 1000 + 0.25 / 10_000) ** 0.5)
    assert accuracy_margin(0.5, 1000, 10_000) > accuracy_margin(0.5, 1000, 10**9)  # both sides count
    assert accuracy_margin(0.0, 1000, 10_000) == 0.001  # the printed precision, 0.1 point


def test_seed_range_says_where_the_lessons_value_falls():
    seeds = [0.1 * i for i in range(10)]
    assert "above 7 of 10 seeds (percentile 70" in seed_range("a", "s", "c", 0.65, seeds, 0.0).seeds
    assert "above every seed" in seed_range("a", "s", "c", 5.0, seeds, 0.0).seeds
    assert "below every seed" in seed_range("a", "s", "c", -1.0, seeds, 0.0).seeds


def test_loss_margin_leaves_out_the_trend():
    """A loss falling in a straight line with small noise: the margin is the noise, not the fall."""
    import numpy as np

    from pipeline.report.claims.training import loss_noise

    rng = np.random.default_rng(0)
    losses = list(1.0 - 0.002 * np.arange(300) + rng.normal(0, 0.01, 300))
    assert loss_noise([losses], 300) == pytest.approx(0.01, rel=0.2)
    assert np.std(losses[200:300]) > 0.05  # what the trend alone would have added


def test_every_lesson_claim_quotes_the_lessons_words_verbatim():
    from pathlib import Path

    from pipeline.core.lesson import lesson_words

    words = lesson_words()
    assert len(words) > 70 and sum(bool(w) for w in words.values()) > 65
    seeds = Path(__file__).parents[2] / "shared" / "seeds"
    texts = [p.read_text() for p in sorted(seeds.glob("0*.txt"))]
    if not texts:
        pytest.skip("the lessons are not on this machine")
    missing = [i for i, w in words.items() if w and not any(w in t for t in texts)]
    assert not missing, f"words not found verbatim in the lessons: {missing}"


def test_about_allows_five_percent():
    assert about("a", "s", "c", 18.9e6, 18.902e6).status == "pass"
    assert about("a", "s", "c", 65e6, 60e6).status == "fail"


def test_note_is_neither_pass_nor_fail():
    assert note("a", "s", "c", 10, 12, "hardware").status == "note"


@pytest.mark.parametrize(
    "words, error",
    [
        (["3", "x"], "only the digits 0-9"),
        (["-1"], "only the digits 0-9"),
        ([], "give the digits"),
        (["1" * 65], "65 digits is more than this model's max_len = 64"),
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


def test_probe_claims_note_what_a_shallower_probe_did_not_measure():
    import json
    from pathlib import Path

    from pipeline.report.claims.probes import probe_claims

    # Why committed outputs: the probe's full results are the one realistic input holding every key
    # probe_claims reads; CI's clean-tree check keeps them equal to what the code makes.
    measured = json.loads((Path(__file__).parents[1] / "metrics/probe/summary.json").read_text())
    shallow = {k: v for k, v in measured.items() if not k.endswith("_12")}
    rows = probe_claims(shallow)
    assert rows[-1].id == "l6-depths" and rows[-1].status == "note"
    assert "l6-res-without-12" in [r.id for r in probe_claims(measured)]

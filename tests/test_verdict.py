"""The CI gate: a fail passes only as a reviewed known deviation, and a deviation that went away
must leave the list (strict)."""

import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.infra.errors import DataError
from pipeline.tools.verdict import DEVIATIONS_PATH, judge, read_deviations


def test_every_claim_passing_or_noted_passes_the_gate():
    assert judge({"a": "pass", "b": "note"}, {}) == []


def test_an_unlisted_fail_fails_the_gate():
    assert judge({"a": "pass", "b": "fail"}, {}) == ["b: fails and is not a known deviation"]


def test_a_listed_fail_passes_and_a_listed_pass_fails_the_gate():
    assert judge({"a": "fail"}, {"a": "why"}) == []
    assert judge({"a": "pass"}, {"a": "why"}) == ["a: listed as a known deviation but now pass: take it off"]
    assert "not in the claims table" in judge({}, {"gone": "why"})[0]


def test_the_reviewed_list_reads_and_every_entry_says_why(tmp_path):
    assert isinstance(read_deviations(DEVIATIONS_PATH), dict)  # the project's own list parses
    listed = tmp_path / "known.yaml"
    listed.write_text("deviations:\n  - id: a\n    reason: slower\n    evidence: 10 seeds\n")
    assert read_deviations(listed) == {"a": "slower"}
    listed.write_text("deviations:\n  - id: a\n    reason: slower\n")
    with pytest.raises(DataError, match="entry a lacks evidence"):
        read_deviations(listed)


@pytest.mark.parametrize(
    "text, words",
    [
        ("deviations:\n  - l10-greedy-seq\n", "a list of entries"),
        ("- id: a\n", "a list of entries"),
        ("deviations: [\n", "not valid YAML"),
        ("deviations:\n  - {id: a, reason: r, evidence: e}\n  - {id: a, reason: r, evidence: e}\n", "twice"),
    ],
)
def test_a_malformed_list_is_one_clear_error(tmp_path, text, words):
    listed = tmp_path / "known.yaml"
    listed.write_text(text)
    with pytest.raises(DataError, match=words):
        read_deviations(listed)


def test_the_readme_command_passes_on_the_committed_results():
    """`python -m pipeline.tools.verdict` as the README shows it, on this project's own claims tables
    (the tiny clone's toy models fail the claims by design, so the README's command runs here)."""
    root = Path(__file__).resolve().parents[1]
    ran = subprocess.run(
        [sys.executable, "-m", "pipeline.tools.verdict"], cwd=root, capture_output=True, text=True, timeout=99
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "0 fail" in ran.stdout

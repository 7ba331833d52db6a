"""The report's first page in two editions, reports/README.md and its Spanish reports/README.es.md,
rendered from the committed results: the same numbers in the same order, each edition linking the
other at the top, the same figures, and none of the English that Python writes left in the Spanish."""

import difflib
import re
from pathlib import Path

import pytest

from pipeline.core.params import load_params
from pipeline.report.claims import evaluate, load_claims
from pipeline.report.context import report_context
from pipeline.report.environment import environment
from pipeline.report.quantities import quantities
from pipeline.report.readme import render
from pipeline.stages.report import read_metrics

ROOT = Path(__file__).resolve().parents[1]
# A number as the report prints it: 12, -8.0, +25.63, 1,000, 5.182e-07; not the digits inside a
# name (l10, float64, AVX2), and the "-" of a range such as 1-20 or 0.6 %-30.3 % is no sign.
NUMBER = re.compile(r"(?<![\w.%])[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?")
FIGURE = re.compile(r"\]\((figures/[^)]+)\)")


@pytest.fixture(scope="module")
def editions():
    params = load_params(ROOT / "params.yaml")
    m = read_metrics(ROOT / "metrics")
    claims = evaluate(load_claims(), quantities(params, m, m["benchmark"]), params)
    pages = render(report_context(params, m, claims, environment(m["numerics"])))
    return pages["README.md"], pages["README.es.md"]


def number_differences(english, spanish):
    """Where the two editions' numbers differ, one line each, with the numbers just before it to find
    the place by; none when both print the same numbers in the same order."""
    ours, theirs = NUMBER.findall(english), NUMBER.findall(spanish)
    found = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ours, theirs, autojunk=False).get_opcodes():
        if op != "equal":
            after = " ".join(ours[max(0, i1 - 3) : i1]) or "the start"
            found.append(f"after {after}: README.md has {ours[i1:i2]}, README.es.md has {theirs[j1:j2]}")
    return found


def test_both_editions_print_the_same_numbers_in_the_same_order(editions):
    differences = number_differences(*editions)
    assert not differences, "the editions' numbers differ:\n" + "\n".join(differences)


def test_a_changed_number_is_found():
    english = "Trained on length 10, it sorts 98.2 % [97.2 %-99.2 %] of 10,000 sequences."
    spanish = "Entrenado con el largo 10, ordena el 98.2 % [97.2 %-99.3 %] de 10,000 secuencias."
    assert number_differences(english, english) == []
    assert number_differences(english, spanish) == [
        "after 10 98.2 97.2: README.md has ['99.2'], README.es.md has ['99.3']"
    ]
    assert number_differences(english, spanish.replace(" 10,000", "")) != []  # a number left out


def test_each_edition_links_the_other_at_the_top(editions):
    english, spanish = (text.splitlines() for text in editions)
    assert english[:3] == ["# Replication report", "", "Versión en español: [README.es.md](README.es.md)"]
    assert spanish[:3] == ["# Informe de replicación", "", "English version: [README.md](README.md)"]
    for lines in (english, spanish):  # the appendix and the claims table, linked from the headline
        assert "[APPENDIX.md](APPENDIX.md#every-claim)" in "\n".join(lines[:12])


def test_both_editions_show_the_same_figures(editions):
    english, spanish = (FIGURE.findall(text) for text in editions)
    assert english == spanish


def test_the_spanish_table_keeps_no_english_from_python(editions):
    """The claims' texts, results and verdicts come from Python in English; words.yaml words them."""
    spanish = editions[1]
    table = spanish[spanish.index("| afirmación |") : spanish.index("\n## Lo que muestran las figuras")]
    left = re.findall(r"\b(?:seeds?|sequences?|each|bound|writes?|rounding|pass|cannot|loss|length)\b", table)
    assert not left, f"English left in the Spanish table: {sorted(set(left))}"

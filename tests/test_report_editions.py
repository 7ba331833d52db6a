"""The report's pages in two editions, reports/README.md and reports/APPENDIX.md and their Spanish
README.es.md and APPENDIX.es.md, rendered from the committed results: the same numbers in the same
order, each edition linking the other at the top, the same figures, every link into a page landing
on one of its headings, and none of the English that Python writes left in the Spanish."""

import difflib
import re
from pathlib import Path

import pytest

from pipeline.params.load import load_params
from pipeline.report.claims import evaluate, load_claims
from pipeline.report.context import report_context
from pipeline.report.pages import render
from pipeline.report.quantities import quantities
from pipeline.report.report import environment, read_metrics
from tests.conftest import report_params

ROOT = Path(__file__).resolve().parents[1]
# A number as the report prints it: 12, -8.0, +25.63, 1,000, 5.182e-07; not the digits inside a
# name (l10, float64, AVX2), and the "-" of a range such as 1-20 or 0.6 %-30.3 % is no sign.
NUMBER = re.compile(r"(?<![\w.%])[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?")
FIGURE = re.compile(r"\]\((figures/[^)]+)\)")
LINK = re.compile(r"\]\(([\w.]*)#([^)]+)\)")  # a link to a heading: [text](PAGE.md#anchor) or (#anchor)
EDITIONS = {"README": ("README.md", "README.es.md"), "APPENDIX": ("APPENDIX.md", "APPENDIX.es.md")}
TOPS = {  # each edition's title and its link to the other
    "README.md": ["# Replication report", "", "Versión en español: [README.es.md](README.es.md)"],
    "README.es.md": ["# Informe de replicación", "", "English version: [README.md](README.md)"],
    "APPENDIX.md": [
        "# Appendix to the replication report",
        "",
        "Versión en español: [APPENDIX.es.md](APPENDIX.es.md)",
    ],
    "APPENDIX.es.md": [
        "# Apéndice del informe de replicación",
        "",
        "English version: [APPENDIX.md](APPENDIX.md)",
    ],
}
# Words of the English that claims.py, quantities.py and the search write, not Spanish ones.
ENGLISH = re.compile(
    r"\b(?:seeds?|sequences?|each|bound|writes?|rounding|pass|cannot|loss|length|above|below|every|"
    r"exact|interval|terms|orders|nearest|about|thread|the|of|with|and|to|at|training|diverged|stopped)\b"
)


@pytest.fixture(scope="module")
def pages():
    params = report_params(load_params(ROOT / "params.yaml"))
    m = read_metrics(ROOT / "metrics", params.train.seeds)
    claims = evaluate(load_claims(), quantities(params, m, m["benchmark"]), params)
    return render(report_context(params, m, claims, environment(m["numerics"])))


@pytest.fixture(scope="module", params=list(EDITIONS), ids=list(EDITIONS))
def editions(request, pages):
    """(English page name, Spanish page name, English text, Spanish text)."""
    english, spanish = EDITIONS[request.param]
    return english, spanish, pages[english], pages[spanish]


def number_differences(english, spanish, names=EDITIONS["README"]):
    """Where the two editions' numbers differ, one line each, with the numbers just before it to find
    the place by; none when both print the same numbers in the same order."""
    ours, theirs = NUMBER.findall(english), NUMBER.findall(spanish)
    found = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ours, theirs, autojunk=False).get_opcodes():
        if op != "equal":
            after = " ".join(ours[max(0, i1 - 3) : i1]) or "the start"
            found.append(f"after {after}: {names[0]} has {ours[i1:i2]}, {names[1]} has {theirs[j1:j2]}")
    return found


def test_both_editions_print_the_same_numbers_in_the_same_order(editions):
    english, spanish, *texts = editions
    differences = number_differences(*texts, names=(english, spanish))
    assert not differences, "the editions' numbers differ:\n" + "\n".join(differences)


def test_a_changed_number_is_found():
    english = "Trained on length 10, it sorts 98.2 % [97.2 %-99.2 %] of 10,000 sequences."
    spanish = "Entrenado con el largo 10, ordena el 98.2 % [97.2 %-99.3 %] de 10,000 secuencias."
    assert number_differences(english, english) == []
    assert number_differences(english, spanish) == [
        "after 10 98.2 97.2: README.md has ['99.2'], README.es.md has ['99.3']"
    ]
    assert number_differences(english, spanish.replace(" 10,000", "")) != []  # a number left out


def test_each_edition_links_the_other_at_the_top(pages):
    for page, top in TOPS.items():
        assert pages[page].splitlines()[:3] == top, page
    first = {page: "\n".join(pages[page].splitlines()[:12]) for page in EDITIONS["README"]}
    # the appendix and the claims table, linked from the headline, each edition to its own appendix
    assert "[APPENDIX.md](APPENDIX.md#every-claim)" in first["README.md"]
    assert "[APPENDIX.es.md](APPENDIX.es.md#cada-afirmación)" in first["README.es.md"]


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped (accented letters kept),
    spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text):
    """Every heading's anchor in a Markdown page, code blocks aside; a repeated one numbered as GitHub
    numbers it (-1, -2, ...)."""
    seen, found = {}, set()
    for heading in re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def test_every_link_to_a_heading_lands_on_one(pages):
    links = [
        (page, target or page, anchor)
        for page, text in pages.items()
        for target, anchor in LINK.findall(text)
    ]
    assert any(target == "APPENDIX.es.md" for _, target, _ in links)
    broken = [
        f"{page}: {target}#{anchor}" for page, target, anchor in links if anchor not in anchors(pages[target])
    ]
    assert not broken, f"links to no heading: {broken}"


def test_a_heading_anchor_is_githubs():
    assert slug("Ordenar cualquier largo: lo que falta") == "ordenar-cualquier-largo-lo-que-falta"
    assert (
        slug("Why the lesson's model fails away from length 10")
        == "why-the-lessons-model-fails-away-from-length-10"
    )
    assert slug("Cada afirmación") == "cada-afirmación"
    assert anchors("# Notes\n```\n# not a heading\n```\n## Notes\n### Notes") == {
        "notes",
        "notes-1",
        "notes-2",
    }


def test_both_editions_show_the_same_figures(editions):
    english, spanish = (FIGURE.findall(text) for text in editions[2:])
    assert english == spanish


def table(text, header):
    """The Markdown table whose header row starts with `header`, its rows only."""
    start = text.index(f"\n{header}")
    end = text.find("\n\n", start + 1)
    return text[start : end if end > 0 else None]


@pytest.mark.parametrize(
    "page, header",
    [
        ("README.es.md", "| afirmación |"),
        ("APPENDIX.es.md", "| id | tipo |"),
        ("APPENDIX.es.md", "| fila | cambios |"),
    ],
)
def test_the_spanish_tables_keep_no_english_from_python(pages, page, header):
    """The claims' texts, results and verdicts and the search's reasons come from Python and YAML in
    English; words.yaml words them."""
    rows = table(pages[page], header)
    aside = r"«[^»]*»|`[^`]*`|\b(?:l10|l6|paper)-[\w-]+"  # the lessons' words, code and claim ids
    left = sorted(set(ENGLISH.findall(re.sub(aside, "", rows))))
    assert not left, f"English left in {page}'s table {header}: {left}"

"""The length study's own pages (reports/study/), rendered from the committed results: the same bytes as
committed, every figure shown and committed (tests/test_figure_text.py draws them), the lesson's
statements it judges in a table of their own, links to the lesson's handout and back, and the lesson's
pages reading nothing of it."""

import re
from pathlib import Path

import numpy as np
import pytest

from pipeline.report.claims import claims_csv
from pipeline.report.pages import render
from pipeline.report.study.context import study_pages_context
from pipeline.report.study.figures import lengths_at_the_bar, rung_title
from pipeline.report.study.lesson_claims import judged_claims
from pipeline.report.study.report import PAGES as PAGE_NAMES
from pipeline.report.study.report import TEMPLATES, StudyPagesParams, read_study_metrics
from pipeline.report.style import Words
from pipeline.study.load import load_params

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "reports/study"


@pytest.fixture(scope="module")
def rendered():
    """The study's claims table and pages rendered afresh from the committed metrics, as the
    study_pages stage renders them (its figures aside)."""
    whole = load_params(ROOT / "params.yaml")
    params = StudyPagesParams(data=whole.data, train=whole.train, study=whole.study)
    m = read_study_metrics(ROOT / "metrics")
    claims, habits = judged_claims(params, m["tables"], m["search"])
    return (
        claims_csv(claims),
        render(study_pages_context(params, m, claims, habits), TEMPLATES, PAGE_NAMES),
        claims,
    )


def test_the_committed_study_pages_are_what_the_code_renders(rendered):
    table, pages, _ = rendered
    for page, text in pages.items():
        assert (PAGES / page).read_text() == text, f"reports/study/{page} is not what the code renders"
    assert (PAGES / "claims.csv").read_text() == table


def test_every_figure_shown_is_committed_and_every_figure_committed_is_shown(rendered):
    _, pages, _ = rendered
    shown = {f for text in pages.values() for f in re.findall(r"\]\(figures/([^)]+)\)", text)}
    committed = {p.relative_to(PAGES / "figures").as_posix() for p in (PAGES / "figures").rglob("*.png")}
    assert shown == committed


def test_the_study_judges_the_lessons_two_statements_on_other_lengths(rendered):
    _, pages, claims = rendered
    assert sorted(c.id for c in claims) == ["l10-not-position", "l10-shortest"]
    for page in ("README.md", "README.es.md"):
        table = pages[page].split("\n## ")[-3]  # the claims' section, before references and glossary
        assert all(c.claim[:20] in table or page.endswith(".es.md") for c in claims)
        assert table.count("\n| ") == len(claims) + 2  # the header, its rule and a row a claim


@pytest.mark.parametrize("page,handout", [("README.md", "../README.md"), ("README.es.md", "../README.es.md")])
def test_the_study_page_says_what_it_is_and_links_the_handout(rendered, page, handout):
    """The lead, written for students, links the lesson's handout; the pipeline that makes the page
    is named in its appendix, not in front of them."""
    _, pages, _ = rendered
    lead = pages[page].split("\n\n")[2]
    assert f"]({handout})" in lead and "dvc" not in lead
    assert "study/dvc.yaml" in pages[page.replace("README", "APPENDIX")]


@pytest.mark.parametrize("page", ["README.md", "README.es.md"])
def test_the_handout_points_to_the_study_page_and_says_nothing_else_of_it(page):
    handout = (ROOT / "reports" / page).read_text()
    assert f"](study/{page})" in handout
    assert "verdict.png" not in handout and "ladder.png" not in handout


def test_the_pages_read_the_study_and_the_lessons_results_only():
    m = read_study_metrics(ROOT / "metrics")
    assert set(m["tables"]) == {
        "study/per_seed",
        "study/bar",
        "study/count_margin",
        "verdict/per_seed",
        "verdict/certificates",
        "data/by_length",
    }


def test_a_ladder_rung_is_at_the_bar_only_with_every_seed_and_enough_of_them():
    bar = {"accuracy": 0.99, "lengths": [1, 20], "seed_floor": 0.98, "min_seeds": 5}
    points = 100 * np.array([[1.0, 1.0, 1.0, 0.9]] * 4 + [[1.0, 0.975, 1.0, 0.9]])  # (seeds, lengths)
    assert points[:, 1].mean() >= 99  # length 2's mean is at the bar; one seed is under the floor
    at = lengths_at_the_bar(points, [1, 2, 3, 4], bar)
    assert at == "1, 3"
    words = Words("en")
    assert "at the bar at: 1, 3" in rung_title(words, "r", "rung", 5, True, at, bar)
    few = rung_title(words, "r", "rung", 2, True, at, bar)
    assert "at the bar at" not in few and "the bar asks for 5 seeds" in few

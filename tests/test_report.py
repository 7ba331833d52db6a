"""The report, rendered from the committed results (the one realistic input holding every number
it reads; CI's clean-tree check keeps them equal to what the code makes): the verdict and the
lesson's numbers first, every figure shown and drawn, every claim in the appendix, lines wrapped for
reading, the same bytes twice."""

import csv
import json
import re
from pathlib import Path

import pytest

from pipeline.core import evaluate as evaluation
from pipeline.infra.errors import DataError
from pipeline.infra.markdown import wrap_markdown
from pipeline.params import lesson
from pipeline.params.lesson_load import load_lesson_params
from pipeline.report.claims import evaluate, load_claims
from pipeline.report.context import report_context
from pipeline.report.pages import catalogue, render
from pipeline.report.quantities import quantities
from pipeline.report.report import environment, read_metrics
from pipeline.stages.report import report_params

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pages():
    params = report_params(load_lesson_params(ROOT / "params.yaml"))
    m = read_metrics(ROOT / "metrics", params.train.seeds)
    claims = evaluate(load_claims(), quantities(params, m, m["benchmark"]), params)
    return render(report_context(params, m, claims, environment(m["numerics"], m["device"]))), claims


def test_the_default_parameters_judge_every_claim(pages):
    assert sorted(c.id for c in pages[1]) == sorted(e["id"] for e in load_claims())


def test_a_misspelt_value_stops_the_report_naming_its_claim():
    params = report_params(load_lesson_params(ROOT / "params.yaml"))
    m = read_metrics(ROOT / "metrics", params.train.seeds)
    entries = load_claims()
    entries[7] = {**entries[7], "value": entries[7]["value"] + "_x"}
    with pytest.raises(DataError, match=f"claim {entries[7]['id']} applies, but nothing measures"):
        evaluate(entries, quantities(params, m, m["benchmark"]), params)


FIRST_SCREEN = {  # each edition's verdict, its comparison table's header and its sections in order
    "README.md": (
        "does what the lesson says",
        "| what the lesson prints |",
        ["## The lesson's numbers against ours", "## The lesson's own explanations, tested",
         "## What the figures show", "## Beyond the lesson",
         "## Every check, counted",
         "## References", "## Glossary"],
    ),
    "README.es.md": (
        "hace lo que dice la lección",
        "| lo que imprime la lección |",
        ["## Los números de la lección frente a los nuestros",
         "## Las explicaciones de la lección, puestas a prueba", "## Lo que muestran las figuras",
         "## Más allá de la lección",
         "## Todas las comprobaciones, contadas", "## Referencias", "## Glosario"],
    ),
}  # fmt: skip
# What goes beyond the lesson without being a claim of it, kept out of the first page: each appendix
# ends with our code's speed and the environment that gives these results, and its README points there.
APPENDIX_ENDS = {
    "APPENDIX.md": (
        "README.md", "(APPENDIX.md#beyond-the-lesson-speed)",
        ["## Recipes", "## Beyond the lesson: speed", "## Beyond the lesson: the environment"],
    ),
    "APPENDIX.es.md": (
        "README.es.md", "(APPENDIX.es.md#más-allá-de-la-lección-la-velocidad)",
        ["## Recetas", "## Más allá de la lección: la velocidad", "## Más allá de la lección: el entorno"],
    ),
}  # fmt: skip
CODE_NAME = re.compile(r"\b[a-z]\w*_\w+\b|\b(?:l10|l6|paper)-[\w-]+")  # bos_mixed_sums, l10-shift


@pytest.mark.parametrize("page", FIRST_SCREEN)
def test_the_first_screen_answers_the_lesson(pages, page):
    """The first 40 lines: the verdict on the lesson in bold, the lesson's numbers against ours and a
    figure of the lesson, no code name; then the lesson's explanations, and only then what goes beyond."""
    verdict, header, headings = FIRST_SCREEN[page]
    text = pages[0][page]
    first = "\n".join(text.splitlines()[:40])
    opening = text.split("\n\n")[2]  # after the title and the link to the other edition
    assert opening.startswith("**") and verdict in " ".join(opening.split())
    assert f"\n{header}" in first and "/length_accuracy.png)" in first
    prose = re.sub(r"`[^`]*`|\]\([^)]*\)", " ", first)  # code and link targets aside
    assert not CODE_NAME.findall(prose)
    places = [text.index(f"\n{h}\n") for h in headings]
    assert places == sorted(places)


@pytest.mark.parametrize("page", APPENDIX_ENDS)
def test_speed_and_the_environment_close_the_appendix_and_the_readme_points_there(pages, page):
    """The speed and environment sections follow the recipes and close the appendix, the speed figure
    with them; the README keeps neither, only a link to them."""
    readme, link, headings = APPENDIX_ENDS[page]
    text = pages[0][page]
    places = [text.index(f"\n{h}\n") for h in headings]
    assert places == sorted(places)
    assert not re.search(r"^## ", text[places[-1] + len(headings[-1]) + 2 :], re.M)  # the last section
    assert "/benchmark.png)" in text[places[1] :]
    assert link in pages[0][readme] and not any(f"\n{h}\n" in pages[0][readme] for h in headings[1:])
    assert "/benchmark.png)" not in pages[0][readme]


def test_every_slip_of_the_lessons_is_an_imprecision_or_an_error_in_both_editions(pages):
    """claims.yaml marks where the lessons slip (lesson_error); each edition's catalogue says which
    slips are imprecisions and which errors: every slip in exactly one group, the same in both."""
    slipped = {c.id for c in pages[1] if c.lesson_error}
    kinds = ("imprecision", "error")
    groups = {lang: {k: set(catalogue(lang)["slips"][k]) for k in kinds} for lang in ("en", "es")}
    assert groups["en"] == groups["es"]
    assert not groups["en"]["imprecision"] & groups["en"]["error"]
    assert groups["en"]["imprecision"] | groups["en"]["error"] == slipped


def test_the_headline_counts_rebuild_from_claims_csv():
    """claims.csv carries every column the first screen counts: kind, status, undecided, lesson_error."""
    with open(ROOT / "reports" / "claims.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    measured = [r for r in rows if r["kind"] == "measured"]
    rebuilt = {
        "claims_falsifiable": sum(r["status"] != "note" for r in measured),
        "claims_measured_pass": sum(r["status"] == "pass" for r in measured),
        "claims_measured_undecided": sum(r["undecided"] == "True" for r in measured),
        "claims_fail": sum(r["status"] == "fail" for r in rows),
        "claims_lesson_errors": sum(bool(r["lesson_error"]) for r in rows),
    }
    assert rebuilt == json.loads((ROOT / "metrics" / "report.json").read_text())
    assert rebuilt["claims_falsifiable"] > 0 and rebuilt["claims_lesson_errors"] > 0


def test_every_claim_is_in_the_appendix_and_the_readme_stays_short(pages):
    readme, appendix = pages[0]["README.md"], pages[0]["APPENDIX.md"]
    claims = pages[1]
    assert all(f"\n| {c.id} |" in appendix for c in claims)
    assert len(readme.splitlines()) < len(appendix.splitlines())


def test_every_figure_shown_is_drawn_and_every_figure_drawn_is_shown(pages):
    shown = set()
    for text in pages[0].values():
        shown |= set(re.findall(r"\]\(figures/([^)]+)\)", text))
    drawn = {
        p.relative_to(ROOT / "reports/figures").as_posix() for p in (ROOT / "reports/figures").rglob("*.png")
    }
    assert shown == drawn


def test_the_committed_report_is_what_the_code_renders(pages):
    for page, text in pages[0].items():
        assert (ROOT / "reports" / page).read_text() == text, f"reports/{page} is not what the code renders"


def test_wrapping_keeps_markdown_meaning():
    bullet = "- " + "word " * 30 + "ends at 20."
    wrapped = wrap_markdown(bullet, width=40).splitlines()
    assert wrapped[0].startswith("- ") and all(line.startswith("  ") for line in wrapped[1:])
    assert not any(line.strip().startswith("20.") for line in wrapped)  # would open a numbered list
    code = "```\n" + "x " * 80 + "\n```"
    assert wrap_markdown(code, width=40) == code
    assert "99.5 %" in wrap_markdown("a " * 47 + "99.5 % b", width=100)  # a number keeps its unit


def test_the_lessons_example_is_written_once():
    assert evaluation.EXAMPLE_INPUT is lesson.EXAMPLE_INPUT  # the one the evaluation decodes
    assert lesson.EXAMPLE_OUTPUT == sorted(lesson.EXAMPLE_INPUT)

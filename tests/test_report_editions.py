"""The report's pages in two editions, reports/README.md and reports/APPENDIX.md and their Spanish
README.es.md and APPENDIX.es.md, and the length study's own (reports/study/), rendered from the
committed results: the same numbers in the same
order, each in its edition's way; each edition linking the other at the top; the same figures, each
drawn in its edition's language; every link into a page landing on one of its headings; in the
Spanish pages no English, no TeX and no configuration string; and the two catalogues the pages' words
come from saying the same keys with the same fields."""

import dataclasses
import difflib
import posixpath
import re
import string
from pathlib import Path

import pytest

from pipeline.infra.locale import KEPT as NO_PROSE
from pipeline.infra.locale import Writer, canonical
from pipeline.infra.markdown import heading_anchor
from pipeline.report.claims import evaluate, load_claims, written
from pipeline.report.context import report_context
from pipeline.report.pages import catalogue, render
from pipeline.report.quantities import quantities
from pipeline.report.report import environment, read_metrics
from pipeline.report.study.context import study_pages_context
from pipeline.report.study.lesson_claims import judged_claims
from pipeline.report.study.report import PAGES as STUDY_PAGES
from pipeline.report.study.report import TEMPLATES as STUDY_TEMPLATES
from pipeline.report.study.report import StudyPagesParams, read_study_metrics
from pipeline.stages.report import report_params
from pipeline.study.load import load_params
from pipeline.study.options import ATTENTION, POSITIONS
from pipeline.study.params import StudyDataParams, StudyModelParams, StudyTrainParams

ROOT = Path(__file__).resolve().parents[1]
# What holds no number of the page's to compare: beside what holds no prose (code, link targets,
# sections, versions), the lessons' words between «» and a claim's id.
KEPT = re.compile(NO_PROSE.pattern + r"|«[^»]*»|\b(?:l10|l6|paper)-[\w-]+", re.S)
FIGURE = re.compile(r"\]\((figures/[^)]+)\)")
LINK = re.compile(r"\]\(([\w./]*)#([^)]+)\)")  # a link to a heading: [text](PAGE.md#anchor) or (#anchor)
# a link or image to a file: (../x/y.md), (figures/a.png)
FILE_LINK = re.compile(r"\]\(([\w.][\w./-]*)(?:#[^)]*)?\)")
EDITIONS = {
    "README": ("README.md", "README.es.md"),
    "APPENDIX": ("APPENDIX.md", "APPENDIX.es.md"),
    "study/README": ("study/README.md", "study/README.es.md"),
    "study/APPENDIX": ("study/APPENDIX.md", "study/APPENDIX.es.md"),
}
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
    "study/README.md": [
        "# The length-generalisation study",
        "",
        "Versión en español: [README.es.md](README.es.md)",
    ],
    "study/README.es.md": ["# El estudio de largos", "", "English version: [README.md](README.md)"],
    "study/APPENDIX.md": [
        "# Appendix to the length-generalisation study",
        "",
        "Versión en español: [APPENDIX.es.md](APPENDIX.es.md)",
    ],
    "study/APPENDIX.es.md": [
        "# Apéndice del estudio de largos",
        "",
        "English version: [APPENDIX.md](APPENDIX.md)",
    ],
}
# English words (those Python, the YAML files and the stages write), not Spanish ones.
ENGLISH = re.compile(
    r"\b(?:seeds?|sequences?|each|bound|writes?|rounding|pass|cannot|loss|length|above|below|every|"
    r"exact|interval|terms|orders|nearest|about|thread|the|of|with|and|to|at|training|diverged|stopped|"
    r"steps|gates?|bar|none|from|on|in|by|is|are|sines|positions|learned|hand|sigmoid)\b"
)
# What a Spanish page may hold in English: code, the lessons' words, link targets, claim ids, and the
# references' titles (the papers' own).
ASIDE = re.compile(
    r"```.*?```|`[^`]*`|«[^»]*»|\]\([^)]*\)|\b(?:l10|l6|paper)-[\w-]+|^- [^:\n]+: \[[^\]]*\]\([^)]*\)|"
    r"English version: \[[^\]]*\]",
    re.S | re.M,
)


@pytest.fixture(scope="module")
def pages():
    """Every page, the lesson's by its name and the study's under study/."""
    whole = load_params(ROOT / "params.yaml")
    params = report_params(whole)
    m = read_metrics(ROOT / "metrics", params.train.seeds)
    claims = evaluate(load_claims(), quantities(params, m, m["benchmark"]), params)
    lesson = render(report_context(params, m, claims, environment(m["numerics"], m["device"])))
    study_params = StudyPagesParams(data=whole.data, train=whole.train, study=whole.study)
    s = read_study_metrics(ROOT / "metrics")
    context = study_pages_context(study_params, s, *judged_claims(study_params, s["tables"], s["search"]))
    study = render(context, STUDY_TEMPLATES, STUDY_PAGES)
    return lesson | {f"study/{page}": text for page, text in study.items()}


@pytest.fixture(scope="module", params=list(EDITIONS), ids=list(EDITIONS))
def editions(request, pages):
    """(English page name, Spanish page name, English text, Spanish text)."""
    english, spanish = EDITIONS[request.param]
    return english, spanish, pages[english], pages[spanish]


def number_differences(english, spanish, names=EDITIONS["README"]):
    """Where the two editions' numbers differ, one line each, with the numbers just before it to find
    the place by; none when both print the same numbers in the same order, each in its own way."""
    ours, theirs = canonical(english, "en", KEPT), canonical(spanish, "es", KEPT)
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
    spanish = "Entrenado con el largo 10, ordena el 98,2 % [97,2 %-99,2 %] de 10.000 secuencias."
    assert number_differences(english, spanish) == []
    assert number_differences(english, spanish.replace("99,2", "99,3")) == [
        "after 10 98.2 97.2: README.md has ['99.2'], README.es.md has ['99.3']"
    ]
    assert number_differences(english, spanish.replace(" 10.000", "")) != []  # a number left out
    assert number_differences(english, spanish.replace("98,2", "98.2")) != []  # an English number


def test_each_edition_links_the_other_at_the_top(pages):
    for page, top in TOPS.items():
        assert pages[page].splitlines()[:3] == top, page
    # each edition's count of every check links its own appendix's table of claims
    assert "[APPENDIX.md](APPENDIX.md#every-claim)" in pages["README.md"]
    assert "[APPENDIX.es.md](APPENDIX.es.md#cada-afirmación)" in pages["README.es.md"]


slug = heading_anchor  # the one the pages link with


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
        (
            page,
            posixpath.normpath(posixpath.join(posixpath.dirname(page), target)) if target else page,
            anchor,
        )
        for page, text in pages.items()
        for target, anchor in LINK.findall(text)
    ]
    assert any(target == "APPENDIX.es.md" for _, target, _ in links)
    assert any(page == "README.es.md" and target == "study/README.es.md" for page, target, _ in links)
    broken = [
        f"{page}: {target}#{anchor}" for page, target, anchor in links if anchor not in anchors(pages[target])
    ]
    assert not broken, f"links to no heading: {broken}"


def test_every_link_to_a_file_lands_on_one_in_the_repository(pages):
    """Pages live in reports/ and reports/study/: a link climbs out of them by its own ../ count."""
    broken = [
        f"{page}: {target}"
        for page, text in pages.items()
        for target in FILE_LINK.findall(text)
        if not (ROOT / "reports" / posixpath.dirname(page) / target).resolve().exists()
    ]
    assert not broken, f"links to no file: {broken}"


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


def test_both_editions_show_the_same_figures_each_in_its_language(editions):
    english, spanish = (FIGURE.findall(text) for text in editions[2:])
    assert english and all(f.startswith("figures/en/") for f in english)
    assert [f.replace("figures/en/", "figures/es/") for f in english] == spanish


@pytest.mark.parametrize("folder", ["reports/figures", "reports/study/figures"])
def test_every_figure_exists_in_both_languages(folder):
    drawn = {lang: sorted(p.name for p in (ROOT / folder / lang).glob("*.png")) for lang in ("en", "es")}
    assert drawn["en"] and drawn["en"] == drawn["es"]
    assert not list((ROOT / folder).glob("*.png"))  # none outside an edition


def spanish_prose(text):
    return KEPT.sub(" ", ASIDE.sub(" ", text))


# A number written the English way (0.579, 1.47): a decimal point that is no Spanish point between
# thousands (12.704, 768.000, 1.048.576).
ENGLISH_NUMBER = re.compile(r"(?<![\w.,])(?!\d{2,3}(?:\.\d{3})+(?![\w.]\d)|\d(?:\.\d{3}){2,})\d+\.\d+")


@pytest.mark.parametrize("page", [spanish for _, spanish in EDITIONS.values()])
def test_the_spanish_pages_hold_no_english_tex_or_configuration(pages, page):
    """Claims' texts, results and verdicts, the search's reasons and the recipes come from Python and
    YAML in English; the Spanish catalogue words them, and the lessons' TeX is written as text."""
    prose = spanish_prose(pages[page])
    english = sorted(set(ENGLISH.findall(prose)))
    assert not english, f"English left in {page}: {english}"
    assert not re.findall(r"\$|\\[a-zA-Z]", prose), f"TeX left in {page}"  # "\*" is Markdown's
    config = sorted(set(re.findall(r"\b\w+=\S+|\b[a-z_]+/[a-z_]+/[a-z_]+\b", prose)))
    assert not config, f"configuration strings in {page}'s prose: {config}"
    english_numbers = sorted(set(ENGLISH_NUMBER.findall(prose)))
    assert not english_numbers, f"numbers written the English way in {page}: {english_numbers}"


def test_the_spanish_check_finds_english():
    assert ENGLISH.findall(spanish_prose("la semilla 0 at the bar, `the code`")) == ["at", "the", "bar"]
    assert re.findall(r"\b\w+=\S+", spanish_prose("con steps=12000 y `steps=12000`")) == ["steps=12000"]
    numbers = "0.579 y 0,579; 12.704 y 768.000 y 1.048.576; 1.47 veces; sección 3.4"
    assert ENGLISH_NUMBER.findall(spanish_prose(numbers)) == ["0.579", "1.47"]


def test_every_setting_a_variant_can_set_has_words_in_both_editions():
    """A study variant or a search row is written in words (pages.py's `changes`): every position
    scheme, attention and value a variant may set has them, in each edition."""
    words = {lang: catalogue(lang) for lang in ("en", "es")}
    settable = {
        f.name for c in (StudyModelParams, StudyTrainParams, StudyDataParams) for f in dataclasses.fields(c)
    }
    for lang in ("en", "es"):
        recipe = words[lang]["recipe"]
        assert set(POSITIONS) <= set(recipe["positions"]) and set(ATTENTION) <= set(recipe["attention"])
        assert settable - {"positions", "attention"} <= set(recipe["settings"]), lang


# Tables that are not keys the templates say: results (claims.py's, by their English pattern) and
# what the Spanish pages take from English sources (claims.yaml, search.yaml)
NOT_SAID = {"results", "claims", "reasons", "search", "lesson_errors", "test_whys"}


def fields(message):
    """A message's fields with their formats, in order: ("seeds", ""), ("mean", ".1%"), ..."""
    return [(name, spec) for _, name, spec, _ in string.Formatter().parse(message) if name is not None]


def differences(english, spanish, where=""):
    """Where the two catalogues differ in what they say: a key only one has, or a message whose fields
    or formats differ (the Spanish words may order named fields as they need)."""
    if isinstance(english, dict):
        keys = (set(english) | set(spanish)) - (NOT_SAID if not where else set())
        return [d for k in sorted(keys) for d in differences(english.get(k), spanish.get(k), f"{where}.{k}")]
    if isinstance(english, list) and isinstance(spanish, list) and len(english) == len(spanish):
        return []
    if isinstance(english, str) and isinstance(spanish, str):
        return [] if sorted(fields(english)) == sorted(fields(spanish)) else [f"{where}: fields differ"]
    return [f"{where}: {type(english).__name__} in en, {type(spanish).__name__} in es"]


def test_both_catalogues_say_every_key_with_the_same_fields():
    """Every key a template says has words in both languages, with the same fields in the same
    formats: each edition writes the same numbers to the same precision, each its own way."""
    english, spanish = catalogue("en"), catalogue("es")
    assert differences(english, spanish) == []
    assert differences({"a": "{n:,} steps"}, {"a": "{n} pasos"}) == [".a: fields differ"]
    assert differences({"a": {"b": "x"}}, {"a": {}}) == [".a.b: str in en, NoneType in es"]


def test_every_result_has_spanish_words_with_its_fields_in_order():
    """claims.py's results keep their numbers: the Spanish pattern of each has its fields, in order."""
    for english, spanish in catalogue("es")["results"].items():
        assert fields(english) == fields(spanish), english


def test_every_value_a_claim_expects_has_spanish_words():
    """claims.yaml's expected values in words are written in Spanish too, whether or not ours match
    them: a run whose values differ (another configuration) still renders its Spanish pages."""
    spanish = Writer("es", catalogue("es")["results"])
    for entry in load_claims():
        if entry["rule"] != "seeds" and not isinstance(entry["rule"], dict):  # those print it as a number
            spanish.write(written(entry["expected"], words=True))  # a KeyError names what has no words

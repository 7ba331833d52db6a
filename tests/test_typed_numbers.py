"""No number is typed into a page's words where the results should fill it in.

The pages' prose comes from their templates and the word catalogues (pipeline/report/words/*.yaml,
pipeline/report/figure_words.yaml); a measured or configured number belongs in a field (`{reach}`,
`{steps:,}`), filled as the page is written. A number written into the words themselves is allowed
only where it cannot change with a run: the lessons' own numbers (every number in claims.yaml's quoted
words and expected values), section and lesson numbers, the reference list's years, the digits and
small counts 0-10 (the task's alphabet and the trained lengths' range), and the few constants of the
rules, each named below with why. Every other number is typed by hand: the test fails on it, naming
the key. The paper's and the lessons' constants named in the code count as theirs.
"""

import re
from pathlib import Path

import yaml

from pipeline.infra.locale import canonical
from pipeline.params.lesson import LESSON_LENGTH, LESSON_TEST_SIZE

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "pipeline/report"
CATALOGUES = {"en": REPORT / "words/en.yaml", "es": REPORT / "words/es.yaml"}
FIGURE_WORDS = REPORT / "figure_words.yaml"
TEMPLATES = [*REPORT.glob("templates/*.j2"), *REPORT.glob("study/templates/*.j2")]
CLAIMS = [REPORT / "claims.yaml", REPORT / "study/claims.yaml"]

# Tables the catalogues take from English sources that tests/test_claims.py already holds to the
# lessons (claim texts, results' patterns, notes' reasons, the search's rows): not the pages' own words.
FROM_SOURCES = {"results", "claims", "reasons", "search", "lesson_errors", "test_whys", "slips"}
CITATIONS = {"references_list"}  # authors and years

RULE_CONSTANTS = {
    "1.96": "the normal distribution's 97.5 % point, in the prediction interval",
    "97.5": "Student's t point the interval takes",
    "95": "the interval's level",
    "1.44": "bits in a nat, 1/ln 2",
    "0.15": "the rounding rule's example",
    "0.2": "the rounding rule's example",
    "512": "the paper's d_model",
    "2048": "the paper's d_ff",
    "37000": "the paper's shared vocabulary",
    str(LESSON_TEST_SIZE): "the lesson's test set (its «datos(1000, ...)»)",
    str(2 * LESSON_TEST_SIZE): "the lesson's two test sets of its length together",
    str(LESSON_LENGTH): "the lesson's length",
}
SMALL = {str(n) for n in range(11)}  # the digits, and the lengths 1-10 the study trains on


FIELD = re.compile(r"\{[^{}]*\}")  # a field the page fills
CITED = re.compile(r",\s*(?:19|20)\d\d\)")  # a citation's year: (Awasthi and Gupta, 2023)
NAMED = re.compile(r"\b(?:sections?|secci[oó]n(?:es)?|lessons?|lecci[oó]n(?:es)?)\s+\d+(?:\.\d+)*", re.I)
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)


def strings(node, path=()):
    """(key path, text) of every string in a catalogue, nested keys joined."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from strings(value, (*path, str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from strings(value, (*path, str(i)))
    elif isinstance(node, str):
        yield ".".join(path), node


def numbers_in(text, lang):
    """The numbers of `text`'s prose, each in one spelling: fields, code, links and named sections
    and lessons left out."""
    prose = CITED.sub(")", NAMED.sub(" ", FIELD.sub(" ", text)))
    return canonical(prose, lang)


def lesson_numbers():
    """Every number the lessons state, as claims.yaml quotes them (their words) and states them."""
    found = set()
    for path in CLAIMS:
        for entry in yaml.safe_load(path.read_text()):
            found |= set(canonical(str(entry.get("words", "")), "en"))
            found |= set(canonical(str(entry.get("words", "")), "es"))
            found |= set(canonical(str(entry.get("expected", "")), "en"))
    return found


def typed_numbers():
    """{number: [where, ...]} of every number typed into the pages' words or templates."""
    found = {}
    sources = [(lang, yaml.safe_load(p.read_text())) for lang, p in CATALOGUES.items()]
    figure = yaml.safe_load(FIGURE_WORDS.read_text())
    sources += [(lang, figure[lang]) for lang in CATALOGUES if lang in figure]
    for lang, catalogue in sources:
        for key, text in strings(catalogue):
            parts = key.split(".")
            if parts[0] in FROM_SOURCES or parts[-1] in CITATIONS or parts[-2:-1] == ["references_list"]:
                continue
            for n in numbers_in(text, lang):
                found.setdefault(n, []).append(f"{lang}:{key}")
    for template in TEMPLATES:
        for n in canonical(JINJA.sub(" ", template.read_text()), "en"):
            found.setdefault(n, []).append(template.name)
    return found


def test_no_page_types_a_number_the_results_should_fill_in():
    allowed = lesson_numbers() | SMALL | set(RULE_CONSTANTS)
    found = typed_numbers()
    typed = {n: where for n, where in found.items() if n not in allowed}
    typed = {n: where[:3] for n, where in typed.items()}
    assert not typed, f"numbers typed into the pages' words: fill them from the results: {typed}"


def test_the_check_reads_a_typed_number_and_leaves_a_field_alone():
    assert numbers_in("every length 1-{longest}, {steps:,} steps", "en") == ["1"]
    assert numbers_in("lengths 1-40 at 8,000 steps (section 3.2.2, lesson 10)", "en") == ["1", "40", "8000"]
    assert numbers_in("8000 pasos, 12.000 pasos, 0,579", "es") == ["8000", "12000", "0.579"]
    assert "0.579" in lesson_numbers() and "99.5" in lesson_numbers()


def test_no_catalogue_line_is_indented_past_its_text():
    """In a folded string (>-) a line indented deeper than the rest keeps its own line break, so the
    page's paragraph is cut there: every continuation line sits at the text's own indent."""
    for path in CATALOGUES.values():
        deep = [n for n, line in enumerate(path.read_text().splitlines(), 1) if re.match(r" {8}\S", line)]
        assert not deep, f"{path.name}: lines {deep} indented past their text"

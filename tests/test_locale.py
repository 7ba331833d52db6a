"""Numbers as each language writes them: Spanish's decimal comma, its point between groups of
thousands from five digits on, its powers of ten; what is not prose left alone (the report's pages
keep the lessons' words and claim ids as well); and both languages read back to one spelling, so
that a test can hold two texts to the same numbers."""

import pytest

from pipeline.infra.locale import canonical, localize, number, percent
from pipeline.report.pages import KEPT


@pytest.mark.parametrize(
    "english, spanish",
    [
        ("0.579", "0,579"),
        ("99.5 %", "99,5 %"),
        ("10,000 secuencias", "10.000 secuencias"),
        ("12704 parámetros", "12.704 parámetros"),
        ("1,200 pasos", "1200 pasos"),  # four digits stay whole, as the lesson's «1200 pasos»
        ("1,988 de 2,000", "1988 de 2000"),
        ("2.0e-14", "2,0 × 10⁻¹⁴"),
        ("5.182e-07", "5,182 × 10⁻⁷"),
        ("-8.0 y +25.63", "-8,0 y +25,63"),
        ("[97.2 %-99.2 %]", "[97,2 %-99,2 %]"),
        ("1 - 0.9¹⁰", "1 - 0,9¹⁰"),
    ],
)
def test_spanish_numbers_are_the_lessons(english, spanish):
    assert localize(english, "es") == spanish
    assert localize(english, "en") == english
    assert canonical(spanish, "es") == canonical(english, "en")


@pytest.mark.parametrize(
    "kept",
    [
        "`steps=12000`",  # code
        "[metrics/search.json](../metrics/search.json)",  # a link's target is a path
        "«paso 1200: pérdida 0.579»",  # the lesson's own words
        "sección 3.4",
        "torch 2.13.0",
        "l10-length-12-seq",  # a claim id
        "float64 x86",  # digits inside a name
    ],
)
def test_what_is_not_prose_is_left_alone(kept):
    assert localize(kept, "es", KEPT) == kept


def test_a_link_keeps_its_target_and_localizes_its_text():
    assert localize("[0.5 %](figures/es/loss.png)", "es") == "[0,5 %](figures/es/loss.png)"


def test_one_number_for_a_figure():
    assert number(40745.0, 0, "es") == "40.745" and number(40745.0, 0, "en") == "40,745"
    assert number(0.5, 2, "es") == "0,50"
    assert percent(0.9841, 1, "es") == "98,4 %" and percent(0.9841, 1, "en") == "98.4 %"


def test_both_editions_read_back_to_the_same_numbers_in_order():
    english = "It sorts 98.2 % [97.2 %-99.2 %] of 10,000 sequences at 1.47x, 2.0e-14."
    spanish = localize(english, "es")
    assert canonical(english, "en") == canonical(spanish, "es") == [
        "98.2", "97.2", "99.2", "10000", "1.47", "2.0e-14"
    ]  # fmt: skip
    assert canonical(spanish.replace("99,2", "99,3"), "es") != canonical(english, "en")


def test_a_spanish_number_is_no_version():
    assert canonical("2.097.152 pesos, torch 2.13.0", "es") == ["2097152"]

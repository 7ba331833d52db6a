"""Numbers as each language writes them, formatted when they are written: English as Python writes
it; Spanish as the lessons do, its decimal comma, its point between groups of thousands from five
digits on, its powers of ten; fields filled in a language's way, results (phrases) kept with their
numbers and written in a language's words; and both languages read back to one spelling, so that a
test can hold two texts to the same numbers."""

import pytest

from pipeline.infra.locale import Phrase, Writer, canonical, joined, number, percent


@pytest.mark.parametrize(
    "value, spec, english, spanish",
    [
        (0.579, ".3f", "0.579", "0,579"),
        (0.995, ".1%", "99.5 %", "99,5 %"),  # a percentage as the lessons write one, with a space
        (10000, ",", "10,000", "10.000"),
        (12704, "", "12704", "12.704"),  # five digits take a point in Spanish, asked for or not
        (1200, ",", "1,200", "1200"),  # four digits stay whole, as the lesson's «1200 pasos»
        (2000, "", "2000", "2000"),
        (2097152, "", "2097152", "2.097.152"),
        (2e-14, ".1e", "2.0e-14", "2,0 × 10⁻¹⁴"),
        (5.182e-07, ".3e", "5.182e-07", "5,182 × 10⁻⁷"),
        (2.6e9, ".1e", "2.6e+09", "2,6 × 10⁹"),
        (1e-9, "", "1e-09", "1 × 10⁻⁹"),
        (-8.0, "", "-8.0", "-8,0"),
        (25.81, "+.2f", "+25.81", "+25,81"),
        (0.1, "g", "0.1", "0,1"),
        (12345.678, ",.2f", "12,345.68", "12.345,68"),
    ],
)
def test_spanish_numbers_are_the_lessons(value, spec, english, spanish):
    assert number(value, spec, "en") == english
    assert number(value, spec, "es") == spanish
    assert canonical(spanish, "es") == canonical(english, "en")


def test_what_is_no_number_is_written_as_python_writes_it():
    assert number(float("nan"), ".2f", "es") == "nan" and number(True, "", "es") == "True"
    assert number("texto", "", "es") == "texto"


def test_a_percentage():
    assert percent(0.9841, 1, "es") == "98,4 %" and percent(0.9841, 1, "en") == "98.4 %"
    assert percent(0.99, 0, "es") == "99 %"


def test_a_message_is_filled_in_its_language():
    message = "{steps:,} pasos, {share:.1%}, dropout {dropout}, semilla {seed}"
    assert (
        Writer("es").format(message, steps=12000, share=0.982, dropout=0.1, seed="0")
        == "12.000 pasos, 98,2 %, dropout 0,1, semilla 0"
    )
    assert Writer("en").format("{steps:,} steps", steps=12000) == "12,000 steps"


def test_a_phrase_is_english_text_that_keeps_its_numbers():
    pattern = "{:.1f} % (seeds {:.1f}–{:.1f}, {:,} sequences each)"
    shown = Phrase(pattern, 98.14, 96.7, 98.94, 10000)
    assert shown == "98.1 % (seeds 96.7–98.9, 10,000 sequences each)"  # a str, as claims.csv writes it
    spanish = {pattern: "{:.1f} % (semillas {:.1f}–{:.1f}, {:,} secuencias cada una)"}
    assert Writer("es", spanish).write(shown) == "98,1 % (semillas 96,7–98,9, 10.000 secuencias cada una)"
    parts = joined("; ", [Phrase("{}: {:.1f} %", 2, 10.12), Phrase("{}: {:.1f} %", 3, 0.6)])
    assert parts == "2: 10.1 %; 3: 0.6 %" and Writer("es").write(parts) == "2: 10,1 %; 3: 0,6 %"


def test_a_phrase_without_words_in_a_language_is_an_error_not_english():
    with pytest.raises(KeyError, match="no es words for the phrase 'fails'"):
        Writer("es").write(Phrase("fails"))
    assert Writer("en").write(Phrase("fails")) == "fails"
    assert Writer("es").write(Phrase("({}, {})", 0.9, 0.98)) == "(0,9, 0,98)"  # no words to translate


def test_both_editions_read_back_to_the_same_numbers_in_order():
    english = "It sorts 98.2 % [97.2 %-99.2 %] of 10,000 sequences at 1.47x, 2.0e-14."
    spanish = "Ordena el 98,2 % [97,2 %-99,2 %] de 10.000 secuencias a 1,47x, 2,0 × 10⁻¹⁴."
    assert canonical(english, "en") == canonical(spanish, "es") == [
        "98.2", "97.2", "99.2", "10000", "1.47", "2.0e-14"
    ]  # fmt: skip
    assert canonical(spanish.replace("99,2", "99,3"), "es") != canonical(english, "en")


def test_what_holds_no_prose_is_not_read():
    text = "`steps=12000` [x](../metrics/1.2.json) sección 3.4, torch 2.13.0 y 7"
    assert canonical(text, "es") == ["7"]


def test_a_spanish_number_is_no_version():
    assert canonical("2.097.152 pesos, torch 2.13.0", "es") == ["2097152"]


@pytest.mark.parametrize(
    "value, spec, english, spanish",
    [
        (0.15, ".1f", "0.2", "0,2"),  # binary 0.1499...: Python's format writes 0.1
        (2.5, ".0f", "3", "3"),  # half to even would write 2
        (0.0015, ".1%", "0.2 %", "0,2 %"),  # a share's hundredfold without float dust
        (0.005, ".0%", "1 %", "1 %"),
        ((0.94 + 0.61) / 2, ".0%", "78 %", "78 %"),  # 0.7749999999999999 in binary: a measured 0.775
        (12345.5, ",.0f", "12,346", "12.346"),
        (-0.25, ".1f", "-0.3", "-0,3"),  # away from zero on either side
        (5.182e-7, ".3e", "5.182e-07", "5,182 × 10⁻⁷"),  # not fixed-point: Python's own
    ],
)
def test_a_number_rounds_half_away_from_zero_as_a_reader_rounds(value, spec, english, spanish):
    assert number(value, spec, "en") == english and number(value, spec, "es") == spanish
    assert Phrase("{:" + spec + "}", value) == english

"""Numbers as each language writes them, formatted when they are written.

`number(value, spec, lang)` rounds a fixed-point spec (".1f", ",.0f", a percentage's) half away from
zero on the value's shortest decimal spelling, as a reader rounds by hand (0.15 to one decimal is
0.2, 0.5 to none is 1; Python's `format` rounds the binary value half to even, 0.1 and 0), and any
other spec as `format(value, spec)` does; it spells the result in the language's way: English as
Python writes it (0.579, 99.5, 10,000 where the spec asks for groups, 5.182e-07); another language
with its CLDR symbols from Babel: Spanish's decimal comma (0,579), its point between groups of
thousands from five digits on (12.704, 10.000; 1200 and 2000 stay whole, as the lesson's «1200
pasos»: CLDR's minimum grouping digits, which Babel leaves out) and powers of ten with superscripts
(5,182 × 10⁻⁷). `Writer` fills a message's fields that way, and writes a `Phrase` (text that keeps
its numbers as numbers) in the language's words. `canonical` reads a number of either language back
to one spelling, so that a test can hold two texts to the same numbers."""

import math
import numbers
import re
import string
from decimal import ROUND_HALF_UP, Decimal

from babel import Locale
from babel.numbers import format_decimal

SUPERSCRIPT = str.maketrans("-+0123456789", "⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹")
FROM_SUPERSCRIPT = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")
MIN_GROUPING = {"es": 2}  # CLDR's minimumGroupingDigits where it is not 1: groups from 10.000 on


def is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


FIXED = re.compile(r",?\.(\d+)f")  # a fixed-point spec: grouping, then the decimals


SIGNIFICANT = 12  # a float's digits read as measured; beyond them lies arithmetic's last-bit dust


def decimal_of(value):
    """The decimal a float stands for: to SIGNIFICANT digits, so that the dust of the arithmetic that
    made it (the mean of 0.94 and 0.61 is 0.7749999999999999 in binary) is not read as measured."""
    return value if isinstance(value, Decimal) else Decimal(f"{float(value):.{SIGNIFICANT}g}")


def rounded(value, spec):
    """`format(value, spec)`, but a fixed-point spec rounds half away from zero on the decimal `value`
    stands for (`decimal_of`: a float to SIGNIFICANT digits, or a Decimal already exact)."""
    fixed = FIXED.fullmatch(spec)
    if not fixed:
        return format(value, spec)
    exact = decimal_of(value)
    return format(exact.quantize(Decimal(1).scaleb(-int(fixed.group(1))), rounding=ROUND_HALF_UP), spec)


def number(value, spec="", lang="en"):
    """`value` as `format(value, spec)` writes it (a fixed-point spec rounded as a reader rounds:
    `rounded`), in `lang`'s way; what is not a finite number as is. A percentage (a spec ending in
    %) is written as the lessons write one, with a space: 98.4 %."""
    exact = isinstance(value, Decimal)
    if not (exact or is_number(value)) or not (exact or math.isfinite(value)):
        return format(value, spec)
    if spec.endswith("%"):
        hundredfold = decimal_of(value) * 100  # no float dust: 0.0015 is 0.15
        return f"{number(hundredfold, spec[:-1] + 'f', lang)} %"
    if lang == "en":
        return rounded(value, spec)
    digits, _, power = rounded(value, spec.replace(",", "")).partition("e")
    sign, digits = ("", digits) if digits[0].isdigit() else (digits[0], digits[1:])
    whole, _, decimals = digits.partition(".")
    grouped = len(whole) >= 3 + MIN_GROUPING.get(lang, 1)
    pattern = "#,##0" + ("." + "0" * len(decimals) if decimals else "")
    text = sign + format_decimal(Decimal(digits), pattern, locale=lang, group_separator=grouped)
    if power:
        times = Locale.parse(lang).number_symbols["latn"]["superscriptingExponent"]
        text += f" {times} 10{str(int(power)).translate(SUPERSCRIPT)}"
    return text


def percent(fraction, decimals=1, lang="en"):
    """A fraction as a percentage: 0.9841 -> "98.4 %" / "98,4 %"."""
    return number(fraction, f".{decimals}%", lang)


class Phrase(str):
    """Text that keeps its numbers as numbers: the English text `pattern.format(*args, **kwargs)`
    writes (what a str reads, what claims.csv holds), and its pattern and values, which a `Writer`
    writes again in another language's words and numbers."""

    def __new__(cls, pattern, *args, **kwargs):
        phrase = super().__new__(cls, Writer("en").format(pattern, *args, **kwargs))
        phrase.pattern, phrase.args, phrase.kwargs = pattern, args, kwargs
        return phrase


def joined(separator, items):
    """Values (phrases, numbers, words) joined by `separator`: a Phrase, each written in its language."""
    return Phrase(separator.join(["{}"] * len(items)), *items)


class Writer(string.Formatter):
    """`str.format` in one language: every number in its fields written the language's way (`number`,
    with the field's spec), every `Phrase` in its words: `patterns` maps a phrase's English pattern to
    the language's; one with words that `patterns` lacks is an error, never English in another
    language's text (English keeps its own)."""

    def __init__(self, lang, patterns=None):
        super().__init__()
        self.lang, self.patterns = lang, patterns or {}

    def format_field(self, value, spec):
        if isinstance(value, Phrase):
            return self.vformat(self.pattern(value.pattern), value.args, value.kwargs)
        if is_number(value) or isinstance(value, Decimal):
            return number(value, spec, self.lang)
        return super().format_field(value, spec)

    def pattern(self, english):
        worded = any(c.isalpha() for literal, *_ in self.parse(english) for c in literal)
        if english not in self.patterns and worded and self.lang != "en":
            raise KeyError(f"no {self.lang} words for the phrase {english!r}")
        return self.patterns.get(english, english)

    def write(self, value):
        """One value (a number, a Phrase, any other) as this language writes it."""
        return self.format_field(value, "")


# Reading numbers back, for `canonical`. An English number: 12, 0.579, 10,000, 4,288.5, 5.182e-07,
# 2e-3, a ratio's 1.47x; not digits inside a name (l10, float64, x86), a version (2.13.0) or a
# section (3.2.2).
ENGLISH = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:e([-+]?\d+))?(?![\w.]\d|[^\Wx⁰¹²³⁴⁵⁶⁷⁸⁹]|x\w)"
)
# A Spanish number: 12, 0,579, 10.000, 5,182 × 10⁻⁷.
SPANISH = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:\.\d{3})+|\d+)(,\d+)?(?: × 10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
    r"(?![\w,]\d|[^\Wx⁰¹²³⁴⁵⁶⁷⁸⁹]|x\w)"
)
# What is no prose, and holds no number to compare: fenced code, inline code, a link's target, a
# section's number, a version (2.13.0; not 2.097.152, a Spanish number).
KEPT = re.compile(
    r"```.*?```|`[^`\n]*`|\]\([^)]*\)|\b(?:secci[oó]n(?:es)?|section)s? [\d.]+(?:-[\d.]+)?"
    r"|\b(?!\d{1,3}(?:\.\d{3})+\b)\d+\.\d+\.\d+\b",
    re.S,
)


def canonical(text, lang, keep=KEPT):
    """Every number of `text`'s prose as one spelling (digits, a decimal point, e<power>), in order;
    what `keep` matches is left out."""
    text = keep.sub(" ", text)
    if lang == "en":
        return [
            m.group(1).replace(",", "") + (m.group(2) or "") + (f"e{int(m.group(3))}" if m.group(3) else "")
            for m in ENGLISH.finditer(text)
        ]
    found = []
    for m in SPANISH.finditer(text):
        whole, decimals, power = m.groups()
        value = whole.replace(".", "") + ("." + decimals[1:] if decimals else "")
        found.append(value + (f"e{int(power.translate(FROM_SUPERSCRIPT))}" if power else ""))
    return found

"""Numbers as each language writes them, in text that English wrote.

Python writes numbers the English way (0.579, 99.5 %, 10,000, 5.182e-07); English text keeps them.
Spanish writes them as the lessons do: a decimal comma (0,579; 99,5 %), a point between groups of
thousands from five digits on (12.704, 10.000; 1200 and 2000 stay whole, as the lesson's «1200
pasos»), and powers of ten with superscripts (5,182 × 10⁻⁷). `localize` turns a text's English numbers
into a language's, leaving alone what is not prose (`KEPT`: code, a link's target, section numbers
such as sección 3.4, versions such as torch 2.13.0; a caller passes its own pattern to keep more).
`number` writes one number; `canonical` reads a number of either language back to one spelling, so
that a test can hold two texts to the same numbers.
"""

import re

# An English number: 12, 0.579, 10,000, 4,288.5, 5.182e-07, 2e-3, a ratio's 1.47x; not digits inside
# a name (l10, float64, x86), a version (2.13.0) or a section (3.2.2).
ENGLISH = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:e([-+]?\d+))?(?![\w.]\d|[^\Wx⁰¹²³⁴⁵⁶⁷⁸⁹]|x\w)"
)
# What a text keeps as it is: fenced code, inline code, a link's target, a section's number, a version
# (2.13.0; not 2.097.152, a Spanish number).
KEPT = re.compile(
    r"```.*?```|`[^`\n]*`|\]\([^)]*\)|\b(?:secci[oó]n(?:es)?|section)s? [\d.]+(?:-[\d.]+)?"
    r"|\b(?!\d{1,3}(?:\.\d{3})+\b)\d+\.\d+\.\d+\b",
    re.S,
)
SUPERSCRIPT = str.maketrans("-+0123456789", "⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹")
FROM_SUPERSCRIPT = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")


def grouped(digits, lang):
    """An integer's digits with its language's thousands: 10,000 / 10.000; 1,200 / 1200."""
    if lang == "en":
        return f"{int(digits):,}"
    if len(digits) < 5:
        return digits
    return f"{int(digits):,}".replace(",", ".")


def spanish(whole, decimals, exponent):
    """One English number's parts (as ENGLISH matches them) as Spanish writes the number."""
    digits = whole.replace(",", "")
    text = grouped(digits, "es") if "," in whole or len(digits) >= 5 else digits
    if decimals:
        text += "," + decimals[1:]
    if exponent is not None:
        power = str(int(exponent)).translate(SUPERSCRIPT)
        text = f"{text} × 10{power}"
    return text


def localize(text, lang, keep=KEPT):
    """`text` (Markdown, or a figure's words) with its numbers in `lang`'s way, what `keep` matches
    left as it is; English as is."""
    if lang == "en":
        return text
    out, last = [], 0
    for kept in keep.finditer(text):
        out.append(ENGLISH.sub(lambda m: spanish(*m.groups()), text[last : kept.start()]))
        out.append(kept.group(0))
        last = kept.end()
    out.append(ENGLISH.sub(lambda m: spanish(*m.groups()), text[last:]))
    return "".join(out)


def number(value, decimals, lang):
    """One number with `decimals` places, in `lang`'s way."""
    return localize(f"{value:,.{decimals}f}", lang)


def percent(fraction, decimals=1, lang="en"):
    """A fraction as a percentage: 0.9841 -> "98.4 %" / "98,4 %"."""
    return localize(f"{100 * fraction:.{decimals}f} %", lang)


# A number as either language writes it, for `canonical`.
SPANISH = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:\.\d{3})+|\d+)(,\d+)?(?: × 10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
    r"(?![\w,]\d|[^\Wx⁰¹²³⁴⁵⁶⁷⁸⁹]|x\w)"
)


def canonical(text, lang, keep=KEPT):
    """Every number of `text`'s prose as one spelling (digits, a decimal point, e<power>), in order;
    what `localize` leaves alone (`keep`) is left out."""
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

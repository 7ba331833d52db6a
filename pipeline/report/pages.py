"""The report's pages: reports/README.md and APPENDIX.md and their Spanish editions README.es.md and
APPENDIX.es.md, from templates/*.md.j2: the templates write the sentences, pipeline/report/context.py
gives them the numbers, words.yaml the words Python and the YAML files put into them, per language;
and the Markdown helpers they share: long prose lines wrapped for reading, table cells made safe.
Same inputs, same bytes."""

import re
import statistics
from pathlib import Path

import jinja2
import yaml

from pipeline.infra import locale
from pipeline.infra.errors import DataError

WIDTH = 100
# What a page keeps as the lessons or the code wrote it, beside what any text keeps (locale.KEPT): the
# lessons' words between «» and a claim's id.
KEPT = re.compile(locale.KEPT.pattern + r"|«[^»]*»|\b(?:l10|l6|paper)-[\w-]+", re.S)
# Lines kept as they are: tables, headings, images, HTML, indented code.
KEEP = ("|", "#", "![", "<", "    ")
LIST_ITEM = re.compile(r"(?:[-*+]|\d+[.)]) ")


def starts_markup(word):
    """Whether a word at the start of a line would turn that line into a list item, a heading, a
    quote, a table row, a rule or a fence: such a word stays on the line before."""
    return bool(re.fullmatch(r"[-*+=_]+|\d+[.)]", word)) or word.startswith(("#", ">", "|", "```"))


def words_of(text):
    """The words of a paragraph; a lone "%" stays with its number, "±" with the number after it and "×"
    with both, so that "99.5 %", "[0.6 %-30.3 %]", "± 0.2" and "5,182 × 10⁻⁷" never split across lines."""
    return re.split(r"(?<![±×])\s+(?!%(?:[\s:;,.)\]-]|$)|×)", text.strip())


def wrap_line(text, width, first="", rest=""):
    """Greedy wrap of one paragraph: the first line starts with `first`, the others with `rest`."""
    lines, words, indent = [], [], first
    for word in words_of(text):
        if words and len(indent + " ".join([*words, word])) > width:
            if not starts_markup(word):
                lines.append(indent + " ".join(words))
                words, indent = [], rest
            elif len(words) > 1:  # a word that would start markup takes the word before it along
                carry = words.pop()
                lines.append(indent + " ".join(words))
                words, indent = [carry], rest
        words.append(word)
    return [*lines, indent + " ".join(words)]


def wrap_markdown(text, width=WIDTH):
    """Wrap every paragraph and list item longer than `width`; code blocks and tables stay as they are."""
    out, fenced = [], False
    for line in text.split("\n"):
        fence = line.startswith("```")
        fenced = fenced != fence  # a fence line opens or closes a block
        if fence or fenced or len(line) <= width or line.startswith(KEEP):
            out.append(line)
            continue
        item = LIST_ITEM.match(line)
        prefix = item.group(0) if item else ""
        out += wrap_line(line[len(prefix) :], width, first=prefix, rest=" " * len(prefix))
    return "\n".join(out)


def cell(value):
    """A value as a Markdown table cell: a "|" would end the cell, so it becomes "/"."""
    return str(value).replace("|", "/")


# The lesson's TeX as plain text: the few commands its quoted words hold.
TEX = [
    (r"\\text\{([^}]*)\}", r"\1"),
    (r"\\times", "×"),
    (r"\\quad", " "),
    (r"\\,", " "),  # a thin space between groups of digits
    (r"\\varphi", "φ"),
    (r"_\{\\text\{([^}]*)\}\}", r"_\1"),
    (r"_\{([^}]*)\}", r"_\1"),
]
SUPERSCRIPTS = locale.SUPERSCRIPT | str.maketrans("N", "ᴺ")  # the digits as the Spanish numbers write them


def tex_text(words):
    """The lesson's words with its TeX written as text: `$5.182 \\times 10^{-7}$` -> 5.182 × 10⁻⁷,
    `d_{\\text{model}}` -> d_model, `2^{N}` -> 2ᴺ; the dollars that open and close math dropped."""
    for pattern, replacement in TEX:
        words = re.sub(pattern, replacement, words)
    words = re.sub(
        r"\^\{([-0-9N]+)\}|\^([0-9N])", lambda m: (m.group(1) or m.group(2)).translate(SUPERSCRIPTS), words
    )
    return re.sub(r"\s+", " ", words.replace("$", "")).strip()


def quoted(words):
    """The lesson's words as a table cell, between «», its TeX written as text."""
    if not words:
        return ""
    return f"«{cell(tex_text(words))}»"


def ours(claim):
    """A trained claim's seeds as the first table shows them, mean [min–max]; any other its result."""
    values = claim.per_seed
    if not values:
        return claim.reproduced
    scale, digits, unit = (100, 1, " %") if claim.percent else (1, 3, "")
    mean, low, high = (scale * v for v in (statistics.fmean(values), min(values), max(values)))
    return f"{mean:.{digits}f}{unit} [{low:.{digits}f}–{high:.{digits}f}]"


# ------------------------------------------------------------------------------------- pages

TEMPLATES = Path(__file__).parent / "templates"
WORDS = Path(__file__).with_name("words.yaml")
PAGES = {"README.md": "en", "README.es.md": "es", "APPENDIX.md": "en", "APPENDIX.es.md": "es"}  # language


@jinja2.pass_context
def verdict(context, claim):
    """A claim's status as the report shows it, in the page's language."""
    return context["words"]["verdict"]["undecided" if claim.undecided else claim.status]


@jinja2.pass_context
def stated(context, english, table, key):
    """English from claims.yaml or search.yaml (a claim's text, a note's reason, why a search row was
    tried) in the page's language: words.yaml's `table` text for `key` where the language has that
    table (then one missing is an error, not English in a Spanish page), else the English."""
    texts = context["words"].get(table, {key: english})
    if key not in texts:
        raise DataError(f"{WORDS.name}: no {table} text for {key}, which {context.name} shows")
    return texts[key]


@jinja2.pass_context
def translated(context, text):
    """Words pipeline/report/claims.py writes in English into a result, in the page's language."""
    for pattern, replacement in context["words"].get("phrases", []):
        text = re.sub(pattern, replacement, text)
    return text


def attention_named(words, attention):
    """An attention setting in words: one kind everywhere, or each site's (encoder/decoder/cross)."""
    kinds = [words["recipe"]["attention"][k] for k in attention.split("/")]
    return kinds[0] if len(kinds) == 1 else words["recipe"]["sites"].format(*kinds)


def setting_named(words, key, value):
    """One value a variant sets for itself, in words: "8,000 steps", "gates start at -8"."""
    recipe = words["recipe"]
    if key not in recipe["settings"]:
        raise DataError(f"{WORDS.name}: no recipe words for the setting {key}")
    lengths = ", ".join(map(str, value)) if isinstance(value, list | tuple) else value
    pct = f"{100 * value:.0f} %" if isinstance(value, float) else value
    value = recipe["values"].get(value, value) if isinstance(value, str) else value
    return recipe["settings"][key].format(v=value, lengths=lengths, pct=pct)


@jinja2.pass_context
def changes(context, entry):
    """What a study variant (a search row's dict, or params' Variant) changes from the study's recipe,
    in the page's words: its positions, its attention, then each value it sets for itself."""
    words = context["words"]
    get = entry.get if isinstance(entry, dict) else lambda key: getattr(entry, key, None)
    done = [
        setting_named(words, k, v)
        for section in ("model", "train", "data")
        for k, v in (get(section) or {}).items()
    ]
    named = [words["recipe"]["positions"][get("positions")], attention_named(words, get("attention"))]
    return "; ".join([*named, *done])


def render(context):
    """{page name: Markdown} for every page, from the report's context."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,  # a missing value is an error, not a blank in the report
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # Markdown, not HTML
    )
    env.filters.update(cell=cell, quoted=quoted, pct=locale.percent, changes=changes, ours=ours)
    env.filters.update(verdict=verdict, stated=stated, translated=translated)
    env.filters.update(  # a variant's positions and attention in the page's words
        positions=jinja2.pass_context(lambda c, name: c["words"]["recipe"]["positions"][name]),
        attention=jinja2.pass_context(lambda c, name: attention_named(c["words"], name)),
    )
    words = yaml.safe_load(WORDS.read_text())
    return {
        page: wrap_markdown(
            locale.localize(
                env.get_template(f"{page}.j2").render(**context, words=words[language]), language, KEPT
            )
        )
        for page, language in PAGES.items()
    }

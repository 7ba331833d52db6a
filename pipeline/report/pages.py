"""The report's pages: reports/README.md and APPENDIX.md and their Spanish editions README.es.md and
APPENDIX.es.md, from templates/*.md.j2: the templates write the sentences, pipeline/report/context.py
gives them the numbers, words.yaml the words Python and the YAML files put into them, per language;
and the Markdown helpers they share: long prose lines wrapped for reading, table cells made safe.
Same inputs, same bytes."""

import re
from pathlib import Path

import jinja2
import yaml

from pipeline.infra.errors import DataError

WIDTH = 100
# Lines kept as they are: tables, headings, images, HTML, indented code.
KEEP = ("|", "#", "![", "<", "    ")
LIST_ITEM = re.compile(r"(?:[-*+]|\d+[.)]) ")


def starts_markup(word):
    """Whether a word at the start of a line would turn that line into a list item, a heading, a
    quote, a table row, a rule or a fence: such a word stays on the line before."""
    return bool(re.fullmatch(r"[-*+=_]+|\d+[.)]", word)) or word.startswith(("#", ">", "|", "```"))


def words_of(text):
    """The words of a paragraph; a lone "%" stays with its number and "±" with the number after it,
    so that "99.5 %", "[0.6 %-30.3 %]" and "± 0.2" never split across lines."""
    return re.split(r"(?<!±)\s+(?!%(?:[\s:;,.)\]-]|$))", text.strip())


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


def quoted(words):
    """The lesson's words as a table cell: as they are, or as code where they hold the lesson's TeX
    ($, backslashes), which Markdown would otherwise typeset or eat."""
    if not words:
        return ""
    return f"`{words}`" if any(ch in words for ch in "$\\") else f"«{cell(words)}»"


# ------------------------------------------------------------------------------------- pages

TEMPLATES = Path(__file__).parent / "templates"
WORDS = Path(__file__).with_name("words.yaml")
PAGES = {"README.md": "en", "README.es.md": "es", "APPENDIX.md": "en", "APPENDIX.es.md": "es"}  # language


def pct(value, digits=1):
    """A fraction as a percentage: 0.9841 -> "98.4 %"."""
    return f"{100 * value:.{digits}f} %"


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


def changes(entry):
    """What a study variant (a search row's dict, or params' Variant) changes from the study's recipe."""
    get = entry.get if isinstance(entry, dict) else lambda key: getattr(entry, key, None)
    done = [f"{k}={v}" for section in ("model", "train", "data") for k, v in (get(section) or {}).items()]
    return ", ".join([f"{get('positions')}, {get('attention')}", *done])


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
    env.filters.update(cell=cell, quoted=quoted, pct=pct, changes=changes)
    env.filters.update(verdict=verdict, stated=stated, translated=translated)
    words = yaml.safe_load(WORDS.read_text())
    return {
        page: wrap_markdown(env.get_template(f"{page}.j2").render(**context, words=words[language]))
        for page, language in PAGES.items()
    }

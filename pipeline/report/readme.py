"""reports/README.md and APPENDIX.md and their Spanish editions README.es.md and APPENDIX.es.md, from
templates/*.md.j2: the templates write the sentences, pipeline/report/context.py gives them the numbers,
words.yaml the words Python and the YAML files put into them, per language. Same inputs, same bytes."""

import re
from pathlib import Path

import jinja2
import yaml

from pipeline.infra.errors import DataError
from pipeline.report.markdown import cell, quoted, wrap_markdown

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

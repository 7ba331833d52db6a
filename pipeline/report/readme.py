"""reports/README.md and reports/APPENDIX.md, rendered from templates/*.md.j2: the templates write the
sentences, pipeline/report/context.py gives them the numbers. The same inputs give the same bytes."""

from pathlib import Path

import jinja2

from pipeline.report.markdown import cell, quoted, wrap_markdown

TEMPLATES = Path(__file__).parent / "templates"
PAGES = ("README.md", "APPENDIX.md")


def pct(value, digits=1):
    """A fraction as a percentage: 0.9841 -> "98.4 %"."""
    return f"{100 * value:.{digits}f} %"


def verdict(claim):
    """A claim's status as the report shows it."""
    if claim.undecided:
        return "cannot discriminate"
    return {"pass": "pass", "fail": "**FAIL**", "note": "note"}[claim.status]


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
    env.filters.update(cell=cell, quoted=quoted, pct=pct, verdict=verdict, changes=changes)
    return {page: wrap_markdown(env.get_template(f"{page}.j2").render(**context)) for page in PAGES}

"""reports/README.md: the report, rendered from templates/README.md.j2 with this run's claims,
findings, notes and study section. The same inputs give the same bytes."""

from pathlib import Path

import jinja2

from pipeline.report.markdown import cell, quoted, wrap_markdown

TEMPLATES = Path(__file__).parent / "templates"
STATUS_SHOWN = {"pass": "pass", "fail": "**FAIL**", "note": "note"}


def status_counts(claims):
    return {s: sum(c.status == s for c in claims) for s in STATUS_SHOWN}


def render_readme(*, seeds, claims, findings, notes, study, environment):
    """The report as Markdown: the verdict, the findings beside their figures, the claims that fail
    or are noted, every claim, the probes' notes, the length study, the environment.

    `findings`: findings.Finding list; `notes`: {topic: text}; `study` and `environment`: lines."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,  # a missing value is an error, not a blank in the report
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # Markdown, not HTML
    )
    env.filters["cell"] = cell
    env.filters["quoted"] = quoted
    env.filters["status"] = STATUS_SHOWN.__getitem__
    text = env.get_template("README.md.j2").render(
        counts=status_counts(claims),
        seeds=seeds,
        claims=claims,
        exceptions=[c for c in claims if c.status != "pass"],
        findings=findings,
        notes=notes,
        study=study,
        environment=environment,
    )
    return wrap_markdown(text)

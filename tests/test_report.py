"""The report's rendering, on small made-up inputs: the verdict first, the claims that fail or are
noted listed apart, each finding beside its figure, lines wrapped for reading, the same bytes twice."""

from pipeline.core import lesson
from pipeline.report.claims.rules import Claim
from pipeline.report.claims.table import claims_csv
from pipeline.report.findings.finding import Figure, Finding
from pipeline.report.findings.probes import jacobian_sweep, residual
from pipeline.report.markdown import wrap_markdown
from pipeline.report.readme import render_readme
from pipeline.stages import evaluate as evaluate_stage

PASS = Claim("l10-params", "lesson 10", "Transformer parameters", "59744", "59744", "exact", "pass")
FAIL = Claim("l10-loss-300", "lesson 10", "loss at step 300", "0.928", "1.2 ± 0.1", "seed range", "fail")
NOTE = Claim("l10-time", "lesson 10", "a | in the claim", "about 10 s", "not a result", "hardware", "note")
LONG = "A finding long enough to need wrapping: " + "the model sorts ten digits, " * 8 + "as in the lesson."


def render(claims=(PASS, FAIL, NOTE), **changes):
    inputs = {
        "seeds": [0, 1],
        "claims": list(claims),
        "findings": [Finding("Training loss", LONG, (Figure("loss.png", "The loss of every seed."),))],
        "notes": {"base_model": "63 M parameters, 0.970 x the paper's 65 M."},
        "study": ["## Length generalisation", "", "| variant | steps |", "| --- | --- |", "| bos | 30 |", ""],
        "environment": ["- python 3.11", "- threads: one per seed"],
    } | changes
    return render_readme(**inputs)


def section(text, heading):
    """The lines under one `## heading`, up to the next."""
    body = text.split(f"\n## {heading}\n", 1)[1]
    return body.split("\n## ", 1)[0]


def test_the_verdict_comes_first_then_findings_claims_study_environment():
    text = render()
    lines = text.splitlines()
    assert lines[0] == "# Replication report"
    assert lines[2].startswith("**1 of 3 claims pass, 1 fail, 1 is noted**")
    order = ["## Key findings", "## Claims that fail or are noted", "## All claims"]
    order += ["## Notes from the probes", "## Length generalisation", "## Environment", "## Regenerate"]
    positions = [text.index(f"\n{heading}\n") for heading in order]
    assert positions == sorted(positions)


def test_failing_and_noted_claims_are_listed_apart_and_every_claim_in_full():
    exceptions = section(render(), "Claims that fail or are noted")
    assert "| l10-loss-300 | **FAIL** | loss at step 300 | 0.928 | 1.2 ± 0.1 | seed range |" in exceptions
    assert "| l10-time | note | a / in the claim |" in exceptions  # a "|" would split the cell
    assert "l10-params" not in exceptions
    everything = section(render(), "All claims")
    assert (
        "| l10-params | lesson 10 | Transformer parameters |  | 59744 | 59744 |  | exact | pass |"
        in everything
    )
    assert everything.count("\n| l10-") == 3


def test_a_run_where_every_claim_passes_says_so():
    text = render(claims=[PASS])
    assert "**1 of 1 claims pass, 0 fail, 0 are noted**" in text
    assert "Every claim passes." in section(text, "Claims that fail or are noted")


def test_each_finding_sits_beside_its_figure():
    findings = section(render(), "Key findings")
    assert findings.index("### Training loss") < findings.index("A finding long enough")
    assert findings.index("as in the lesson.") < findings.index("![loss.png](figures/loss.png)")
    assert "*The loss of every seed.*" in findings


def test_prose_is_wrapped_and_tables_are_not():
    text = render()
    prose = [line for line in text.splitlines() if not line.startswith("|")]
    assert max(map(len, prose)) <= 100
    assert "| bos | 30 |" in text and "- **base model**: 63 M parameters" in text


def test_the_same_inputs_give_the_same_bytes():
    assert render() == render()


def test_wrapping_keeps_markdown_meaning():
    bullet = "- " + "word " * 30 + "ends at 20."
    wrapped = wrap_markdown(bullet, width=40).splitlines()
    assert wrapped[0].startswith("- ") and all(line.startswith("  ") for line in wrapped[1:])
    assert not any(line.strip().startswith("20.") for line in wrapped)  # would open a numbered list
    code = "```\n" + "x " * 80 + "\n```"
    assert wrap_markdown(code, width=40) == code
    assert "99.5 %" in wrap_markdown("a " * 47 + "99.5 % b", width=100)  # a number keeps its unit


def test_claims_csv_quotes_as_the_csv_module_does():
    text = claims_csv([NOTE, Claim("x", "s", 'say "hi", twice', "1", "1", "exact", "pass")])
    assert text.splitlines() == [
        "id,source,claim,expected,reproduced,tolerance,status,seeds,words",
        "l10-time,lesson 10,a | in the claim,about 10 s,not a result,hardware,note,,",
        'x,s,"say ""hi"", twice",1,1,exact,pass,,',
    ]
    assert text.endswith("\n") and "\r" not in text


def test_findings_leave_out_what_a_run_did_not_measure():
    assert "did not reach the lesson's 12 layers" in residual({}).text
    assert "too few depths" in jacobian_sweep({}).text


def test_the_lessons_example_is_written_once():
    assert evaluate_stage.LESSON_EXAMPLE is lesson.EXAMPLE_INPUT
    assert lesson.EXAMPLE_OUTPUT == sorted(lesson.EXAMPLE_INPUT)

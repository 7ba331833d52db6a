"""The claims table: every entry of claims.yaml judged by its rule (pipeline/report/judging.py states
each) against what the stages measured.

A claim is judged where it applies (claims.yaml's `applies`, read by APPLIES); one that applies and
has no value stops the report, naming it: a misspelt `value:` never drops a claim silently.
"""

import csv
import io
import numbers
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import yaml

from pipeline.infra.errors import DataError
from pipeline.infra.locale import Phrase
from pipeline.report.judging import judge_below_bar, judge_paired, judge_rounding, judge_seeds, outcome

CLAIMS_PATH = Path(__file__).with_name("claims.yaml")
KINDS = ("measured", "rerun", "derived", "structural", "arithmetic")
COLUMNS = (
    *("id", "source", "claim", "expected", "reproduced", "tolerance", "status", "kind", "seeds", "words"),
    *("undecided", "lesson_error"),  # with kind and status, every count of the first screen
    *("test", "test_why"),  # a claim data could falsify: a strong or a weak test of it, and why
)
TESTS = ("strong", "weak")


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    claim: str
    expected: str
    reproduced: str
    tolerance: str
    status: str  # pass | fail | note
    kind: str  # one of KINDS
    seeds: str = ""  # a trained claim: where the lesson's value falls among our seeds
    words: str = ""
    of: str = ""  # a derived claim: the claim it follows from
    lesson_error: str = ""  # where the lesson slips: the slip, in a few words
    undecided: bool = False  # a band too wide to tell
    test: str = ""  # a claim data could falsify: strong (passing shows what the lesson says) or weak
    test_why: str = ""  # why, in a few words
    # a trained claim's numbers, for the seed-distribution figure
    lesson_value: float | None = None
    above_all: bool = False  # above every seed by more than the lesson's printed rounding

    per_seed: tuple = ()
    band: tuple = ()
    percent: bool = False
    extra: dict = field(default_factory=dict)


def load_claims(path=CLAIMS_PATH):
    # libyaml's parser where PyYAML has it: the same entries, about 7x faster than pure Python
    entries = yaml.load(Path(path).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    ids = [e["id"] for e in entries]
    if len(set(ids)) != len(ids):
        raise DataError(f"{path}: claim ids repeat")
    for e in entries:  # every claim data could falsify says how much its passing shows
        falsifiable = e["kind"] == "measured" and e["rule"] != "note"
        if falsifiable and (e.get("test") not in TESTS or not e.get("test_why")):
            raise DataError(f"{path}: claim {e['id']} needs test: strong or weak, and test_why")
        if not falsifiable and "test" in e:
            raise DataError(f"{path}: claim {e['id']} cannot be falsified by data: it takes no test")
    return entries


def written(value, words=False):
    """A value as the claims table shows it, its numbers kept as numbers for the page's language: True
    and False are words there, and so is a text where `words` (claims.yaml's expected); any other
    text (a shape, a list) as Python prints it."""
    if isinstance(value, Phrase):
        return value
    if isinstance(value, bool) or words and isinstance(value, str) and any(c.isalpha() for c in value):
        return Phrase(str(value))
    return Phrase("{}", value) if isinstance(value, numbers.Real) else str(value)


def judge(entry, value):
    """(reproduced, tolerance, status, ...) of one claim."""
    rule, expected = entry["rule"], entry["expected"]
    if rule == "note":
        return dict(reproduced=written(value), tolerance=entry["reason"], status="note")
    if rule == "seeds":
        return judge_seeds(entry, value["values"], value["items"], value.get("level"))
    if rule == "rounding":
        return judge_rounding(value)
    if rule == "paired":
        return judge_paired(value)
    if rule == "below_bar":
        return judge_below_bar(value)
    if rule == "majority":
        shown = Phrase("{} of {} seeds write it", value["same"], value["seeds"])
        ok = value["same"] > value["seeds"] / 2
        return dict(reproduced=shown, tolerance=Phrase("more than half the seeds"), status=outcome(ok))
    if rule == "thirds":
        nearest = f"{round(3 * value)}/3"
        shown, ok = Phrase("{:.3f}, nearest to {} among the thirds", value, nearest), nearest == expected
        return dict(reproduced=shown, tolerance=Phrase("rounds to the stated third"), status=outcome(ok))
    if rule == "exact":
        shown = written(value)  # the lesson's value, where it reads as ours, written as ours
        said, ok = shown if str(shown) == str(expected) else written(expected, words=True), value == expected
        return dict(expected=said, reproduced=shown, tolerance=Phrase("exact"), status=outcome(ok))
    printed = {  # the value as the lesson prints it: its format, and the tolerance's words
        "decimals": lambda n: (f".{n}f", "exact at {} decimal" if n == 1 else "exact at {} decimals"),
        "significant": lambda n: (f".{n - 1}e", "exact at {} significant digits"),
    }
    for name, show in printed.items():
        if isinstance(rule, dict) and name in rule:
            spec, words = show(rule[name])
            # printed as the lesson's code prints (Python's format, half to even on the binary value),
            # then written in the page's language as it stands
            both = (value, float(expected))
            printed = (Decimal(format(v, spec)) if spec.endswith("f") else v for v in both)
            shown, said = (Phrase(f"{{:{spec}}}", v) for v in printed)
            tolerance, ok = Phrase(words, rule[name]), float(shown) == float(expected)
            return dict(expected=said, reproduced=shown, tolerance=tolerance, status=outcome(ok))
    raise DataError(f"claim {entry['id']}: unknown rule {rule!r}")


def shorter_untrained(train_lengths):
    """The lengths from 2 up to the longest trained one that training never drew."""
    return [n for n in range(2, max(train_lengths)) if n not in train_lengths]


APPLIES = {  # claims.yaml's `applies`: whether a run with these parameters measures the claim
    "test_length": lambda params, n: n in params.data.test_lengths,
    "steps": lambda params, n: params.train.steps >= n,
    "probe_depth": lambda params, n: n in params.probe_depths,
    "reads_length": lambda params, n: params.model.max_len >= n,  # the lesson's model: no BOS row
    "shorter_untrained": lambda params, n: len(shorter_untrained(params.data.train_lengths)) >= n,
}


def applies(entry, params):
    if unknown := sorted(set(entry.get("applies", {})) - set(APPLIES)):
        raise DataError(
            f"claim {entry['id']}: unknown applies {', '.join(unknown)} (known: {', '.join(APPLIES)})"
        )
    return all(APPLIES[name](params, n) for name, n in entry.get("applies", {}).items())


def measured_value(entry, quantities):
    """The value a claim that applies reads; none is an error that names the claim."""
    hint = "check its `value:` in claims.yaml, or its `applies:`"
    if isinstance(entry["value"], dict):  # a query of a tidy table
        try:
            return quantities.query(entry["value"])
        except KeyError as missing:
            raise DataError(
                f"claim {entry['id']} applies, but its query finds no {missing}: {hint}"
            ) from None
    if entry["value"] not in quantities:
        raise DataError(f"claim {entry['id']} applies, but nothing measures {entry['value']}: {hint}")
    try:
        return quantities[entry["value"]]
    except KeyError as missing:  # a quantity computed from metrics this run did not write
        raise DataError(f"claim {entry['id']} applies, but {missing} was not measured: {hint}") from None


def evaluate(entries, quantities, params):
    """Every claim that applies to `params` (the sections APPLIES reads: data, train, model and
    probe_depths), judged; `quantities`: {value name: what was measured}."""
    claims = []
    for e in (e for e in entries if applies(e, params)):
        judged = {"expected": written(e["expected"], words=True), **judge(e, measured_value(e, quantities))}
        claims.append(
            Claim(
                **{k: e[k] for k in ("id", "source", "claim", "kind")},
                **{k: e.get(k, "") for k in ("words", "of")},
                lesson_error=e.get("lesson_error", ""),
                test=e.get("test", ""),
                test_why=e.get("test_why", ""),
                **judged,
            )
        )
    return claims


def counts(claims):
    """The verdict's numbers: measured claims by outcome (the headline counts those data could
    falsify: neither a note nor too wide to tell; of them, the paper's own); the other checks; the
    lessons' slips."""
    measured = [c for c in claims if c.kind == "measured"]
    return {
        "measured": len(measured),
        "falsifiable": sum(c.status != "note" for c in measured),
        "falsifiable_paper": sum(c.status != "note" and c.source == "paper" for c in measured),
        "strong": sum(c.status != "note" and c.test == "strong" for c in measured),
        "weak": sum(c.status != "note" and c.test == "weak" for c in measured),
        "reruns": sum(c.kind == "rerun" for c in claims),
        "measured_pass": sum(c.status == "pass" for c in measured),
        "measured_fail": sum(c.status == "fail" for c in measured),
        "measured_undecided": sum(c.undecided for c in measured),
        "measured_noted": sum(c.status == "note" and not c.undecided for c in measured),
        "checks": len(claims) - len(measured),
        "checks_pass": sum(c.status == "pass" for c in claims if c.kind != "measured"),
        "checks_noted": sum(c.status == "note" for c in claims if c.kind != "measured"),
        "fail": sum(c.status == "fail" for c in claims),
        "lesson_errors": sum(bool(c.lesson_error) for c in claims),
        "total": len(claims),
    }


def claims_csv(claims):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([COLUMNS, *([getattr(c, k) for k in COLUMNS] for c in claims)])
    return out.getvalue()

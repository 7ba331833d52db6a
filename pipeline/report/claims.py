"""The claims table: every entry of claims.yaml judged by its rule against what the stages measured.

The rules, fixed in claims.yaml before the results they judge:
- exact: the value equals the lesson's (counts, shapes, booleans, strings as printed).
- decimals: n / significant: n: the value printed as the lesson prints it reads the same.
- thirds: a prose fraction ("two in three"): the value rounds to the lesson's fraction among thirds.
- seeds (a trained result): the lesson's value lies in the prediction interval of one more training
  run, mean ± t · sd · sqrt(1 + 1/n) over our n seeds (t: Student's 97.5 % point, n - 1 degrees of
  freedom), widened for an accuracy by the lesson's own sampling error, 1.96 · sqrt(p (1 - p) / m) on
  its m items (p: our mean), added in quadrature. A band wider than 20 points (an accuracy) or 10 %
  of the value (a loss) cannot tell a right value from a wrong one: such a claim is reported as
  "cannot discriminate" (status note), neither counted as a pass nor failing the gate. A difference
  (the gap above the loss floor) is held to the scale of what it differs from: 10 % of the loss.
- paired: post-norm minus pre-norm, seed against seed, at least -2 standard errors of the mean.
- rounding: our logits and nn.Transformer's differ by rounding only, each seed's largest |difference|
  at most epsilon x its largest |logit| x d_ff (a dot product of n terms in two orders differs by
  about n epsilon of its terms' size).
- majority: more than half of our seeds write the lesson's output.
- below_bar: a failure the lesson predicts: at each length named, no seed reaches the length study's
  bar (the accuracy at which the project says a model sorts a length).
- note: a deliberate, explained difference (`reason`), or an error in the lesson.

A claim is judged where it applies (claims.yaml's `applies`, read by APPLIES); one that applies and
has no value stops the report, naming it: a misspelt `value:` never drops a claim silently.
"""

import csv
import io
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pipeline.infra.errors import DataError
from pipeline.infra.rounding import EPSILON, rounding_bound
from pipeline.model.config import longest_source

CLAIMS_PATH = Path(__file__).with_name("claims.yaml")
KINDS = ("measured", "rerun", "derived", "structural", "arithmetic")
COLUMNS = (
    *("id", "source", "claim", "expected", "reproduced", "tolerance", "status", "kind", "seeds", "words"),
    *("undecided", "lesson_error"),  # with kind and status, every count of the first screen
)
LESSON_TEST_SIZE = 1000  # "datos(1000, ...)": every accuracy the lesson prints is on 1,000 sequences
LESSON_LENGTH = 10  # the length the lesson trains and tests on, unless a claim applies to another
# Student's t, 97.5 % point, by degrees of freedom (1..30); beyond, the normal's 1.96
# fmt: off
T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
    2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
    2.045, 2.042,
)
# fmt: on
WIDEST = {"accuracy": 0.20, "loss": 0.10}  # bands wider than this (points; share of the value) say nothing


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
    # a trained claim's numbers, for the seed-distribution figure
    lesson_value: float | None = None
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
    return entries


def t_975(n):
    return T_975[n - 2] if 2 <= n <= len(T_975) + 1 else 1.96


def rank_text(expected, values):
    """Where the lesson's value falls among our seeds: how many lie below it, and its percentile."""
    n = len(values)
    below, equal = sum(v < expected for v in values), sum(v == expected for v in values)
    if below == n:
        where = "above every seed"
    elif below + equal == 0:
        where = "below every seed"
    else:
        where = f"above {below} of {n} seeds" + (f", equal to {equal}" if equal else "")
    return f"lesson value {where} (percentile {100 * (below + equal / 2) / n:.0f} of {n} seeds)"


def prediction_band(values, lesson_items=None):
    """(mean, half-width) of the interval one more run falls in, with the lesson's sampling error
    where it measured a fraction on `lesson_items` items."""
    n, mean = len(values), statistics.fmean(values)
    sd = statistics.stdev(values) if n > 1 else 0.0
    half = t_975(n) * sd * math.sqrt(1 + 1 / n)
    if lesson_items:
        half = math.hypot(half, 1.96 * math.sqrt(mean * (1 - mean) / lesson_items))
    return mean, half


def judge_seeds(entry, values, n_items, level=None):
    """A trained claim against the prediction interval of our seeds; `level`: the scale a loss's
    band is held to where the claim is a difference (by default the claim's own mean)."""
    expected, items = float(entry["expected"]), entry.get("items")
    accuracy = items is not None
    length = (entry.get("applies") or {}).get("test_length", LESSON_LENGTH)  # digits: m x length of them
    lesson_items = LESSON_TEST_SIZE * (length if items == "digits" else 1) if accuracy else None
    mean, half = prediction_band(values, lesson_items)
    low, high = (max(0.0, mean - half), min(1.0, mean + half)) if accuracy else (mean - half, mean + half)
    width = high - low
    wide = width > (WIDEST["accuracy"] if accuracy else WIDEST["loss"] * abs(mean if level is None else level))
    inside = round(low, 9) <= expected <= round(high, 9)  # no float dust at 0 or 1
    status = "note" if wide else ("pass" if inside else "fail")
    if accuracy:
        f = lambda v: f"{100 * v:.1f}"  # noqa: E731
        shown = f"{f(mean)} % (seeds {f(min(values))}–{f(max(values))}, {n_items:,} sequences each)"
        expected_text, band = f"{f(expected)} %", f"{f(low)}–{f(high)} %"
    else:
        shown = f"{mean:.3f} (seeds {min(values):.3f}–{max(values):.3f})"
        expected_text, band = f"{expected:.3f}", f"{low:.3f}–{high:.3f}"
    tolerance = f"prediction interval {band}" + (" (cannot discriminate: too wide)" if wide else "")
    return dict(
        expected=expected_text,
        reproduced=shown,
        tolerance=tolerance,
        status=status,
        seeds=rank_text(expected, values),
        undecided=wide,
        lesson_value=expected,
        per_seed=tuple(values),
        band=(low, high),
        percent=accuracy,
    )


def judge_rounding(ref):
    """Our logits against nn.Transformer's holding the same weights, per seed and type."""
    if ref is None:
        return dict(
            reproduced="not compared",
            status="note",
            tolerance="nn.Transformer holds the paper's model only (sinusoids, post-norm, softmax)",
        )
    shown, worst = [], 0.0
    for dtype in EPSILON:
        bounds = [rounding_bound(dtype, scale, ref["dot_length"]) for scale in ref[f"logit_max_{dtype}"]]
        diffs = ref[f"max_diff_{dtype}"]
        worst = max(worst, *(d / b for d, b in zip(diffs, bounds, strict=True)))
        shown.append(f"{dtype} {max(diffs):.1e} (bound {min(bounds):.1e})")
    return dict(
        reproduced="; ".join(shown) + f": the worst seed at {worst:.2f} of its bound",
        tolerance="each seed's max |logit difference| <= epsilon x max |logit| x d_ff",
        status=outcome(worst <= 1),
    )


def judge_below_bar(value):
    """Every seed below the bar at every length named: the failure the lesson predicts."""
    by_length, bar = value["by_length"], value["bar"]
    best = {n: max(accuracies) for n, accuracies in by_length.items()}
    shown = "; ".join(
        f"{n}: {100 * statistics.fmean(a):.1f} % (best seed {100 * best[n]:.1f})" for n, a in by_length.items()
    )
    return dict(
        reproduced=shown,
        tolerance=f"no seed at the bar ({100 * bar:.0f} %) at any of lengths {', '.join(map(str, by_length))}",
        status=outcome(all(b < bar for b in best.values())),
        seeds=f"{len(next(iter(by_length.values())))} seeds",
    )


def judge_paired(n):
    diffs = n["diffs"]
    ok = n["post_minus_pre"] >= -n["post_minus_pre_2se"]
    shown = (
        f"post {100 * n['post_seq_acc']:.1f} %, pre {100 * n['pre_seq_acc']:.1f} %: post - pre "
        f"{100 * n['post_minus_pre']:+.2f} pt (seeds {100 * min(diffs):+.1f} to {100 * max(diffs):+.1f})"
    )
    below = sum(d < 0 for d in diffs)
    return dict(
        reproduced=shown,
        tolerance="post - pre >= -2 s.e. of the mean paired difference",
        status=outcome(ok),
        seeds=f"post-norm below pre-norm in {below} of {len(diffs)} seeds",
    )


def outcome(ok):
    return "pass" if ok else "fail"


def judge(entry, value):
    """(reproduced, tolerance, status, ...) of one claim."""
    rule, expected = entry["rule"], entry["expected"]
    if rule == "note":
        return dict(reproduced=str(value), tolerance=entry["reason"], status="note")
    if rule == "seeds":
        return judge_seeds(entry, value["values"], value["items"], value.get("level"))
    if rule == "rounding":
        return judge_rounding(value)
    if rule == "paired":
        return judge_paired(value)
    if rule == "below_bar":
        return judge_below_bar(value)
    if rule == "majority":
        shown = f"{value['same']} of {value['seeds']} seeds write it"
        ok = value["same"] > value["seeds"] / 2
        return dict(reproduced=shown, tolerance="more than half the seeds", status=outcome(ok))
    if rule == "thirds":
        nearest = f"{round(3 * value)}/3"
        shown = f"{value:.3f} (nearest third: {nearest})"
        return dict(
            reproduced=shown, tolerance="rounds to the stated third", status=outcome(nearest == expected)
        )
    if rule == "exact":
        return dict(reproduced=str(value), tolerance="exact", status=outcome(value == expected))
    printed = {  # the value as the lesson prints it
        "decimals": lambda n: (f"{value:.{n}f}", f"exact at {n} decimals"),
        "significant": lambda n: (f"{value:.{n - 1}e}", f"exact at {n} significant digits"),
    }
    for name, show in printed.items():
        if isinstance(rule, dict) and name in rule:
            shown, tolerance = show(rule[name])
            return dict(
                reproduced=shown, tolerance=tolerance, status=outcome(float(shown) == float(expected))
            )
    raise DataError(f"claim {entry['id']}: unknown rule {rule!r}")


APPLIES = {  # claims.yaml's `applies`: whether a run with these parameters measures the claim
    "test_length": lambda params, n: n in params.data.test_lengths,
    "steps": lambda params, n: params.train.steps >= n,
    "probe_depth": lambda params, n: n in params.probe.depths,
    "reads_length": lambda params, n: longest_source(params.model) >= n,
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
    if entry["value"] not in quantities:
        raise DataError(f"claim {entry['id']} applies, but nothing measures {entry['value']}: {hint}")
    try:
        return quantities[entry["value"]]
    except KeyError as missing:  # a quantity computed from metrics this run did not write
        raise DataError(f"claim {entry['id']} applies, but {missing} was not measured: {hint}") from None


def evaluate(entries, quantities, params):
    """Every claim that applies to `params`, judged; `quantities`: {value name: what was measured}."""
    claims = []
    for e in (e for e in entries if applies(e, params)):
        judged = {"expected": str(e["expected"]), **judge(e, measured_value(e, quantities))}
        claims.append(
            Claim(
                **{k: e[k] for k in ("id", "source", "claim", "kind")},
                **{k: e.get(k, "") for k in ("words", "of")},
                lesson_error=e.get("lesson_error", ""),
                **judged,
            )
        )
    return claims


def counts(claims):
    """The verdict's numbers: measured claims by outcome (the headline counts those data could
    falsify: neither a note nor too wide to tell); the other checks; the lessons' slips."""
    measured = [c for c in claims if c.kind == "measured"]
    return {
        "measured": len(measured),
        "falsifiable": sum(c.status != "note" for c in measured),
        "reruns": sum(c.kind == "rerun" for c in claims),
        "measured_pass": sum(c.status == "pass" for c in measured),
        "measured_fail": sum(c.status == "fail" for c in measured),
        "measured_undecided": sum(c.undecided for c in measured),
        "measured_noted": sum(c.status == "note" and not c.undecided for c in measured),
        "checks": len(claims) - len(measured),
        "checks_pass": sum(c.status == "pass" for c in claims if c.kind != "measured"),
        "fail": sum(c.status == "fail" for c in claims),
        "lesson_errors": sum(bool(c.lesson_error) for c in claims),
        "total": len(claims),
    }


def claims_csv(claims):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([COLUMNS, *([getattr(c, k) for k in COLUMNS] for c in claims)])
    return out.getvalue()

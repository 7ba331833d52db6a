"""The claims table's rows and the tolerance rules that decide each row's status.

Tolerance rules, fixed before looking at results (reports/README.md states them):
- exact: counts, shapes, booleans and fixed-seed NumPy cells must equal the lesson's value at the
  precision it prints.
- seeds: a trained result passes when the lesson's value lies inside the range our seeds span,
  widened by a margin: for an accuracy, twice the standard error of the difference of two binomial
  measurements, the lesson's on its n_lesson sequences and ours on n, 2 * sqrt(p (1 - p) (1 / n_lesson
  + 1 / n)), at least 0.1 point (its printed precision); for a one-batch loss, twice the
  batch-to-batch standard deviation of the loss over the 100 steps up to that step, around the
  straight line those steps follow (the lesson printed one batch's loss; the trend is not noise).
- about: a prose approximation ("about 18.9 million") passes within 5 % of the stated value.
- note: a deliberate, explained difference (e.g. wall time on other hardware): never pass or fail.
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    claim: str
    expected: str
    reproduced: str
    tolerance: str
    status: str  # pass | fail | note
    seeds: str = ""  # a trained claim: where the lesson's value falls among our seeds
    words: str = ""  # the lesson's own words, to find the claim in it
    # A trained claim's numbers, for the seed-distribution figure (not in claims.csv): the lesson's
    # value, every seed's, and the widened range the lesson's value must fall in.
    lesson_value: float | None = None
    per_seed: tuple = ()
    band: tuple = ()
    percent: bool = False


COLUMNS = ("id", "source", "claim", "expected", "reproduced", "tolerance", "status", "seeds", "words")
L10, L6, PAPER = "lesson 10", "lesson 6", "paper"


def exact(id, source, claim, expected, value, shown=None):
    """Pass iff the reproduced value equals the expected one (as printed)."""
    ok = value == expected
    return Claim(
        id, source, claim, str(expected), str(shown if shown is not None else value), "exact", status_of(ok)
    )


def printed(id, source, claim, expected: str, value: float, decimals: int):
    """Pass iff the value rounded as the lesson prints it reads the same."""
    shown = f"{value:.{decimals}f}"
    ok = float(shown) == float(expected)
    return Claim(id, source, claim, expected, shown, f"exact at {decimals} decimals", status_of(ok))


def printed_sci(id, source, claim, expected: str, value: float, digits: int):
    shown = f"{value:.{digits}e}"
    ok = float(shown) == float(expected)
    return Claim(
        id, source, claim, expected, shown, f"exact at {digits + 1} significant digits", status_of(ok)
    )


def about(id, source, claim, expected: float, value: float, unit="", scale=1.0, note_if_fail=None):
    rel = abs(value - expected) / abs(expected)
    ok = rel <= 0.05
    shown = f"{value / scale:.3g}{unit} ({rel:.1%} off)"
    status = status_of(ok) if ok or not note_if_fail else "note"
    tolerance = "within 5 %" + (f"; {note_if_fail}" if status == "note" else "")
    return Claim(id, source, claim, f"about {expected / scale:.3g}{unit}", shown, tolerance, status)


def accuracy_margin(p, n_lesson, n):
    """Twice the standard error of the difference between a fraction p measured on n_lesson items
    (the lesson's) and on n (ours), >= 0.001."""
    return max(2 * math.sqrt(p * (1 - p) * (1 / n_lesson + 1 / n)), 0.001)


def rank_text(expected, per_seed):
    """Where the lesson's value falls among our seeds: how many lie below it, and its percentile."""
    n = len(per_seed)
    below, equal = sum(v < expected for v in per_seed), sum(v == expected for v in per_seed)
    if below == n:
        where = "above every seed"
    elif below + equal == 0:
        where = "below every seed"
    else:
        where = f"above {below} of {n} seeds" + (f", equal to {equal}" if equal else "")
    return f"lesson value {where} (percentile {100 * (below + equal / 2) / n:.0f} of {n} seeds)"


def seed_range(id, source, claim, expected, per_seed, margin, percent=False, margin_rule=""):
    """Pass iff expected lies in [min - margin, max + margin] over the seeds."""
    low, high = min(per_seed), max(per_seed)
    ok = round(low - margin, 9) <= expected <= round(high + margin, 9)  # no float dust at 0 or 1
    mean = sum(per_seed) / len(per_seed)
    std = (
        math.sqrt(sum((v - mean) ** 2 for v in per_seed) / (len(per_seed) - 1)) if len(per_seed) > 1 else 0.0
    )
    if percent:
        fmt = lambda v: f"{100 * v:.1f}"  # noqa: E731
        shown = f"{fmt(mean)} ± {fmt(std)} % (seeds {fmt(low)}–{fmt(high)})"
        exp, tol = f"{fmt(expected)} %", f"seed range ± {100 * margin:.1f} pt"
    else:
        shown = f"{mean:.3f} ± {std:.3f} (seeds {low:.3f}–{high:.3f})"
        exp, tol = f"{expected:.3f}", f"seed range ± {margin:.3f}"
    tol += f" ({margin_rule})" if margin_rule else ""
    band = (low - margin, high + margin)
    return Claim(
        id,
        source,
        claim,
        exp,
        shown,
        tol,
        status_of(ok),
        rank_text(expected, per_seed),
        lesson_value=expected,
        per_seed=tuple(per_seed),
        band=band,
        percent=percent,
    )


def per_seed(metrics, key, seeds):
    """One metric's value for every training seed, from a stage's flat metrics."""
    return [metrics[f"{key}_seed{s}"] for s in seeds]


def note(id, source, claim, expected, reproduced, reason):
    return Claim(id, source, claim, str(expected), str(reproduced), reason, "note")


def status_of(ok):
    return "pass" if ok else "fail"

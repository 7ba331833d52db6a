"""The rules a claim is judged by, fixed in claims.yaml before the results they judge:
- exact: the value equals the lesson's (counts, shapes, booleans, strings as printed).
- decimals: n / significant: n: the value printed as the lesson prints it reads the same.
- thirds: a prose fraction ("two in three"): the value rounds to the lesson's fraction among thirds.
- seeds (a trained result): the lesson's value lies in the prediction interval of one more training
  run, mean ± t · sd · sqrt(1 + 1/n) over our n seeds (t: Student's 97.5 % point, n - 1 degrees of
  freedom), widened for an accuracy by the lesson's own sampling error, 1.96 · sqrt(p (1 - p) / m) on
  its m items (p: our mean), added in quadrature. A band wider than 20 points (an accuracy) or 10 %
  of our seeds' mean (a loss; never of the lesson's value, which would let the number judged set its
  own rule) cannot tell a right value from a wrong one: such a claim is reported as
  "cannot discriminate" (status note), neither counted as a pass nor failing the gate. A difference
  (the gap above the loss floor) is held to the scale of what it differs from: 10 % of our mean loss.
- paired: post-norm minus pre-norm, seed against seed, at least -2 standard errors of the mean.
- rounding: our logits and nn.Transformer's differ by rounding only, each seed's largest |difference|
  at most epsilon x its largest |logit| x d_ff (a dot product of n terms in two orders differs by
  about n epsilon of its terms' size; `rounding_bound`, which the tests that compare the two
  implementations share, so that neither bound is a number one machine measured).
- majority: more than half of our seeds write the lesson's output.
- below_bar: a failure the lesson predicts: at each length named, no seed reaches the length study's
  bar (the accuracy at which the project says a model sorts a length).
- note: a deliberate, explained difference (`reason`), or an error in the lesson.
"""

import math
import statistics

from pipeline.infra.locale import Phrase, joined
from pipeline.params.lesson import LESSON_LENGTH, LESSON_TEST_SIZE

EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23}  # each type's machine epsilon


def rounding_bound(dtype, logit_max, dot_length):
    """The largest |logit difference| rounding explains in `dtype` ("float32" or "float64")."""
    return EPSILON[dtype] * logit_max * dot_length


# Student's t, 97.5 % point, by degrees of freedom (1..30); beyond, the normal's 1.96
# fmt: off
T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
    2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
    2.045, 2.042,
)
# fmt: on
WIDEST = {"accuracy": 0.20, "loss": 0.10}  # bands wider than this (points; share of the value) say nothing
# The lesson prints every value a trained claim judges to thousandths (a loss to 3 decimals, an accuracy
# to one decimal of a percent): a seed within half of one is a tie, its unrounded value unknown.
PRINTED_HALF = 0.0005


def t_975(n):
    return T_975[n - 2] if 2 <= n <= len(T_975) + 1 else 1.96


def rank_text(expected, values):
    """Where the lesson's value falls among our seeds: how many lie below it (beyond its printed
    rounding; those within it are ties), and its percentile."""
    n, half = len(values), PRINTED_HALF
    below = sum(v < expected - half for v in values)
    equal = sum(abs(v - expected) <= half for v in values)
    if below == n:
        where = Phrase("above every seed")
    elif below + equal == 0:
        where = Phrase("below every seed")
    elif equal:
        where = Phrase("above {} of {} seeds, {} within its printed rounding", below, n, equal)
    else:
        where = Phrase("above {} of {} seeds", below, n)
    return Phrase("lesson value {} (percentile {:.0f} of {} seeds)", where, 100 * (below + equal / 2) / n, n)


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
    wide = width > (
        WIDEST["accuracy"] if accuracy else WIDEST["loss"] * abs(mean if level is None else level)
    )
    inside = round(low, 9) <= expected <= round(high, 9)  # no float dust at 0 or 1
    status = "note" if wide else ("pass" if inside else "fail")
    seeds_range = (min(values), max(values))
    if accuracy:
        m, lowest, highest, lesson, b_low, b_high = (
            100 * v for v in (mean, *seeds_range, expected, low, high)
        )
        shown = Phrase("{:.1f} % (seeds {:.1f}–{:.1f}, {:,} sequences each)", m, lowest, highest, n_items)
        expected_text, band = Phrase("{:.1f} %", lesson), Phrase("{:.1f}–{:.1f} %", b_low, b_high)
    else:
        shown = Phrase("{:.3f} (seeds {:.3f}–{:.3f})", mean, *seeds_range)
        expected_text, band = Phrase("{:.3f}", expected), Phrase("{:.3f}–{:.3f}", low, high)
    tolerance = Phrase("prediction interval {}" + (" (cannot discriminate: too wide)" if wide else ""), band)
    return dict(
        expected=expected_text,
        reproduced=shown,
        tolerance=tolerance,
        status=status,
        seeds=rank_text(expected, values),
        above_all=all(v < expected - PRINTED_HALF for v in values),
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
            reproduced=Phrase("not compared"),
            status="note",
            tolerance="nn.Transformer holds the paper's model only (sinusoids, post-norm, softmax)",
        )
    shown, worst = [], 0.0
    for dtype in EPSILON:
        bounds = [rounding_bound(dtype, scale, ref["dot_length"]) for scale in ref[f"logit_max_{dtype}"]]
        diffs = ref[f"max_diff_{dtype}"]
        shares = [d / b for d, b in zip(diffs, bounds, strict=True)]
        nearest = shares.index(max(shares))  # a difference is shown beside its own seed's bound
        worst = max(worst, shares[nearest])
        shown.append(Phrase("{} {:.1e} (its bound {:.1e})", dtype, diffs[nearest], bounds[nearest]))
    return dict(
        reproduced=Phrase(
            "{}, for each type the seed nearest its bound: at most {:.2f} times its bound",
            joined("; ", shown),
            worst,
        ),
        tolerance=Phrase("each seed's max |logit difference| <= epsilon x max |logit| x d_ff"),
        status=outcome(worst <= 1),
    )


def judge_below_bar(value):
    """Every seed below the bar at every length named: the failure the lesson predicts."""
    by_length, bar = value["by_length"], value["bar"]
    lengths = list(by_length)
    best = {n: max(accuracies) for n, accuracies in by_length.items()}
    shown = [
        Phrase("{}: {:.1f} % (best seed {:.1f})", n, 100 * statistics.fmean(a), 100 * best[n])
        for n, a in by_length.items()
    ]
    named = ", ".join(map(str, lengths))
    return dict(
        reproduced=joined("; ", shown),
        tolerance=Phrase("no seed at the bar ({:.0f} %) at any of lengths {}", 100 * bar, named),
        status=outcome(all(b < bar for b in best.values())),
        seeds=Phrase("{} seeds", len(next(iter(by_length.values())))),
    )


def judge_paired(n):
    diffs = n["diffs"]
    ok = n["post_minus_pre"] >= -n["post_minus_pre_2se"]
    values = (n["post_seq_acc"], n["pre_seq_acc"], n["post_minus_pre"], min(diffs), max(diffs))
    pattern = "post {:.1f} %, pre {:.1f} %: post - pre {:+.2f} pt (seeds {:+.1f} to {:+.1f})"
    shown = Phrase(pattern, *(100 * v for v in values))
    below = sum(d < 0 for d in diffs)
    return dict(
        reproduced=shown,
        tolerance=Phrase("post - pre >= -2 s.e. of the mean paired difference"),
        status=outcome(ok),
        seeds=Phrase("post-norm below pre-norm in {} of {} seeds", below, len(diffs)),
    )


def outcome(ok):
    return "pass" if ok else "fail"

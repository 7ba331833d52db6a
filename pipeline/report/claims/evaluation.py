"""Claims on generating and measuring (lesson 10, part 4): greedy against teacher forcing, the
lesson's example, the length table, and the habit the lesson guesses at (metrics/evaluate/summary.json,
metrics/evaluate/example.json, metrics/data/summary.json)."""

from pipeline.core import lesson
from pipeline.report.claims.rules import (
    L10,
    PAPER,
    Claim,
    about,
    accuracy_margin,
    exact,
    note,
    per_seed,
    seed_range,
    status_of,
)

ACCURACY_MARGIN_RULE = "2 s.e. of the difference: the lesson's 1,000 sequences and ours"
BEAM_CLAIM = (
    "section 6.1: decoding with beam search (beam 4, length penalty 0.6), where the lesson decodes greedily"
)
BEAM_REASON = (
    "the paper's beam is for translation; on sorting, every hypothesis has the input's length, "
    "so the length penalty cannot change the ranking"
)
# fmt: off
HEADLINE_ACCURACIES = [  # id, metric, claim, the lesson's value
    ("l10-greedy-seq", "greedy_seq_acc", "greedy: exact sequences (length 10)", lesson.GREEDY_SEQ_ACC),
    ("l10-greedy-digit", "greedy_digit_acc", "greedy: digits (length 10)", lesson.GREEDY_DIGIT_ACC),
    ("l10-tf-seq", "tf_seq_acc", 'teacher forcing: exact sequences, "the same"',
     lesson.TEACHER_FORCING_SEQ_ACC),
    ("l10-tf-digit", "tf_digit_acc", 'teacher forcing: digits, "the same"',
     lesson.TEACHER_FORCING_DIGIT_ACC),
]
# fmt: on


REFERENCE_CLAIM = (
    "same function as PyTorch's reference Transformer: torch.nn.Transformer holding each checkpoint's "
    "weights one to one gives the same teacher-forced logits"
)
# Rounding, nothing more: a dot product of n terms computed in two orders differs by at most about
# n x epsilon relative to its terms' size, so each seed's largest |logit difference| is held to
# epsilon x its largest |logit| x n, n the model's longest dot product (d_ff).
EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23}
REFERENCE_RULE = "each seed's max |logit difference| <= epsilon x max |logit| x d_ff (rounding)"


def evaluation_claims(e, seeds, test_size, trained_length, example):
    return [
        *reference_claims(e, seeds),
        *headline_claims(e, seeds, test_size, trained_length),
        *beam_claims(e),
        *example_claims(example),
        *length_claims(e, seeds, test_size),
    ]


def accuracy_claim(id, claim, expected, values, n_lesson, n):
    """An accuracy: the lesson's value (over n_lesson items) against our seeds' range (n items each),
    widened by 2 s.e. of the difference."""
    margin, rule = accuracy_margin(expected, n_lesson, n), ACCURACY_MARGIN_RULE
    return seed_range(id, L10, claim, expected, values, margin, percent=True, margin_rule=rule)


def reference_claims(e, seeds):
    if f"reference_max_diff_float64_seed{seeds[0]}" not in e:
        reason = "nn.Transformer holds the paper's model only (sinusoids, post-norm, softmax): not this run's"
        return [note("paper-reference", PAPER, REFERENCE_CLAIM, "the same logits", "not compared", reason)]
    n = e[f"reference_dot_length_seed{seeds[0]}"]
    shown, worst_share = [], 0.0
    for dtype, eps in EPSILON.items():
        diffs = per_seed(e, f"reference_max_diff_{dtype}", seeds)
        bounds = [eps * scale * n for scale in per_seed(e, f"reference_logit_max_{dtype}", seeds)]
        share = max(d / b for d, b in zip(diffs, bounds, strict=True))
        worst_share = max(worst_share, share)
        shown.append(f"{dtype} {max(diffs):.1e} (bound {min(bounds):.1e})")
    expected = "float64 and float32: rounding (" + ", ".join(f"eps {e:.1e}" for e in EPSILON.values()) + ")"
    reproduced = "; ".join(shown) + f": the worst seed at {worst_share:.2f} of its bound"
    return [
        Claim(
            "paper-reference",
            PAPER,
            REFERENCE_CLAIM,
            expected,
            reproduced,
            REFERENCE_RULE,
            status_of(worst_share <= 1),
        )
    ]


def headline_claims(e, seeds, test_size, trained_length):
    rows = []
    for id, key, claim, expected in HEADLINE_ACCURACIES:
        items = trained_length if "digit" in key else 1
        values = per_seed(e, key, seeds)
        rows.append(accuracy_claim(id, claim, expected, values, lesson.TEST_SIZE * items, test_size * items))
    return rows


def beam_claims(e):
    if "beam_seq_acc" not in e:
        return []
    greedy = f"greedy {100 * e['greedy_seq_acc']:.1f} %"
    beam = f"beam {100 * e['beam_seq_acc']:.1f} ± {100 * e['beam_seq_acc_std']:.1f} %"
    return [note("paper-beam", PAPER, BEAM_CLAIM, greedy, beam, BEAM_REASON)]


def example_claims(example):
    """Lesson 10's one example, sorted by every seed; checked only when this run decoded it."""
    if not example or example["input"] != lesson.EXAMPLE_INPUT:
        return []
    outputs = example.get("outputs_by_seed", {}).values()
    correct = sum(out == lesson.EXAMPLE_OUTPUT for out in outputs)
    claim = f"{digits(lesson.EXAMPLE_INPUT)} sorts to {digits(lesson.EXAMPLE_OUTPUT)}"
    seeds = len(outputs)
    return [exact("l10-example", L10, claim, f"{seeds}/{seeds} seeds", f"{correct}/{seeds} seeds")]


def digits(sequence):
    return " ".join(map(str, sequence))


def length_claims(e, seeds, test_size):
    """The lesson's length table, at every length this run tested."""
    rows = []
    for length, (seq, digit) in lesson.LENGTH_TABLE.items():
        if f"length_{length}_seq_acc" not in e:
            continue
        for kind, words, value, items in [
            ("seq", "exact sequences", seq / 100, 1),
            ("digit", "digits", digit / 100, length),
        ]:
            claim = f"length {length}: {words} (trained on 10)"
            values = per_seed(e, f"length_{length}_{kind}_acc", seeds)
            n_lesson, n = lesson.TEST_SIZE * items, test_size * items
            rows.append(accuracy_claim(f"l10-length-{length}-{kind}", claim, value, values, n_lesson, n))
    return rows


def data_claims(d):
    """Lesson 10's guess at a habit: sorted random 10-digit inputs start with 0 (end with 9) about
    two times in three (metrics/data/summary.json)."""
    rows = []
    for key, name, expected in [
        ("starts_with_0", "start with 0", lesson.SORTED_STARTS_WITH_0),
        ("ends_with_9", "end with 9", lesson.SORTED_ENDS_WITH_9),
    ]:
        value = d.get(f"length_10_{key}")
        if value is not None:
            claim = f'sorted 10-digit outputs {name} "two times in three" (our test set)'
            rows.append(about(f"l10-habit-{key}", L10, claim, expected, value))
    # The chance itself, a check of the lesson's arithmetic rather than of data: a 10-digit sequence
    # holds at least one 0 (one 9) with probability 1 - 0.9^10
    claim = 'sorted 10-digit outputs start with 0 "two times in three": the exact chance, 1 - 0.9^10 '
    claim += "(arithmetic)"
    rows.append(about("l10-habit-exact", L10, claim, lesson.SORTED_STARTS_WITH_0, 1 - 0.9**10))
    return rows

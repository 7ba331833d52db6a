"""Claims on generating and measuring (lesson 10, part 4): greedy against teacher forcing, the
lesson's example, the length table, and the habit the lesson guesses at (metrics/evaluate/summary.json,
metrics/evaluate/example.json, metrics/data/summary.json)."""

from pipeline.core import lesson
from pipeline.report.claims.rules import L10, PAPER, about, accuracy_margin, exact, note, per_seed, seed_range

ACCURACY_MARGIN_RULE = "2 binomial s.e."
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


def evaluation_claims(e, seeds, test_size, trained_length, example):
    return [
        *headline_claims(e, seeds, test_size, trained_length),
        *beam_claims(e),
        *example_claims(example),
        *length_claims(e, seeds, test_size),
    ]


def accuracy_claim(id, claim, expected, values, n):
    """An accuracy over n test items: the lesson's value against our seeds' range, 2 s.e. wide."""
    margin, rule = accuracy_margin(expected, n), ACCURACY_MARGIN_RULE
    return seed_range(id, L10, claim, expected, values, margin, percent=True, margin_rule=rule)


def headline_claims(e, seeds, test_size, trained_length):
    rows = []
    for id, key, claim, expected in HEADLINE_ACCURACIES:
        n = test_size * (trained_length if "digit" in key else 1)
        rows.append(accuracy_claim(id, claim, expected, per_seed(e, key, seeds), n))
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
        for kind, words, value, n in [
            ("seq", "exact sequences", seq / 100, test_size),
            ("digit", "digits", digit / 100, test_size * length),
        ]:
            claim = f"length {length}: {words} (trained on 10)"
            values = per_seed(e, f"length_{length}_{kind}_acc", seeds)
            rows.append(accuracy_claim(f"l10-length-{length}-{kind}", claim, value, values, n))
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
            claim = f'sorted 10-digit outputs {name} "two times in three"'
            rows.append(about(f"l10-habit-{key}", L10, claim, expected, value))
    return rows

"""Findings on lesson 10's model: its training loss, its accuracy by length, how it reads its input."""

import statistics

from pipeline.core import lesson
from pipeline.report.findings.finding import Figure, Finding, plural
from pipeline.report.inputs import memory_tokens
from pipeline.study.text import pct

LOOKS_UP = 2  # attention on the digit written, over what even attention would give, to say "looks up"


def training(params, t):
    text = (
        f"After {params.train.steps:,} steps the loss of one batch is {t['loss_final']:.3f} ± "
        f"{t['loss_final_std']:.3f} over {plural(len(params.train.seeds), 'seed')} (the lesson: "
        f"{lesson.LOSS_BY_STEP[1200]} after 1,200 steps), {t['loss_gap_to_floor']:.3f} above the floor "
        f"of {t['loss_floor']:.3f} that label smoothing sets: the entropy of the smoothed target, the "
        f"lowest loss there is (the lesson: {lesson.LOSS_FLOOR})."
    )
    caption = 'The loss of every seed against its floor (lesson 10, "La pérdida y su piso").'
    return Finding("Training loss and its floor", text, (Figure("loss.png", caption),))


def accuracy_by_length(params, e):
    """Greedy, teacher forcing and beam at the trained length; at the lengths two away from it, the
    lesson's finding that the model learned one length, not sorting."""
    trained = max(params.data.train_lengths)
    beam = f", the paper's beam search {pct(e['beam_seq_acc'])}" if "beam_seq_acc" in e else ""
    at_trained = (
        f"Trained on length {', '.join(map(str, params.data.train_lengths))}, greedy decoding sorts "
        f"{pct(e['greedy_seq_acc'])} ± {pct(e['greedy_seq_acc_std'])} of held-out sequences exactly and "
        f"{pct(e['greedy_digit_acc'])} of digits (the lesson: {pct(lesson.GREEDY_SEQ_ACC)} and "
        f"{pct(lesson.GREEDY_DIGIT_ACC)}); teacher forcing gives {pct(e['tf_seq_acc'])}{beam}."
    )
    caption = (
        "Exact-sequence accuracy by input length, seed range, lesson values as diamonds "
        '("Secuencias perfectas según el largo").'
    )
    text = "\n\n".join(filter(None, [at_trained, elsewhere(params, e, trained)]))
    return Finding("Accuracy by length", text, (Figure("length_accuracy.png", caption),))


def elsewhere(params, e, trained):
    """The lengths two away from the trained one, against the lesson's, and where seeds disagree."""
    tested = [n for n in params.data.test_lengths if f"length_{n}_seq_acc" in e]
    near = [n for n in (trained + 2, trained - 2) if n in tested]
    if not near:
        return ""
    stated = {n: lesson.LENGTH_TABLE[n][0] for n in near if n in lesson.LENGTH_TABLE}
    at = ", ".join(
        f"{pct(e[f'length_{n}_seq_acc'])} at {n} digits"
        + (f" against the lesson's {stated[n]:.1f} %" if n in stated else "")
        for n in near
    )
    falls = all(e[f"length_{n}_seq_acc"] < e["greedy_seq_acc"] - 0.2 for n in near)
    spread = max(tested, key=lambda n: e[f"length_{n}_seq_acc_std"])
    lead = (
        "Away from the trained length it fails, as the lesson found: it learned to sort sequences of "
        "one length, not to sort: "
        if falls
        else "Two digits away from the trained length: "
    )
    return (
        f"{lead}{at}. The seeds disagree most at length {spread} "
        f"(± {pct(e[f'length_{spread}_seq_acc_std'])}); the length study below asks what it would take "
        "to generalise."
    )


def cross_attention(example):
    """How much of the last decoder layer's cross-attention falls on the digit being written."""
    outputs = example.get("outputs_by_seed", {})
    correct = sum(out == example["output"] for out in outputs.values())
    inputs, written = example["input"], example["output"]
    memory = memory_tokens(example)  # one per column: the inputs, with BOS first for some schemes
    last = example["cross_attention"][-1]  # [head][output step][memory row]
    share = statistics.fmean(
        sum(w for j, w in enumerate(head[i]) if memory[j] == str(digit))
        for head in last
        for i, digit in enumerate(written)
    )
    even = statistics.fmean(memory.count(str(digit)) / len(memory) for digit in written)
    looks_up = share > LOOKS_UP * even
    text = (
        f"On the lesson's example, {' '.join(map(str, inputs))}, seed {example['seed']} writes "
        f"{' '.join(map(str, written))}"
        + (f" ({correct} of {plural(len(outputs), 'seed')} write the same)" if outputs else "")
        + f". In the last layer each step puts {pct(share)} of its cross-attention on the input "
        f"positions that hold the digit it writes (attention spread evenly would put {pct(even)} there)"
        + (": it looks the next digit up." if looks_up else ".")
    )
    title = "How it sorts: each step looks up the next digit" if looks_up else "Where each step looks"
    caption = "Cross-attention of every head while sorting the lesson's example."
    return Finding(title, text, (Figure("cross_attention.png", caption),))

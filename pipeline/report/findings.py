"""The report's key findings: what each figure shows, in a few sentences with this run's numbers.

Each finding is written from the saved metrics only; a number a run did not measure (a shallower
probe, a shorter training) leaves its sentence out rather than failing the report.
"""

import statistics
from dataclasses import dataclass

from pipeline.core import lesson
from pipeline.report import study_section
from pipeline.study.text import pct


@dataclass(frozen=True)
class Figure:
    file: str  # under reports/figures/
    caption: str


@dataclass(frozen=True)
class Finding:
    title: str
    text: str
    figures: tuple[Figure, ...]


def findings(params, m):
    """Every key finding, in the report's order: lesson 10, lesson 6, the length study, speed."""
    return [
        training(params, m["train"]),
        accuracy_by_length(params, m["evaluate"]),
        cross_attention(m["example"]),
        residual(m["probe"]),
        layernorm(m["probe"]),
        gradient_depth(params.model.layers, m["probe"]),
        jacobian_sweep(m["probe"]),
        length_study(params, m["study"]),
        why_it_fails(m["diagnosis"]),
        speed(m["benchmark"]),
    ]


def training(params, t):
    text = (
        f"After {params.train.steps:,} steps the loss of one batch is {t['loss_final']:.3f} ± "
        f"{t['loss_final_std']:.3f} over {len(params.train.seeds)} seeds (the lesson: "
        f"{lesson.LOSS_BY_STEP[1200]} after 1,200 steps), {t['loss_gap_to_floor']:.3f} above the floor "
        f"of {t['loss_floor']:.3f} that label smoothing sets: the entropy of the smoothed target, the "
        f"lowest loss there is (the lesson: {lesson.LOSS_FLOOR})."
    )
    caption = 'The loss of every seed against its floor (lesson 10, "La pérdida y su piso").'
    return Finding("Training loss and its floor", text, (Figure("loss.png", caption),))


def accuracy_by_length(params, e):
    """Greedy, teacher forcing and beam at the trained length; the lesson's finding that the model
    learned one length, not sorting, at the lengths nearest it."""
    trained = max(params.data.train_lengths)
    beam = f", the paper's beam search {pct(e['beam_seq_acc'])}" if "beam_seq_acc" in e else ""
    tested = [n for n in params.data.test_lengths if f"length_{n}_seq_acc" in e]
    near = [n for n in (trained + 2, trained - 2) if n in tested]
    stated = {n: lesson.LENGTH_TABLE[n][0] for n in near if n in lesson.LENGTH_TABLE}
    at = ", ".join(
        f"{pct(e[f'length_{n}_seq_acc'])} at {n} digits"
        + (f" against the lesson's {stated[n]:.1f} %" if n in stated else "")
        for n in near
    )
    spread = max(tested, key=lambda n: e[f"length_{n}_seq_acc_std"])
    text = (
        f"Trained on length {', '.join(map(str, params.data.train_lengths))}, greedy decoding sorts "
        f"{pct(e['greedy_seq_acc'])} ± {pct(e['greedy_seq_acc_std'])} of held-out sequences exactly and "
        f"{pct(e['greedy_digit_acc'])} of digits (the lesson: {pct(lesson.GREEDY_SEQ_ACC)} and "
        f"{pct(lesson.GREEDY_DIGIT_ACC)}); teacher forcing gives {pct(e['tf_seq_acc'])}{beam}.\n\n"
        "Away from the trained length it fails, as the lesson found: it learned to sort sequences of "
        "one length, not to sort" + (f": {at}" if at else "") + ". The seeds disagree most at length "
        f"{spread} (± {pct(e[f'length_{spread}_seq_acc_std'])}); the length study below asks what it "
        "would take to generalise."
    )
    caption = (
        "Exact-sequence accuracy by input length, seed range, lesson values as diamonds "
        '("Secuencias perfectas según el largo").'
    )
    return Finding("Accuracy by length, as in the lesson", text, (Figure("length_accuracy.png", caption),))


def cross_attention(example):
    """How much of the last decoder layer's cross-attention falls on the digit being written."""
    outputs = example.get("outputs_by_seed", {})
    correct = sum(out == example["output"] for out in outputs.values())
    inputs, written = example["input"], example["output"]
    last = example["cross_attention"][-1]  # [head][output step][input position]
    share = statistics.fmean(
        sum(w for j, w in enumerate(head[i]) if inputs[j] == digit)
        for head in last
        for i, digit in enumerate(written)
    )
    uniform = statistics.fmean(inputs.count(digit) / len(inputs) for digit in written)
    text = (
        f"On the lesson's example, {' '.join(map(str, inputs))}, seed {example['seed']} writes "
        f"{' '.join(map(str, written))}"
        + (f" ({correct} of {len(outputs)} seeds write the same)" if outputs else "")
        + f". In the last layer each step puts {pct(share)} of its cross-attention on the input "
        f"positions that hold the digit it writes (attention spread evenly would put {pct(uniform)} "
        "there): it looks the next digit up."
    )
    caption = "Cross-attention of every head while sorting the lesson's example."
    return Finding(
        "How it sorts: each step looks up the next digit", text, (Figure("cross_attention.png", caption),)
    )


def residual(p):
    depth = lesson.RESIDUAL_CELL_LAYERS
    if f"residual_without_sum_{depth}" not in p:
        text = "This run's probe did not reach the lesson's 12 layers; the figure shows the depths it ran."
    else:
        text = (
            f"Rerunning lesson 6's NumPy cell ({depth} stacked FFNs): with the residual sum the derivative "
            f"of the output with respect to one input coordinate stays between "
            f"{p['residual_with_sum_min']:.2f} and {p['residual_with_sum_max']:.2f}; without it, it "
            f"falls from {p['residual_without_sum_1']:.3g} at one layer to "
            f"{p[f'residual_without_sum_{depth}']:.4g} at {depth}, the lesson's numbers to every digit "
            f"it prints. Finite differences agree with autograd to a relative "
            f"{p['residual_fd_max_rel_diff']:.1e}."
        )
    caption = "Lesson 6's residual cell: with the sum the derivative stays near 1; without it, it vanishes."
    return Finding(
        "Lesson 6: the residual sum keeps the derivative near 1", text, (Figure("residual.png", caption),)
    )


def layernorm(p):
    text = (
        "Lesson 6's LayerNorm cell, rerun: every row leaves with mean 0 and deviation 1, whatever it "
        f"came in with. Adding 10 to row 4 moves row 0 by {p['layernorm_row0_shift_per_row']:.1f} when "
        f"each row is normalised on its own (LayerNorm) and by {p['layernorm_row0_shift_per_column']:.3f} "
        "when each column is (as a batch norm would): a position's output depends on that position only."
    )
    caption = "Lesson 6's LayerNorm cell: per-row statistics, and per row against per column."
    return Finding("Lesson 6: LayerNorm works row by row", text, (Figure("layernorm.png", caption),))


def gradient_depth(layers, p):
    """Where the loss gradient arrives in the real model: the bottom against the top, and how even
    it is across the encoder's sublayers."""
    trained = p.get("grad_post_trained_encoder_max_over_min")
    text = (
        f"In the real model ({layers} layer{'s' if layers != 1 else ''} a side), the loss gradient "
        f"reaching the encoder's first sublayer is {p['grad_post_init_bottom_over_top']:.3f} times the "
        "one at the decoder's last, post-norm at initialisation (pre-norm "
        f"{p['grad_pre_init_bottom_over_top']:.3f}). Across the encoder's sublayers pre-norm passes the "
        f"same gradient to each (largest over smallest {p['grad_pre_init_encoder_max_over_min']:.2f}); "
        f"post-norm does not ({p['grad_post_init_encoder_max_over_min']:.1f}"
        + (f", and {trained:.1f} after training)." if trained is not None else ").")
    )
    caption = "The loss gradient at every sublayer's input of the real model, post- and pre-norm."
    return Finding("Gradients through the real model", text, (Figure("gradient_depth.png", caption),))


def jacobian_sweep(p):
    factor = {
        (norm, sums): p.get(f"jacobian_encoder_{norm}_{sums}_per_layer")
        for norm in ("post", "pre")
        for sums in ("with_sum", "without_sum")
    }
    if None in factor.values():
        text = "This run's sweep has too few depths to fit a factor per layer; the figure shows it."
    else:
        text = (
            "At initialisation, each layer stacked on the encoder multiplies the norm of its input-output "
            f"Jacobian (along a fixed direction) by {factor['post', 'with_sum']:.3f} with the residual sum "
            f"and by {factor['post', 'without_sum']:.3f} without it (post-norm; pre-norm "
            f"{factor['pre', 'with_sum']:.3f} and {factor['pre', 'without_sum']:.3f}): the sum is what "
            "lets depth leave the signal's size alone, as lesson 6 argues."
        )
    caption = "Input-output Jacobian norms at initialisation from 1 to 12 layers a side."
    return Finding("Depth at initialisation", text, (Figure("jacobian_sweep.png", caption),))


def length_study(params, study):
    text = study_section.headline(study, params.study.variants) or "The length study ran no variant."
    return Finding(
        "Length generalisation: how far the variants get",
        text + " The section below has the table and what the variants show.",
        (
            Figure(
                "study_length.png",
                "Exact sequences by input length for each variant of the study, seed range as a band.",
            ),
            Figure(
                "study_heatmap.png",
                "Every variant at every tested length, mean over seeds; trained lengths outlined.",
            ),
        ),
    )


def why_it_fails(diag):
    """The pace at which the lesson's model walks the sorted input, at the shortest and longest
    diagnosis lengths: the length it trained on sets it."""
    ref = max(diag["trained_lengths"])
    lengths = [n for n in sorted(int(k) for k in diag["lengths"]) if n != ref]
    ends = sorted({lengths[0], lengths[-1]}) if lengths else []  # the shortest and the longest
    pace = " and ".join(
        f"{diag['lengths'][str(n)]['rank_speed']:.2f} at length {n} ({n}/{ref} = {n / ref:.2f})" for n in ends
    )
    text = (
        f"The model trained on length {ref} writes, at step t, the digit a fraction t/{ref} of the way "
        "through the sorted input: it walks the input at a pace, relative to the correct one place a "
        f"step, of {pace}. It sorts by proportion, with the length fixed at {ref}; its cross-attention "
        "looks where it writes. The section below has the evidence."
    )
    return Finding(
        f"Why the lesson's model fails: a clock set to {ref}",
        text,
        (
            Figure(
                "study_diagnosis.png",
                f"Why the model trained on length {ref} fails elsewhere: the pace of its outputs.",
            ),
            Figure(
                "study_attention.png",
                "Where the cross-attention looks, inputs ordered by their rank (models/ and the three "
                "most accurate variants).",
            ),
        ),
    )


def speed(b):
    longest = max(int(k.removeprefix("decode_speedup_len")) for k in b if k.startswith("decode_speedup_len"))
    text = (
        f"On one thread our training step is {b['train_step_speedup']:.2f}x as fast as nn.Transformer's "
        f"with the same recipe, and the key/value cache makes greedy decoding "
        f"{b[f'decode_speedup_len{longest}']:.1f}x as fast at {longest} tokens, with the same tokens. "
        "Timings come from `python -m pipeline.tools.benchmark` (metrics/benchmark.json), a script rather "
        "than a stage, on the machine its title names: they change from run to run."
    )
    caption = "Our training step against nn.Transformer, cached decoding, throughput, seeds side by side."
    return Finding("Speed", text, (Figure("benchmark.png", caption),))

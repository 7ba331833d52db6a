"""Every numeric claim of lessons 6 and 10 (and the paper's where we check one), as table rows."""

import math
import statistics

from pipeline.report.claims import (
    L6,
    L10,
    PAPER,
    about,
    accuracy_margin,
    exact,
    note,
    printed,
    printed_sci,
    seed_range,
)

LESSON_LOSS = {300: 0.928, 600: 0.674, 900: 0.607, 1200: 0.579}
LESSON_LENGTHS = {6: (0.0, 28.6), 8: (9.0, 57.0), 10: (99.3, 99.9), 12: (45.4, 82.1), 14: (0.3, 37.2)}
LESSON_EXAMPLE = ([2, 9, 2, 0, 0, 2, 6, 7, 9, 4], [0, 0, 2, 2, 2, 4, 6, 7, 9, 9])


def per_seed(metrics, key, seeds):
    return [metrics[f"{key}_seed{s}"] for s in seeds]


def loss_noise(losses_by_seed, step, window=100):
    """Batch-to-batch spread of the loss over the `window` steps up to `step`, mean over seeds."""
    spreads = [statistics.stdev(losses[max(0, step - window) : step]) for losses in losses_by_seed]
    return statistics.fmean(spreads)


def architecture_claims(a):
    return [
        exact(
            "l10-mask",
            L10,
            "causal mask: changing the last token leaves outputs 0-3 unchanged",
            True,
            a["mask_demo_first4_unchanged"],
        ),
        exact(
            "l10-mask-shape",
            L10,
            "MultiHead demo output shape",
            "(2, 5, 32)",
            str(tuple(a["mask_demo_output_shape"])),
        ),
        exact("l10-heads", L10, "heads h", 4, a["heads"]),
        exact("l10-dk", L10, "d_k = 32 / 4", 8, a["d_k"]),
        exact("l10-enc-params", L10, "encoder layer parameters", 12_704, a["encoder_layer_params"]),
        exact(
            "l10-enc-attn",
            L10,
            "encoder layer: attention parameters",
            4_224,
            a["encoder_layer_attention_params"],
        ),
        exact("l10-enc-ffn", L10, "encoder layer: FFN parameters", 8_352, a["encoder_layer_ffn_params"]),
        exact(
            "l10-enc-ln", L10, "encoder layer: LayerNorm parameters", 128, a["encoder_layer_layernorm_params"]
        ),
        exact(
            "l10-enc-shape",
            L10,
            "encoder layer maps (2, 10, 32) to",
            "(2, 10, 32)",
            str(tuple(a["encoder_layer_output_shape"])),
        ),
        exact("l10-dec-params", L10, "decoder layer parameters", 16_992, a["decoder_layer_params"]),
        exact(
            "l10-dec-cross",
            L10,
            "cross-attention table for 7 written and 10 input tokens",
            "7 x 10",
            " x ".join(map(str, a["cross_attention_table_shape"])),
        ),
        exact(
            "l10-dec-shape",
            L10,
            "decoder layer output shape",
            "(2, 7, 32)",
            str(tuple(a["decoder_layer_output_shape"])),
        ),
        exact("l10-emb-rows", L10, "E has one row per token (10 digits + BOS)", 11, a["embedding_rows"]),
        exact("l10-logits", L10, "logits (1 x 32)(32 x 11): one score per token", 11, a["logits_shape"][-1]),
        exact("l10-params", L10, "Transformer parameters", 59_744, a["model_params"]),
        exact(
            "l10-emb-params",
            L10,
            "embedding parameters, counted once though used three times",
            352,
            a["embedding_params"],
        ),
        exact(
            "paper-shared-emb",
            PAPER,
            "section 3.4: one matrix for both embeddings and the pre-softmax projection",
            1,
            a["embedding_matrices"],
            f"{a['embedding_matrices']} matrix",
        ),
        exact(
            "l6-width",
            L6,
            "one width: a sublayer returns T x d_model at d_model 512 (T = 7 and 30)",
            "(1, 7, 512), (1, 30, 512)",
            ", ".join(str(tuple(x)) for x in a["paper_width_output_shapes"]),
        ),
        exact(
            "l6-quiz-order",
            L6,
            "quiz: x + LayerNorm(Sublayer(x)) differs from the paper's operation",
            True,
            a["post_norm_differs_from_x_plus_norm"],
        ),
        printed(
            "paper-emb-scale",
            PAPER,
            "section 3.4: embeddings multiplied by sqrt(d_model) = sqrt(32)",
            "5.657",
            a["embedding_scale"],
            3,
        ),
    ]


def training_claims(t, seeds, losses_by_seed, label_smoothing):
    rows = []
    for step, value in LESSON_LOSS.items():
        key = f"loss_step_{step}"
        if f"{key}_seed{seeds[0]}" not in t:
            rows.append(
                note(
                    f"l10-loss-{step}",
                    L10,
                    f"loss at step {step}",
                    value,
                    "not logged",
                    "train.log_every does not divide this step",
                )
            )
            continue
        margin = 2 * loss_noise(losses_by_seed, step)
        rows.append(
            seed_range(
                f"l10-loss-{step}",
                L10,
                f"loss at step {step} (one batch of 64)",
                value,
                per_seed(t, key, seeds),
                margin,
                margin_rule="2 x batch-loss std, last 100 steps",
            )
        )
    rows.append(
        note(
            "l10-time",
            L10,
            '1,200 steps take "unos diez segundos"',
            "about 10 s",
            "not a result: this machine's wall time is in runs/train.json",
            "hardware-dependent: the lesson ran on Colab, on hardware it does not name",
        )
    )
    floor = t["loss_floor"]
    correct_share = 1 - label_smoothing + label_smoothing / 11
    rows += [
        printed(
            "l10-q-correct",
            L10,
            "label-smoothed target: correct token (eps 0.1, V 11)",
            "0.909",
            correct_share,
            3,
        ),
        printed(
            "l10-q-other",
            L10,
            "label-smoothed target: each of the other ten",
            "0.0091",
            label_smoothing / 11,
            4,
        ),
        printed("l10-floor", L10, "minimum loss = entropy of q", "0.514", floor, 3),
        printed(
            "l10-floor-correct",
            L10,
            "floor: the correct token's share",
            "0.087",
            -correct_share * math.log(correct_share),
            3,
        ),
        printed(
            "l10-floor-others",
            L10,
            "floor: the other ten tokens' share",
            "0.427",
            floor + correct_share * math.log(correct_share),
            3,
        ),
    ]
    gaps = [v - floor for v in per_seed(t, "loss_step_1200", seeds)] if "loss_step_1200" in t else []
    if gaps:
        margin = 2 * loss_noise(losses_by_seed, 1200)
        rows.append(
            seed_range(
                "l10-gap",
                L10,
                "gap between the final loss and the floor",
                0.065,
                gaps,
                margin,
                margin_rule="as the step-1,200 loss",
            )
        )
    return rows


def evaluation_claims(e, seeds, test_size, trained_length, example):
    rows = []
    for id, key, name, value in [
        ("l10-greedy-seq", "greedy_seq_acc", "greedy: exact sequences (length 10)", 0.995),
        ("l10-greedy-digit", "greedy_digit_acc", "greedy: digits (length 10)", 0.999),
        ("l10-tf-seq", "tf_seq_acc", 'teacher forcing: exact sequences, "the same"', 0.995),
        ("l10-tf-digit", "tf_digit_acc", 'teacher forcing: digits, "the same"', 0.999),
    ]:
        n = test_size * (trained_length if "digit" in key else 1)
        rows.append(
            seed_range(
                id,
                L10,
                name,
                value,
                per_seed(e, key, seeds),
                accuracy_margin(value, n),
                percent=True,
                margin_rule="2 binomial s.e.",
            )
        )
    if "beam_seq_acc" in e:
        rows.append(
            note(
                "paper-beam",
                PAPER,
                "section 6.1: decoding with beam search (beam 4, length penalty 0.6), "
                "where the lesson decodes greedily",
                f"greedy {100 * e['greedy_seq_acc']:.1f} %",
                f"beam {100 * e['beam_seq_acc']:.1f} ± {100 * e['beam_seq_acc_std']:.1f} %",
                "the paper's beam is for translation; on sorting, every hypothesis has the input's length, "
                "so the length penalty cannot change the ranking",
            )
        )
    outputs = example.get("outputs_by_seed", {}) if example else {}
    if example and example["input"] == LESSON_EXAMPLE[0]:
        correct = sum(out == LESSON_EXAMPLE[1] for out in outputs.values())
        rows.append(
            exact(
                "l10-example",
                L10,
                "2 9 2 0 0 2 6 7 9 4 sorts to 0 0 2 2 2 4 6 7 9 9",
                f"{len(outputs)}/{len(outputs)} seeds",
                f"{correct}/{len(outputs)} seeds",
            )
        )
    for length, (seq, digit) in LESSON_LENGTHS.items():
        if f"length_{length}_seq_acc" not in e:
            continue
        for kind, value, n in [("seq", seq / 100, test_size), ("digit", digit / 100, test_size * length)]:
            rows.append(
                seed_range(
                    f"l10-length-{length}-{kind}",
                    L10,
                    f"length {length}: {'exact sequences' if kind == 'seq' else 'digits'} (trained on 10)",
                    value,
                    per_seed(e, f"length_{length}_{kind}_acc", seeds),
                    accuracy_margin(value, n),
                    percent=True,
                    margin_rule="2 binomial s.e.",
                )
            )
    return rows


def data_claims(d):
    rows = []
    for key, name in [("starts_with_0", "start with 0"), ("ends_with_9", "end with 9")]:
        value = d.get(f"length_10_{key}")
        if value is not None:
            rows.append(
                about(
                    f"l10-habit-{key}",
                    L10,
                    f'sorted 10-digit outputs {name} "two times in three"',
                    2 / 3,
                    value,
                )
            )
    return rows


def probe_claims(p):
    rows = [
        exact("l6-paths-2", L6, "(I + A2)(I + A1) expands into four terms", 4, p["paths_terms_2"]),
        exact(
            "l6-ln-eps",
            L6,
            'LayerNorm eps = 1e-5 "in almost every implementation" (ours)',
            1e-5,
            p["layernorm_eps_model"],
        ),
        exact(
            "l6-ffn-weights", L6, "FFN weights 2 d_model d_ff (512, 2,048)", 2_097_152, p["ffn_weights_paper"]
        ),
        exact(
            "l6-attn-weights", L6, "attention weights 4 d_model^2", 1_048_576, p["attention_weights_paper"]
        ),
        exact("l6-quiz-ffn", L6, "quiz: the FFN's two matrices hold", 2_097_152, p["ffn_weights_paper"]),
        exact(
            "l6-block",
            L6,
            "parameters per encoder block, biases and norms included",
            3_150_336,
            p["encoder_block_params_lesson6"],
            f"{p['encoder_block_params_lesson6']:,} (ours with attention biases: "
            f"{p['encoder_block_params_paper']:,}; see note)",
        ),
        about(
            "l6-six-blocks",
            L6,
            "six encoder blocks: about 18.9 million",
            18.9e6,
            p["encoder_params_lesson6_6"],
            " M",
            1e6,
        ),
        about(
            "paper-base",
            L10,
            "the paper's base model has 65 million parameters (shared 37,000 vocabulary)",
            65e6,
            p["base_model_params"],
            " M",
            1e6,
        ),
    ]
    means = [p[f"layernorm_in_mean_row{i}"] for i in range(5)]
    for i, expected in enumerate(["2.772", "2.894", "0.984", "1.743", "2.656"]):
        rows.append(
            printed(f"l6-ln-in-mean-{i}", L6, f"LayerNorm cell: input mean of row {i}", expected, means[i], 3)
        )
    out_means = [p[f"layernorm_out_mean_row{i}"] for i in range(5)]
    out_stds = [p[f"layernorm_out_std_row{i}"] for i in range(5)]
    aff_means = [p[f"layernorm_affine_mean_row{i}"] for i in range(5)]
    aff_stds = [p[f"layernorm_affine_std_row{i}"] for i in range(5)]
    rows += [
        exact(
            "l6-ln-out",
            L6,
            "LayerNorm cell: every row leaves with mean 0 and deviation 1",
            "0, 1",
            f"{_span(out_means)}, {_span(out_stds)}",
        ),
        exact(
            "l6-ln-affine",
            L6,
            "LayerNorm cell: gamma 4, beta -1 give mean -1 and deviation 4",
            "-1, 4",
            f"{_span(aff_means)}, {_span(aff_stds)}",
        ),
        printed(
            "l6-ln-row",
            L6,
            "touching row 4 moves row 0 (normalising per row)",
            "0.0",
            p["layernorm_row0_shift_per_row"],
            1,
        ),
        printed(
            "l6-ln-col",
            L6,
            "touching row 4 moves row 0 (normalising per column)",
            "1.889",
            p["layernorm_row0_shift_per_column"],
            3,
        ),
    ]
    if all(f"{k}_{n}" in p for k in ("residual_without_sum", "paths_terms") for n in (1, 12)):
        rows += [
            exact(
                "l6-paths-n",
                L6,
                "N blocks give 2^N terms, exactly one through no sublayer (N = 12)",
                "4096 terms, 1 identity",
                f"{p['paths_terms_12']} terms, {p['paths_through_no_sublayer_12']} identity",
            ),
            printed_sci(
                "l6-res-without-1",
                L6,
                "residual cell: one FFN without the sum",
                "1.09e-01",
                p["residual_without_sum_1"],
                2,
            ),
            printed_sci(
                "l6-res-without-12",
                L6,
                "residual cell: twelve FFNs without the sum",
                "5.182e-07",
                p["residual_without_sum_12"],
                3,
            ),
            note(
                "l6-res-orders",
                L6,
                'without the sum: "seven orders of magnitude" from 1 to 12 layers',
                7,
                f"{p['residual_without_sum_orders_of_magnitude']:.2f} orders",
                "the lesson's own two numbers (0.109 and 5.182e-07, both reproduced to every digit) span 5.3 "
                "orders, and 6.3 from an input scale of 1: 'seven' is the lesson's rounding up, not ours",
            ),
            exact(
                "l6-res-with",
                L6,
                'residual cell: with the sum "between 1.00 and 1.80" all the way',
                "1.00 to 1.80",
                f"{p['residual_with_sum_min']:.2f} to {p['residual_with_sum_max']:.2f}",
            ),
        ]
    else:
        rows.append(
            note(
                "l6-depths",
                L6,
                "lesson 6's residual cell and paths at 1 and 12 layers",
                "1 and 12 layers",
                "not measured",
                "probe.depths lacks 1 or 12 in this run: those claims are not checked",
            )
        )
    return rows


def _span(values):
    """Values that print alike (at 3 decimals) shown once; otherwise their range."""
    low, high = (f"{v:.3f}".replace("-0.000", "0.000") for v in (min(values), max(values)))
    text = low if low == high else f"{low}..{high}"
    return text.rstrip("0").rstrip(".") if "." in text and ".." not in text else text

"""The study's measurements: a model's exact-sequence accuracy at every length, and the
diagnosis of how it sorts one set of equal-length sources: which outputs fail and how (by output
position, digit, repeats, the lesson's "starts with 0 / ends with 9" habits), how far through the
sorted input each decoding step moves, and where its cross-attention looks; and the mean of such
numbers over seeds."""

import math
import statistics

import numpy as np
import torch

from pipeline.core.batching import decoder_input, make_batch
from pipeline.core.decoding import accuracy_by_length, decode_set, sorted_tests, teacher_forced
from pipeline.model.hooks import attention_weights
from pipeline.model.transformer import MultiHeadAttention
from pipeline.study.attention import Sigmoid, rounded_gates
from pipeline.tokens import DIGITS

# What the diagnosis keeps of each trained variant (the pipeline's checkpoints keep everything).
VARIANT_DIAGNOSIS = (
    "seq_acc",
    "rank_speed",
    "attention_speed",
    "attention_on_written_digit",
    "emitted_rank",
    "correct_rank",
    "attention_by_rank",
    "first_error",
    "seq_acc_by_repeats",
    "attention_mass",
    "hard_gate_seq_acc",
)
REPEAT_BUCKETS = ("1", "2", "3", "4", "5", "6", "7+")  # the largest number of copies of one digit
FIRST_ERRORS = ("too_few_copies", "extra_copy", "skipped_digit", "other")


def first_errors(pred, target):
    """Each wrong output's first mistake, as shares of all outputs: it moved on from a digit before
    writing all its copies (too_few_copies), wrote one copy too many (extra_copy), jumped past a
    digit that was due (skipped_digit), or anything else (other)."""
    rows = np.flatnonzero((pred != target).any(1))
    counts = dict.fromkeys(FIRST_ERRORS, 0)
    for i in rows:
        j = int(np.argmax(pred[i] != target[i]))
        wrote, due, before = pred[i, j], target[i, j], pred[i, j - 1] if j else -1
        if due == before and wrote > due:
            counts["too_few_copies"] += 1
        elif wrote == before and due > wrote:
            counts["extra_copy"] += 1
        elif wrote > due:
            counts["skipped_digit"] += 1
        else:
            counts["other"] += 1
    return {k: v / len(pred) for k, v in counts.items()}


def length_accuracy(model, tests, batch_size, device="cpu"):
    """Greedy (key/value-cached) exact-sequence and digit accuracy at every length of `tests`
    ({length: sources}) the model reads: rows {length, seq_acc, digit_acc}, in the order of `tests`."""
    readable = {n: source for n, source in tests.items() if n <= model.longest_source}
    rows, _ = accuracy_by_length(model, sorted_tests(readable), batch_size, device)
    return [{k: row[k] for k in ("length", "seq_acc", "digit_acc")} for row in rows]


def midpoint_rank(source, digits):
    """Where each digit falls in its row's sorted source: (#smaller + #smaller-or-equal) / 2."""
    less = (source[:, None, :] < digits[:, :, None]).sum(2)
    less_equal = (source[:, None, :] <= digits[:, :, None]).sum(2)
    return (less + less_equal) / 2  # (B, T)


def slope(values):
    """Least-squares slope of values against their index."""
    x = np.arange(len(values))
    return float(np.polyfit(x, values, 1)[0])


def fit_steps(n):
    """The steps over which to measure how fast outputs move through the sorted input: the first 60 %
    (later steps of long inputs pile up on the largest digit), at least two."""
    return max(2, math.ceil(0.6 * n))


@torch.no_grad()
def cross_attention(model, source, output):
    """Last decoder layer's cross-attention (mean over heads) while it reads the model's own outputs,
    over the input positions only: (B, T_dec, T_enc)."""
    src = torch.as_tensor(source, dtype=torch.long)
    tgt_in = decoder_input(torch.as_tensor(output, dtype=torch.long))
    memory = model.encode(src)
    last = len(model.decoder) - 1
    with attention_weights(model.decoder[last]) as found:
        model.decode(tgt_in, memory)
    weights = found["cross"][0].mean(1).numpy()  # (B, T_dec, T_mem)
    return weights[:, :, weights.shape[2] - source.shape[1] :]  # without the BOS row of positions bos


def attention_by_rank(weights, source):
    """Cross-attention (B, T_dec, T_enc) with the input positions reordered by their rank in the
    sorted input (ties in input order), mean over rows: (T_dec, T_enc)."""
    order = np.argsort(source, axis=1, kind="stable")  # input position of rank 0, 1, ...
    return np.take_along_axis(weights, order[:, None, :], axis=2).mean(0)


@torch.no_grad()
def diagnose(model, source, batch_size=1000):
    """Numbers on how one model sorts one set of equal-length sources."""
    n = source.shape[1]
    target = np.sort(source, axis=1)
    pred = decode_set(model, source, batch_size)["greedy"].numpy()
    batch = make_batch(source, target, np.full(len(source), n))
    forced = teacher_forced(model, batch.src, batch.tgt_in).numpy()
    right = pred == target
    wrong_rows = ~right.all(1)
    counts_in = np.stack([(source == d).sum(1) for d in range(DIGITS)], 1)
    counts_out = np.stack([(pred == d).sum(1) for d in range(DIGITS)], 1)
    no0, no9 = counts_in[:, 0] == 0, counts_in[:, DIGITS - 1] == 0
    repeats = counts_in.max(1)
    emitted, correct = midpoint_rank(source, pred).mean(0), midpoint_rank(source, target).mean(0)
    weights = cross_attention(model, source[:200], pred[:200])  # (200, n, n)
    attention = attention_by_rank(weights, source[:200])
    on_written = (weights * (source[:200, None, :] == pred[:200, :, None])).sum(2)  # (200, n)
    attended = attention.argmax(1)  # the rank each step's cross-attention peaks at
    fit = fit_steps(n)
    correct_slope = slope(correct[:fit])
    first_error = right.argmin(1)[wrong_rows]
    return {
        "seq_acc": float(right.all(1).mean()),
        "digit_acc": float(right.mean()),
        "tf_seq_acc": float((forced == target).all(1).mean()),
        "sorted": float((np.diff(pred, axis=1) >= 0).all(1).mean()),
        "same_digits": float((counts_in == counts_out).all(1).mean()),
        "missing_digit": float(((counts_out == 0) & (counts_in > 0)).any(1).mean()),
        "extra_digit": float(((counts_out > 0) & (counts_in == 0)).any(1).mean()),
        "too_few_copies": float((counts_out < counts_in).any(1).mean()),
        "first_error_mean": float(first_error.mean()) if len(first_error) else None,
        "first_error": first_errors(pred, target),
        "starts_with_0_given_no_0": float((pred[no0, 0] == 0).mean()) if no0.any() else None,
        "ends_with_9_given_no_9": float((pred[no9, -1] == DIGITS - 1).mean()) if no9.any() else None,
        "inputs_without_0": int(no0.sum()),
        "inputs_without_9": int(no9.sum()),
        "rank_speed": slope(emitted[:fit]) / correct_slope,  # 1: one place of the sorted input a step
        "attention_speed": slope(attended[:fit]) / correct_slope,
        "attention_on_written_digit": float(on_written.mean()),  # cross-attention on the digit written
        "acc_by_position": right.mean(0).tolist(),
        "acc_by_digit": [
            float(right[target == d].mean()) if (target == d).any() else None for d in range(DIGITS)
        ],
        "seq_acc_by_repeats": {
            label: float(right.all(1)[mask].mean())
            for label in REPEAT_BUCKETS
            if (mask := repeats >= 7 if label == "7+" else repeats == int(label)).any()
        },
        "attention_mass": attention_mass(model, batch.src[:200], batch.tgt_in[:200]),
        **hard_gate_accuracy(model, source, target, batch_size),
        "emitted_rank": emitted.tolist(),
        "correct_rank": correct.tolist(),
        "attended_rank": attended.astype(float).tolist(),
        "attention_by_rank": attention.tolist(),
    }


def site_name(name):
    """An attention's name in the model (`encoder.0.attn`, `decoder.1.cross`) as the diagnosis
    reports it: encoder_0, decoder_1 (the decoder's self-attention), cross_1."""
    stack, layer, kind = name.split(".")
    return f"cross_{layer}" if kind == "cross" else f"{stack}_{layer}"


@torch.no_grad()
def attention_mass(model, src, tgt_in):
    """Each attention's total weight per query, mean over rows, heads and queries, teacher-forced: 1
    for a softmax (an average); for sigmoid gates, how many keys it sums (a count grows with the
    input, a calibration to the training lengths does not stay right)."""
    with attention_weights(model) as found:
        model(src, tgt_in)
    # a signed count weighs the input first, then the tokens written: its mass is the input's
    return {site_name(name): float(calls[0].sum(-1).mean()) for name, calls in found.items()}


@torch.no_grad()
def hard_gate_accuracy(model, source, target, batch_size):
    """Exact sequences with every sigmoid gate rounded to 0 or 1 at test time (none without gates):
    a model that counts keeps its accuracy; one that sums small graded weights loses it."""
    with rounded_gates(model) as gates:
        if not gates:
            return {}
        pred = decode_set(model, source, batch_size)["greedy"]
    return {"hard_gate_seq_acc": float((pred.numpy() == target).all(1).mean())}


def gate_biases(model):
    """Every gated attention's learned bias per head, by name as attention_mass names them."""
    return {
        site_name(name): m.weights.bias.flatten().tolist()
        for name, m in model.named_modules()
        if isinstance(m, MultiHeadAttention) and isinstance(m.weights, Sigmoid)
    }


def _mean(values):
    """Mean and sample std of the defined values (None where a seed had nothing to measure)."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return None, None
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def mean_over_seeds(runs):
    """Scalars: mean and std (each seed's value is a row of `seed_rows`); lists and dicts:
    element-wise means."""
    first = next(iter(runs.values()))
    out = {}
    for key, value in first.items():
        values = [r[key] for r in runs.values()]
        if isinstance(value, list) and value and isinstance(value[0], list):  # a map
            out[key] = np.mean(np.array(values), axis=0).tolist()
        elif isinstance(value, list):
            columns = zip(*values, strict=True)
            out[key] = [_mean(column)[0] for column in columns]
        elif isinstance(value, dict):
            out[key] = {k: _mean(r[key].get(k) for r in runs.values())[0] for k in value}
        else:
            out[key], out[f"{key}_std"] = _mean(values)
    return out


def seed_rows(model, length, runs):
    """One model's diagnosis at one length ({seed: diagnosis}), as tidy rows: the model, the length,
    the seed and each of its single numbers (its lists and maps are averaged by `mean_over_seeds`)."""
    return [
        {"model": model, "length": int(length), "seed": int(seed)}
        | {k: v for k, v in run.items() if not isinstance(v, (list, dict))}
        for seed, run in runs.items()
    ]

"""Evaluation: greedy decoding, the paper's beam search and teacher forcing on held-out
sequences, per length and seed (lesson 10, part 4: "Generar y medir" and "Lo que no aprendió")."""

import numpy as np
import torch

from pipeline.core.batching import make_batch
from pipeline.core.decoding import (
    accuracy,
    beam_search,
    greedy,
    greedy_cached,
    seed_test_draws,
    shifted_targets,
    teacher_forced,
)
from pipeline.core.lesson import EXAMPLE_INPUT
from pipeline.infra.device import set_up_worker
from pipeline.infra.tables import csv_text
from pipeline.model.checkpoint import check_fits, checkpoint_path, load_checkpoint
from pipeline.model.config import longest_source
from pipeline.model.hooks import attention_weights
from pipeline.model.reference import holds_reference, reference_gap
from pipeline.tokens import BOS

HEADLINE = ("greedy_seq_acc", "greedy_seq_acc_std", "tf_seq_acc", "beam_seq_acc")
HEADLINE_PATTERN = r"length_\d+_seq_acc"  # and the greedy accuracy at every tested length


def decode_set(model, source, batch_size, device, decoders):
    """Each of `decoders` ({name: fn(model, src) -> (B, T) tokens}) on one test set of equal-length
    rows, `batch_size` rows at a time: {name: (rows, T) tokens}."""
    out = {name: [] for name in decoders}
    for start in range(0, len(source), batch_size):
        src = torch.as_tensor(np.asarray(source[start : start + batch_size]), dtype=torch.long, device=device)
        for name, decode in decoders.items():
            out[name].append(decode(model, src).cpu())
    return {name: torch.cat(parts) for name, parts in out.items()}


def evaluate_model(model, test, lengths, batch_size, device, trained=(), beam_size=4, length_penalty=0.6):
    """Per length, greedy accuracy and the failing rows of greedy; at the `trained` lengths, where
    the lesson's claims read them, teacher forcing and the paper's beam search too."""
    results, failures = {}, {}
    for n in lengths:
        source, target = test[f"source_{n}"], test[f"target_{n}"]
        decoders = {"": greedy_cached}
        if n in trained:
            decoders["tf_"] = lambda m, src: teacher_forced(m, src, shifted_targets(src))
            decoders["beam_"] = lambda m, src: beam_search(m, src, beam_size, length_penalty)
        seed_test_draws(n)
        outputs = decode_set(model, source, batch_size, device, decoders)
        target_t = torch.as_tensor(target, dtype=torch.long)
        for name, pred in outputs.items():
            results[f"length_{n}_{name}seq_acc"], results[f"length_{n}_{name}digit_acc"] = accuracy(
                pred, target_t
            )
        pred = outputs[""]
        wrong = (pred != target_t).any(1).nonzero().flatten().tolist()
        failures[n] = [(source[i].tolist(), pred[i].tolist(), target[i].tolist()) for i in wrong]
    return results, failures


REFERENCE_ROWS = 1000  # teacher-forced sequences on which ours and nn.Transformer are compared


def evaluate_seed(params, seed, test, models_dir):
    """Worker: one checkpoint's accuracies at every test length, its greedy failures, the lesson's
    example, and how far its logits lie from nn.Transformer's holding the same weights."""
    device, lengths, ev = set_up_worker(params.train.device), params.data.test_lengths, params.evaluate
    path = checkpoint_path(models_dir, seed)
    model, _ = load_checkpoint(path, device)
    check_fits(model, lengths, path)
    trained = [n for n in lengths if n in params.data.train_lengths] or list(lengths)
    results, failures = evaluate_model(
        model, test, lengths, ev.batch_size, device, trained, ev.beam_size, ev.length_penalty
    )
    result = {**headline(results, params.data.train_lengths, lengths), **results}
    n = max(params.data.train_lengths) if max(params.data.train_lengths) in lengths else lengths[0]
    rows = slice(0, REFERENCE_ROWS)
    source, target = test[f"source_{n}"][rows], test[f"target_{n}"][rows]
    batch = make_batch(source, target, np.full(len(source), n))
    model.cpu()
    for dtype in (torch.float64, torch.float32) if holds_reference(model.config) else ():
        gap = reference_gap(model, batch.src, batch.tgt_in, dtype)
        name = str(dtype).split(".")[-1]
        result[f"reference_max_diff_{name}"], result[f"reference_logit_max_{name}"] = (
            gap["max_diff"],
            gap["logit_max"],
        )
    if holds_reference(model.config):  # the longest dot product: rounding errors grow with it
        result["reference_dot_length"] = max(model.config.d_model, model.config.d_ff)
    shown = {length: rows[: ev.show_failures] for length, rows in failures.items()}
    # The lesson's example, cut to what a model with a shorter max_len reads.
    example = EXAMPLE_INPUT[: longest_source(model.config)]
    return result, shown, cross_attention_example(model, example, "cpu")


def headline(results, trained_lengths, test_lengths):
    """Greedy, teacher forcing and beam search at the trained length(s), averaged over them."""
    at = [n for n in test_lengths if n in trained_lengths] or list(test_lengths)
    out = {}
    for name, key in [
        ("greedy_seq_acc", "seq_acc"),
        ("greedy_digit_acc", "digit_acc"),
        ("tf_seq_acc", "tf_seq_acc"),
        ("tf_digit_acc", "tf_digit_acc"),
        ("beam_seq_acc", "beam_seq_acc"),
        ("beam_digit_acc", "beam_digit_acc"),
    ]:
        out[name] = float(np.mean([results[f"length_{n}_{key}"] for n in at]))
    return out


@torch.no_grad()
def cross_attention_example(model, source, device):
    """The lesson's example: its greedy output and every decoder layer's cross-attention."""
    src = torch.tensor([source], device=device)
    seed_test_draws(len(source))
    output = greedy(model, src)[0]
    tgt_in = torch.cat([torch.tensor([BOS], device=device), output[:-1]])[None]
    seed_test_draws(len(source))  # the positions the output was written with, drawn again
    memory = model.encode(src)
    with attention_weights(model.decoder) as found:
        model.decode(tgt_in, memory)
    crosses = [found[f"{i}.cross"][0] for i in range(len(model.decoder))]
    return {
        "input": source,
        "output": output.tolist(),
        "cross_attention": [w[0].cpu().tolist() for w in crosses],  # [layer][head][out][in]
    }


def length_table(metrics, lengths, seeds):
    """Per length: exact sequences (mean, std, seed range) and digits (mean, std), as CSV text."""
    rows = []
    for n in lengths:
        key, digits = f"length_{n}_seq_acc", f"length_{n}_digit_acc"
        per_seed = [metrics[f"{key}_seed{s}"] for s in seeds]
        rows.append(
            {
                "length": n,
                "seq_acc": metrics[key],
                "seq_acc_std": metrics[key + "_std"],
                "seq_acc_min": min(per_seed),
                "seq_acc_max": max(per_seed),
                "digit_acc": metrics[digits],
                "digit_acc_std": metrics[digits + "_std"],
            }
        )
    return csv_text(rows, float_format="%.6f")


def show_failures(failures, count):
    for n, rows in failures.items():
        for src, pred, expected in rows[:count]:
            print(f"  length {n:2d}  input {' '.join(map(str, src))}")
            print(f"             predicted {' '.join(map(str, pred))}")
            print(f"             expected  {' '.join(map(str, expected))}")

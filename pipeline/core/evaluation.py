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
from pipeline.infra.results import by_seed, spread
from pipeline.infra.tables import csv_text
from pipeline.model.checkpoint import check_fits, checkpoint_path, load_checkpoint
from pipeline.model.config import longest_source
from pipeline.model.hooks import attention_weights
from pipeline.model.reference import holds_reference, reference_gap
from pipeline.tokens import BOS


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
    the lesson's claims read them, teacher forcing and the paper's beam search too. Returns the
    accuracies as rows ({decoder, length, seq_acc, digit_acc}) and the failures by length."""
    rows, failures = [], {}
    for n in lengths:
        source, target = test[f"source_{n}"], test[f"target_{n}"]
        decoders = {"greedy": greedy_cached}
        if n in trained:
            decoders["tf"] = lambda m, src: teacher_forced(m, src, shifted_targets(src))
            decoders["beam"] = lambda m, src: beam_search(m, src, beam_size, length_penalty)
        seed_test_draws(n)
        outputs = decode_set(model, source, batch_size, device, decoders)
        target_t = torch.as_tensor(target, dtype=torch.long)
        for name, pred in outputs.items():
            seq_acc, digit_acc = accuracy(pred, target_t)
            rows.append({"decoder": name, "length": n, "seq_acc": seq_acc, "digit_acc": digit_acc})
        pred = outputs["greedy"]
        wrong = (pred != target_t).any(1).nonzero().flatten().tolist()
        failures[n] = [(source[i].tolist(), pred[i].tolist(), target[i].tolist()) for i in wrong]
    return rows, failures


REFERENCE_ROWS = 1000  # teacher-forced sequences on which ours and nn.Transformer are compared


def evaluate_seed(params, seed, test, models_dir):
    """Worker: one checkpoint's accuracies at every test length and their means at the trained
    lengths, its greedy failures, the lesson's example, and how far its logits lie from
    nn.Transformer's holding the same weights (rows by dtype; none where it cannot hold the model)."""
    device, lengths, ev = set_up_worker(params.train.device), params.data.test_lengths, params.evaluate
    path = checkpoint_path(models_dir, seed)
    model, _ = load_checkpoint(path, device)
    check_fits(model, lengths, path)
    trained = [n for n in lengths if n in params.data.train_lengths] or list(lengths)
    rows, failures = evaluate_model(
        model, test, lengths, ev.batch_size, device, trained, ev.beam_size, ev.length_penalty
    )
    n = max(params.data.train_lengths) if max(params.data.train_lengths) in lengths else lengths[0]
    sample = slice(0, REFERENCE_ROWS)
    source, target = test[f"source_{n}"][sample], test[f"target_{n}"][sample]
    batch = make_batch(source, target, np.full(len(source), n))
    model.cpu()
    reference = []
    for dtype in (torch.float64, torch.float32) if holds_reference(model.config) else ():
        gap = reference_gap(model, batch.src, batch.tgt_in, dtype)
        # the longest dot product beside: rounding errors grow with it
        reference.append(
            {
                "dtype": str(dtype).split(".")[-1],
                "max_diff": gap["max_diff"],
                "logit_max": gap["logit_max"],
                "dot_length": max(model.config.d_model, model.config.d_ff),
            }
        )
    shown = {length: wrong[: ev.show_failures] for length, wrong in failures.items()}
    # The lesson's example, cut to what a model with a shorter max_len reads.
    example = EXAMPLE_INPUT[: longest_source(model.config)]
    result = {
        "accuracy": rows,
        "at_trained": at_trained(rows, params.data.train_lengths, lengths),
        "reference": reference,
    }
    return result, shown, cross_attention_example(model, example, "cpu")


DECODERS = ("greedy", "tf", "beam")


def at_trained(rows, trained_lengths, test_lengths):
    """Each decoder's accuracies at the trained length(s), averaged over them: {greedy_seq_acc, ...}."""
    at = [n for n in test_lengths if n in trained_lengths] or list(test_lengths)
    return {
        f"{decoder}_{metric}": float(
            np.mean([r[metric] for r in rows if r["decoder"] == decoder and r["length"] in at])
        )
        for decoder in DECODERS
        for metric in ("seq_acc", "digit_acc")
    }


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


def length_rows(accuracy, lengths, seeds):
    """Per length, greedy over seeds (`accuracy`: the stage's accuracy table, a DataFrame): exact
    sequences (mean, std, seed range) and digits (mean, std), one row a length."""
    rows = []
    for n in lengths:
        per_seed = by_seed(accuracy, "seq_acc", seeds, decoder="greedy", length=n)
        seq_acc, seq_acc_std = spread(per_seed)
        digit_acc, digit_acc_std = spread(by_seed(accuracy, "digit_acc", seeds, decoder="greedy", length=n))
        rows.append(
            {
                "length": n,
                "seq_acc": seq_acc,
                "seq_acc_std": seq_acc_std,
                "seq_acc_min": min(per_seed),
                "seq_acc_max": max(per_seed),
                "digit_acc": digit_acc,
                "digit_acc_std": digit_acc_std,
            }
        )
    return rows


def length_table(rows):
    """The length rows as the CSV the report's length figure reads (6 decimals)."""
    return csv_text(rows, float_format="%.6f")


def show_failures(failures, count):
    for n, rows in failures.items():
        for src, pred, expected in rows[:count]:
            print(f"  length {n:2d}  input {' '.join(map(str, src))}")
            print(f"             predicted {' '.join(map(str, pred))}")
            print(f"             expected  {' '.join(map(str, expected))}")

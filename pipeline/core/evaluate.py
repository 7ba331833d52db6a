"""Evaluation: greedy decoding, the paper's beam search and teacher forcing on held-out
sequences, per length and seed (lesson 10, part 4: "Generar y medir" and "Lo que no aprendió")."""

import json

import numpy as np
import pandas as pd
import torch

from pipeline.core.batching import make_batch
from pipeline.core.decoding import (
    GREEDY,
    accuracy_by_length,
    beam_search,
    greedy,
    seed_test_draws,
    shifted_targets,
    teacher_forced,
)
from pipeline.core.seed_axis import ModelsTogether, seed_groups
from pipeline.infra.errors import DataError
from pipeline.infra.outputs import by_seed, csv_text, spread
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import seed_processes, set_up_worker
from pipeline.model.checkpoint import check_fits, checkpoint_path, load_checkpoint
from pipeline.model.hooks import attention_weights
from pipeline.model.reference import holds_reference, reference_gap
from pipeline.params.lesson import EXAMPLE_INPUT, LESSON_TEST_SIZE
from pipeline.params.rules import as_dict
from pipeline.params.sections import EvaluateParams
from pipeline.tokens import BOS


def evaluate_model(
    model, test, lengths, batch_size, device, trained=(), beam_size=4, length_penalty=0.6, beam_rows=None
):
    """Per length, greedy accuracy and the failing rows of greedy; at the `trained` lengths, where
    the lesson's claims read them, teacher forcing and the paper's beam search too, the beam on the
    first `beam_rows` rows (all where None: a beam of k decodes k rows for each one). `model` is one
    model or several decoded as one (ModelsTogether). Returns, one a model, the accuracies as rows
    ({decoder, length, seq_acc, digit_acc}) and the failures by length."""
    together = model if isinstance(model, ModelsTogether) else ModelsTogether([model])

    def decoders(n):
        chosen = dict(GREEDY)
        if n in trained:
            chosen["tf"] = lambda m, src: teacher_forced(m, src, shifted_targets(src))
        return {name: together.decoder(decode) for name, decode in chosen.items()}

    tests = {n: test[n] for n in lengths}
    found, decoded = accuracy_by_length(together, tests, batch_size, device, decoders)
    beam = {"beam": together.decoder(lambda m, src: beam_search(m, src, beam_size, length_penalty))}
    first = slice(0, beam_rows)  # the first rows: their batches are the ones greedy decodes them in
    beam_tests = {n: tuple(a[first] for a in tests[n]) for n in lengths if n in trained}
    beamed, _ = accuracy_by_length(together, beam_tests, batch_size, device, beam)
    rows = [r for n in lengths for r in found + beamed if r["length"] == n]  # each length's decoders
    results = []
    for i in range(len(together.models)):
        own = [r | {"seq_acc": r["seq_acc"][i], "digit_acc": r["digit_acc"][i]} for r in rows]
        failures = {}
        for n, (source, target) in tests.items():
            pred = decoded[n]["greedy"][i]
            wrong = (pred != torch.as_tensor(target, dtype=torch.long)).any(1).nonzero().flatten().tolist()
            failures[n] = [(source[j].tolist(), pred[j].tolist(), target[j].tolist()) for j in wrong]
        results.append((own, failures))
    return results if isinstance(model, ModelsTogether) else results[0]


REFERENCE_ROWS = 1000  # teacher-forced sequences on which ours and nn.Transformer are compared
# Beam search decodes beam_size rows for each row: it reads the trained length's first rows, as many as
# the lesson's own test has (its "datos(1000, ...)"), where greedy and teacher forcing read them all.
BEAM_ROWS = LESSON_TEST_SIZE


def evaluate_group(seeds, test, models_dir, lengths, train_lengths, device, ev: EvaluateParams):
    """Worker: the checkpoints of `seeds`, decoded together (ModelsTogether); for each, its
    accuracies at every test length (`lengths`) and their means at the trained lengths, its greedy
    failures, the lesson's example, and how far its logits lie from nn.Transformer's holding the
    same weights (rows by dtype; none where it cannot hold the model)."""
    device = set_up_worker(device)
    models = []
    for seed in seeds:
        path = checkpoint_path(models_dir, seed)
        models.append(load_checkpoint(path, device)[0])
        check_fits(models[-1], lengths, path)
    if len({json.dumps(as_dict(m.config), sort_keys=True) for m in models}) > 1:
        raise DataError(f"the checkpoints in {models_dir} have different configurations: retrain them")
    trained = [n for n in lengths if n in train_lengths] or list(lengths)
    evaluated = evaluate_model(
        ModelsTogether(models), test, lengths, ev.batch_size, device, trained,
        ev.beam_size, ev.length_penalty, BEAM_ROWS,
    )  # fmt: skip
    return [
        seed_result(model.cpu(), rows, failures, test, lengths, train_lengths, ev)
        for model, (rows, failures) in zip(models, evaluated, strict=True)
    ]


def seed_result(model, rows, failures, test, lengths, train_lengths, ev: EvaluateParams):
    """One model's result (its accuracy rows, their means at the trained lengths, its gap to
    nn.Transformer), its failures to show and the lesson's example."""
    n = max(train_lengths) if max(train_lengths) in lengths else lengths[0]
    sample = slice(0, REFERENCE_ROWS)
    source, target = (a[sample] for a in test[n])
    batch = make_batch(source, target, np.full(len(source), n))
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
    example = EXAMPLE_INPUT[: model.longest_source]
    result = {
        "accuracy": rows,
        "at_trained": at_trained(rows, train_lengths, lengths),
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


# ------------------------------------------------------------------------- the evaluate stage

AT_TRAINED = [f"{d}_{m}" for d in DECODERS for m in ("seq_acc", "digit_acc")]  # means at the trained lengths


def evaluate_seeds(seeds, test, models_dir, lengths, train_lengths, device, ev: EvaluateParams):
    """Every checkpoint of `seeds`, decoded together in as many workers as cores: (the stage's tidy
    tables {file name: (rows, columns)}, the length rows over seeds, the lesson's example with every
    seed's output), printing each seed's accuracies, the first seed's failures and its example."""
    groups = seed_groups(seeds, seed_processes(device))
    jobs = [(group, test, models_dir, lengths, train_lengths, device, ev) for group in groups]
    done = [result for results in run_jobs(evaluate_group, jobs, len(jobs)) for result in results]
    tables, example = {"accuracy": [], "at_trained": [], "reference": []}, None
    for seed, (result, failures, seen) in zip(seeds, done, strict=True):
        tables["at_trained"].append({"seed": seed, **result["at_trained"]})
        for name in ("accuracy", "reference"):
            tables[name] += [{"seed": seed, **row} for row in result[name]]
        r = result["at_trained"]
        print(
            f"seed {seed}: greedy {r['greedy_seq_acc']:.1%} sequences, {r['greedy_digit_acc']:.1%} "
            f"digits; teacher forcing {r['tf_seq_acc']:.1%}, {r['tf_digit_acc']:.1%}; "
            + reference_line(result["reference"])
        )
        if example is None:  # the first seed's attention maps; every seed's output
            example = {"seed": seed, **seen, "outputs_by_seed": {}}
            print(f"seed {seed}: some greedy failures (input / predicted / expected)")
            show_failures(failures, ev.show_failures)
        example["outputs_by_seed"][str(seed)] = seen["output"]
        print(f"seed {seed}: {' '.join(map(str, seen['input']))} -> {' '.join(map(str, seen['output']))}")
    by_length = length_rows(pd.DataFrame(tables["accuracy"]), lengths, seeds)
    files = {
        "accuracy.csv": (tables["accuracy"], ["seed", "decoder", "length", "seq_acc", "digit_acc"]),
        "by_seed.csv": (tables["at_trained"], ["seed", *AT_TRAINED]),
        "reference.csv": (tables["reference"], ["seed", "dtype", "max_diff", "logit_max", "dot_length"]),
    }
    return files, by_length, example


def headline(tables, by_length, seeds):
    """What `dvc exp show` compares: greedy at the trained lengths (mean and std over seeds), teacher
    forcing and beam search there (means), and greedy at every tested length (the results contract's
    length_<n>_seq_acc, the length rows' means)."""
    at_trained = pd.DataFrame(tables["by_seed.csv"][0])
    over_seeds = {name: by_seed(at_trained, name, seeds) for name in AT_TRAINED}
    greedy, greedy_std = spread(over_seeds["greedy_seq_acc"])
    out = {
        "greedy_seq_acc": greedy,
        "greedy_seq_acc_std": greedy_std,
        "tf_seq_acc": spread(over_seeds["tf_seq_acc"])[0],
        "beam_seq_acc": spread(over_seeds["beam_seq_acc"])[0],
    }
    return out | {f"length_{r['length']}_seq_acc": r["seq_acc"] for r in by_length}


def reference_line(reference):
    """The comparison with nn.Transformer, which only models it can hold (post-norm, sinusoids,
    softmax) have (`reference`: a seed's rows by dtype)."""
    gap = {row["dtype"]: row["max_diff"] for row in reference}
    if "float32" not in gap:
        return "nn.Transformer cannot hold this model (not compared)"
    return f"nn.Transformer with its weights differs by {gap['float32']:.1e} (float32)"


def print_length_table(by_length):
    print("length table (greedy, mean ± std over seeds):")
    for r in by_length:
        print(
            f"  length {r['length']:2d}: sequences {r['seq_acc']:6.1%} ± {r['seq_acc_std']:.1%}"
            f" · digits {r['digit_acc']:.1%}"
        )

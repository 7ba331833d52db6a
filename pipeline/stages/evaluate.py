"""Stage `evaluate`: greedy decoding, the paper's beam search and teacher forcing on held-out
sequences, per length and seed (lesson 10, part 4).

    python -m pipeline.stages.evaluate --models models --test data/test.npz --metrics metrics/evaluate.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/evaluation.py.
"""

import time

import pandas as pd

from pipeline.core.data import load_npz
from pipeline.core.evaluation import DECODERS, evaluate_seed, length_rows, length_table, show_failures
from pipeline.core.params import load_params
from pipeline.infra import runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.pool import run_jobs
from pipeline.infra.results import by_seed, spread, write_detail

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("data.test_lengths", "data.train_lengths", "train.seeds", "train.device", "evaluate")


@stage_entry
def main():
    args = stage_paths(__doc__, "models", "test", "metrics")
    start = time.perf_counter()
    params = load_params(reads=READS)
    lengths = params.data.test_lengths
    test = load_npz(args.test, [f"{k}_{n}" for n in lengths for k in ("source", "target")])
    jobs = [(params, seed, test, args.models) for seed in params.train.seeds]
    tables, example = {"accuracy": [], "at_trained": [], "reference": []}, None
    for (_, seed, _, _), (result, failures, seen) in zip(jobs, run_jobs(evaluate_seed, jobs), strict=True):
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
            show_failures(failures, params.evaluate.show_failures)
        example["outputs_by_seed"][str(seed)] = seen["output"]
        print(f"seed {seed}: {' '.join(map(str, seen['input']))} -> {' '.join(map(str, seen['output']))}")
    accuracy = pd.DataFrame(tables["accuracy"])
    by_length = length_rows(accuracy, lengths, params.train.seeds)
    write_detail(
        args.metrics,
        {
            "accuracy.csv": (tables["accuracy"], ["seed", "decoder", "length", "seq_acc", "digit_acc"]),
            "by_seed.csv": (tables["at_trained"], ["seed", *AT_TRAINED]),
            "reference.csv": (tables["reference"], ["seed", "dtype", "max_diff", "logit_max", "dot_length"]),
        },
        headline(pd.DataFrame(tables["at_trained"]), accuracy, params.train.seeds, lengths),
        {"length_table.csv": length_table(by_length), "example.json": example},
    )
    print("length table (greedy, mean ± std over seeds):")
    for r in by_length:
        print(
            f"  length {r['length']:2d}: sequences {r['seq_acc']:6.1%} ± {r['seq_acc_std']:.1%}"
            f" · digits {r['digit_acc']:.1%}"
        )
    runlog.record_run("evaluate", time.perf_counter() - start)


AT_TRAINED = [f"{d}_{m}" for d in DECODERS for m in ("seq_acc", "digit_acc")]  # means at the trained lengths


def headline(at_trained, accuracy, seeds, lengths):
    """What `dvc exp show` compares: greedy at the trained lengths (mean and std over seeds), teacher
    forcing and beam search there (means), and greedy at every tested length (the results contract's
    length_<n>_seq_acc)."""
    over_seeds = {name: by_seed(at_trained, name, seeds) for name in AT_TRAINED}
    greedy, greedy_std = spread(over_seeds["greedy_seq_acc"])
    out = {
        "greedy_seq_acc": greedy,
        "greedy_seq_acc_std": greedy_std,
        "tf_seq_acc": spread(over_seeds["tf_seq_acc"])[0],
        "beam_seq_acc": spread(over_seeds["beam_seq_acc"])[0],
    }
    for n in lengths:
        out[f"length_{n}_seq_acc"] = spread(by_seed(accuracy, "seq_acc", seeds, decoder="greedy", length=n))[
            0
        ]
    return out


def reference_line(reference):
    """The comparison with nn.Transformer, which only models it can hold (post-norm, sinusoids,
    softmax) have (`reference`: a seed's rows by dtype)."""
    gap = {row["dtype"]: row["max_diff"] for row in reference}
    if "float32" not in gap:
        return "nn.Transformer cannot hold this model (not compared)"
    return f"nn.Transformer with its weights differs by {gap['float32']:.1e} (float32)"


if __name__ == "__main__":
    main()

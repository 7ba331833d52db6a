"""Stage `evaluate`: greedy decoding, the paper's beam search and teacher forcing on held-out
sequences, per length and seed (lesson 10, part 4).

    python -m pipeline.stages.evaluate --models models --test data/test.npz --metrics metrics/evaluate.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/evaluation.py.
"""

import time

from pipeline.core.data import load_npz
from pipeline.core.evaluation import (
    HEADLINE,
    HEADLINE_PATTERN,
    evaluate_seed,
    length_table,
    show_failures,
)
from pipeline.core.params import load_params
from pipeline.infra import runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import headline
from pipeline.infra.pool import run_jobs
from pipeline.infra.results import write_detail
from pipeline.infra.stats import across_seeds

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
    per_seed, example = {}, None
    for (_, seed, _, _), (result, failures, seen) in zip(jobs, run_jobs(evaluate_seed, jobs), strict=True):
        per_seed[seed] = r = result
        print(
            f"seed {seed}: greedy {r['greedy_seq_acc']:.1%} sequences, {r['greedy_digit_acc']:.1%} "
            f"digits; teacher forcing {r['tf_seq_acc']:.1%}, {r['tf_digit_acc']:.1%}; {reference_line(r)}"
        )
        if example is None:  # the first seed's attention maps; every seed's output
            example = {"seed": seed, **seen, "outputs_by_seed": {}}
            print(f"seed {seed}: some greedy failures (input / predicted / expected)")
            show_failures(failures, params.evaluate.show_failures)
        example["outputs_by_seed"][str(seed)] = seen["output"]
        print(f"seed {seed}: {' '.join(map(str, seen['input']))} -> {' '.join(map(str, seen['output']))}")
    metrics = across_seeds(per_seed, list(next(iter(per_seed.values()))))
    write_detail(
        args.metrics,
        result_tables(per_seed, lengths),
        headline(metrics, HEADLINE, HEADLINE_PATTERN),
        {"length_table.csv": length_table(metrics, lengths, params.train.seeds), "example.json": example},
    )
    print("length table (greedy, mean ± std over seeds):")
    for n in lengths:
        k = f"length_{n}_seq_acc"
        print(
            f"  length {n:2d}: sequences {metrics[k]:6.1%} ± {metrics[k + '_std']:.1%}"
            f" · digits {metrics[f'length_{n}_digit_acc']:.1%}"
        )
    runlog.record_run("evaluate", time.perf_counter() - start)


DECODERS = {"greedy": "", "tf": "tf_", "beam": "beam_"}  # each decoder's prefix in a seed's results
AT_TRAINED = [f"{d}_{m}" for d in DECODERS for m in ("seq_acc", "digit_acc")]  # means at the trained lengths
REFERENCE = ("max_diff", "logit_max")


def result_tables(per_seed, lengths):
    """The detail as tidy tables: accuracy by seed, decoder and length; each seed's accuracies at the
    trained lengths; and, where nn.Transformer holds the model, its logits' gap by seed and type."""
    accuracy, at_trained, reference = [], [], []
    for seed, r in per_seed.items():
        for n in lengths:
            for decoder, prefix in DECODERS.items():
                if f"length_{n}_{prefix}seq_acc" in r:  # teacher forcing and beam at the trained lengths
                    seq, digit = (r[f"length_{n}_{prefix}{m}"] for m in ("seq_acc", "digit_acc"))
                    accuracy.append(
                        {"seed": seed, "decoder": decoder, "length": n, "seq_acc": seq, "digit_acc": digit}
                    )
        at_trained.append({"seed": seed, **{k: r[k] for k in AT_TRAINED}})
        for dtype in ("float64", "float32") if "reference_dot_length" in r else ():
            gap = {k: r[f"reference_{k}_{dtype}"] for k in REFERENCE}
            reference.append({"seed": seed, "dtype": dtype, **gap, "dot_length": r["reference_dot_length"]})
    return {
        "accuracy.csv": (accuracy, ["seed", "decoder", "length", "seq_acc", "digit_acc"]),
        "by_seed.csv": (at_trained, ["seed", *AT_TRAINED]),
        "reference.csv": (reference, ["seed", "dtype", *REFERENCE, "dot_length"]),
    }


def reference_line(result):
    """The comparison with nn.Transformer, which only models it can hold (post-norm, sinusoids,
    softmax) have."""
    if "reference_max_diff_float32" not in result:
        return "nn.Transformer cannot hold this model (not compared)"
    return f"nn.Transformer with its weights differs by {result['reference_max_diff_float32']:.1e} (float32)"


if __name__ == "__main__":
    main()

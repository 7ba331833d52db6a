"""Stage `evaluate`: greedy decoding, the paper's beam search and teacher forcing on held-out
sequences, per length and seed (lesson 10, part 4).

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/evaluation.py.
"""

import time

import torch

from pipeline.core.data import TEST_PATH, load_npz
from pipeline.core.evaluation import (
    EXAMPLE_PATH,
    HEADLINE,
    HEADLINE_PATTERN,
    LENGTH_TABLE_PATH,
    METRICS_PATH,
    cross_attention_example,
    evaluate_model,
    headline,
    length_table,
    show_failures,
)
from pipeline.core.lesson import EXAMPLE_INPUT as LESSON_EXAMPLE
from pipeline.core.training import MODELS_DIR, resolve_device
from pipeline.infra import files, runlog
from pipeline.infra.checkpoint import check_fits, checkpoint_path, load_checkpoint
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import write as write_metrics
from pipeline.infra.params import load_params
from pipeline.infra.stats import across_seeds


@stage_entry
def main():
    start = time.perf_counter()
    params = load_params()
    torch.set_num_threads(1)  # the same bytes on any machine; decoding here is cheap
    device = resolve_device(params.train.device)
    lengths = params.data.test_lengths
    test = load_npz(TEST_PATH, [f"{k}_{n}" for n in lengths for k in ("source", "target")])
    per_seed, example = {}, None
    for seed in params.train.seeds:
        path = checkpoint_path(MODELS_DIR, seed)
        model, _ = load_checkpoint(path, device)
        check_fits(model, lengths, path)
        ev = params.evaluate
        results, failures = evaluate_model(
            model, test, lengths, ev.batch_size, device, ev.beam_size, ev.length_penalty
        )
        per_seed[seed] = {**headline(results, params.data.train_lengths, lengths), **results}
        r = per_seed[seed]
        print(
            f"seed {seed}: greedy {r['greedy_seq_acc']:.1%} sequences, {r['greedy_digit_acc']:.1%} "
            f"digits; teacher forcing {r['tf_seq_acc']:.1%}, {r['tf_digit_acc']:.1%}"
        )
        seen = cross_attention_example(model, LESSON_EXAMPLE, device)
        if example is None:  # the first seed's attention maps; every seed's output
            example = {"seed": seed, **seen, "outputs_by_seed": {}}
            print(f"seed {seed}: some greedy failures (input / predicted / expected)")
            show_failures(failures, params.evaluate.show_failures)
        example["outputs_by_seed"][str(seed)] = seen["output"]
        print(f"seed {seed}: {' '.join(map(str, LESSON_EXAMPLE))} -> {' '.join(map(str, seen['output']))}")
    metrics = across_seeds(per_seed, list(next(iter(per_seed.values()))))
    write_metrics(METRICS_PATH, metrics, HEADLINE, HEADLINE_PATTERN)
    files.write_text(LENGTH_TABLE_PATH, length_table(metrics, lengths, params.train.seeds))
    files.write_json(EXAMPLE_PATH, example)
    print("length table (greedy, mean ± std over seeds):")
    for n in lengths:
        k = f"length_{n}_seq_acc"
        print(
            f"  length {n:2d}: sequences {metrics[k]:6.1%} ± {metrics[k + '_std']:.1%}"
            f" · digits {metrics[f'length_{n}_digit_acc']:.1%}"
        )
    runlog.record_run("evaluate", time.perf_counter() - start)


if __name__ == "__main__":
    main()

"""Stage `evaluate`: greedy decoding, the paper's beam search and teacher forcing on held-out
sequences, per length and seed (lesson 10, part 4).

    python -m pipeline.stages.evaluate --models models --test data/test.npz --metrics metrics/evaluate.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/core/evaluate.py.
"""

import time

from pipeline.core.data import read_test_sets
from pipeline.core.evaluate import evaluate_seeds, headline, length_table, print_length_table
from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import write_outputs
from pipeline.params.lesson_load import load_lesson_params


@stage_entry
def main():
    args = stage_paths(__doc__, "models", "test", "metrics")
    start = time.perf_counter()
    params = load_lesson_params()
    lengths, seeds = params.data.test_lengths, params.train.seeds
    test = read_test_sets(args.test, lengths)
    tables, by_length, example = evaluate_seeds(
        seeds, test, args.models, lengths, params.data.train_lengths, params.train.device, params.evaluate
    )
    others = {"length_table.csv": length_table(by_length), "example.json": example}
    write_outputs(args.metrics, headline(tables, by_length, seeds), tables, others)
    print_length_table(by_length)
    record_run("evaluate", time.perf_counter() - start)


if __name__ == "__main__":
    main()

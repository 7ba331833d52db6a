"""Evaluation throughput: sequences per second of each decoder and of evaluate_model's whole pass."""

import numpy as np
import pandas as pd
import torch

from pipeline.core import lesson
from pipeline.core.decoding import beam_search, greedy, greedy_cached
from pipeline.core.evaluation import evaluate_model
from pipeline.core.params import Params
from pipeline.model.transformer import Transformer
from pipeline.tools.benchmark.timing import interleaved, spread_ms
from pipeline.tools.benchmark.workload import synthetic_data

LENGTH = 10

# JSON key of each decoder's rate, in the order of decoders() below
KEYS = (
    "eval_seq_per_s_greedy_uncached",
    "eval_seq_per_s_greedy_cached",
    "eval_seq_per_s_beam",
    "eval_seq_per_s",
)


def decoders(rows, beam_size, alpha):
    """{name: fn} decoding `rows` sequences in one batch as evaluate runs: each decoder, and
    evaluate_model's per-seed pass (cached greedy, teacher forcing and beam search)."""
    torch.manual_seed(0)
    model = Transformer(lesson.MODEL).eval()
    source = synthetic_data(rows, LENGTH, seed=1)["source"]
    src = torch.as_tensor(source, dtype=torch.long)
    test = {f"source_{LENGTH}": source, f"target_{LENGTH}": np.sort(source, axis=1)}
    return {
        "greedy, re-running the decoder": lambda: greedy(model, src),
        "greedy, cached": lambda: greedy_cached(model, src),
        f"beam search ({beam_size})": lambda: beam_search(model, src, beam_size, alpha),
        "evaluate_model (all three)": lambda: evaluate_model(
            model, test, (LENGTH,), rows, "cpu", trained=(LENGTH,), beam_size=beam_size, length_penalty=alpha
        ),
    }


def measure(params: Params, quick):
    """(metrics, table) of sequences per second, from the median seconds per batch."""
    ev = params.evaluate
    rows, rounds = (200, 2) if quick else (ev.batch_size, 5)
    seconds, _ = interleaved(decoders(rows, ev.beam_size, ev.length_penalty), rounds)
    m, table = {}, []
    for key, (name, values) in zip(KEYS, seconds.items(), strict=True):
        ms = spread_ms(values)
        m[key] = rows / (ms["median_ms"] / 1e3)
        table.append({"decoder": name, "sequences_per_s": m[key], **ms})
        print(f"throughput: {name:32s} {m[key]:9.0f} sequences/s")
    m["eval_rows"], m["eval_rounds"] = rows, rounds
    return m, pd.DataFrame(table)

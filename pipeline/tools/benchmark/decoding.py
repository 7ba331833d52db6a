"""Decoding, measured: greedy with the key/value cache against re-running the decoder, by output
length; and evaluation throughput, sequences per second of each decoder and of evaluate_model's
whole pass."""

import dataclasses

import numpy as np
import pandas as pd
import torch

from pipeline.core.data import synthetic_rows
from pipeline.core.decoding import beam_search, greedy, greedy_cached
from pipeline.core.evaluate import evaluate_model
from pipeline.model.transformer import Transformer
from pipeline.params import lesson
from pipeline.tools.benchmark.timing import interleaved, spread_ms

LENGTHS = (10, 32, 64)


def decoding_times(lengths, rows, rounds):
    """{length: (seconds of each decoder, whether both wrote the same tokens)}, output length = input
    length, on a default-shape model with random weights and room for the longest output plus BOS."""
    torch.manual_seed(0)
    model = Transformer(dataclasses.replace(lesson.MODEL, max_len=max(lengths) + 1)).eval()
    times = {}
    for n in lengths:
        src = torch.randint(0, 10, (rows, n), generator=torch.Generator().manual_seed(n))
        runs = {
            "uncached": lambda src=src: greedy(model, src),
            "cached": lambda src=src: greedy_cached(model, src),
        }
        seconds, tokens = interleaved(runs, rounds)
        times[n] = seconds, torch.equal(tokens["uncached"], tokens["cached"])
    return times


def growth_exponent(lengths, seconds):
    """The slope k of log(time) against log(length): time grows like length^k."""
    return float(np.polyfit(np.log(lengths), np.log(seconds), 1)[0])


def summarise(n, seconds, same):
    """One length's metrics (medians; quartiles under keys of their own) and its table row."""
    uncached, cached = spread_ms(seconds["uncached"]), spread_ms(seconds["cached"])
    speedup = uncached["median_ms"] / cached["median_ms"]
    m = {
        f"decode_ms_uncached_len{n}": uncached["median_ms"],
        f"decode_ms_cached_len{n}": cached["median_ms"],
        f"decode_speedup_len{n}": speedup,
        f"decode_same_tokens_len{n}": same,
    }
    row = {
        "length": n,
        "uncached_ms": uncached["median_ms"],
        "cached_ms": cached["median_ms"],
        "speedup": speedup,
    }
    quartiles = {}
    for name, ms in (("uncached", uncached), ("cached", cached)):
        for q in ("q1", "q3"):
            row[f"{name}_{q}_ms"] = ms[f"{q}_ms"]
            quartiles[f"decode_ms_{name}_len{n}_{q}"] = ms[f"{q}_ms"]
    print(f"greedy, length {n:2d}: {row['uncached_ms']:8.1f} ms uncached, {row['cached_ms']:7.1f} ms cached")
    return m, quartiles, row


def measure_cached(quick):
    """(metrics, table) of greedy decoding with and without the cache at LENGTHS."""
    rows, rounds = (20, 2) if quick else (100, 5)
    m, quartiles, table = {}, {}, []
    for n, (seconds, same) in decoding_times(LENGTHS, rows, rounds).items():
        medians, spreads, row = summarise(n, seconds, same)
        m.update(medians)
        quartiles.update(spreads)
        table.append(row)
    m["decode_rows"], m["decode_rounds"] = rows, rounds
    m["decode_growth_exponent_uncached"] = growth_exponent(LENGTHS, [r["uncached_ms"] for r in table])
    m["decode_growth_exponent_cached"] = growth_exponent(LENGTHS, [r["cached_ms"] for r in table])
    m.update(quartiles)
    return m, pd.DataFrame(table)


# ------------------------------------------------------------------------------ throughput

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
    source = synthetic_rows(rows, LENGTH, seed=1)["source"]
    src = torch.as_tensor(source, dtype=torch.long)
    test = {LENGTH: (source, np.sort(source, axis=1))}
    return {
        "greedy, re-running the decoder": lambda: greedy(model, src),
        "greedy, cached": lambda: greedy_cached(model, src),
        f"beam search ({beam_size})": lambda: beam_search(model, src, beam_size, alpha),
        "evaluate_model (all three)": lambda: evaluate_model(
            model, test, (LENGTH,), rows, "cpu", trained=(LENGTH,), beam_size=beam_size, length_penalty=alpha
        ),
    }


def measure_throughput(ev, quick):
    """(metrics, table) of sequences per second, from the median seconds per batch (`ev`: the
    evaluate section: its batch size, beam and length penalty)."""
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

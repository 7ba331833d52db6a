"""Why a trained model's count fails at lengths it never saw: its decision margin at a fixed count.

After writing a copy of digit d the model must decide: write d again (copies of d are still owed)
or move on to the next digit present, q > d. The decision is the logit margin logit[d] - logit[q]:
positive writes d again. On inputs where d has exactly `count` copies and the length varies, the
margin is read teacher-forced at every step that has just written a copy of d, against how many
copies are still owed (0 after the last one: the margin must be negative; 1 or more: positive).

A model that counts exactly has margins that do not depend on the length at a fixed count. A model
that weighs the copies written and the copies in the input on slightly different scales (a LayerNorm
between them whose divisor grows with the length) has margins that drift with the length until the
decision at 0 or 1 copy owed flips. The divisor of every LayerNorm is read on the same steps, so the
two can be set side by side.
"""

import numpy as np
import torch
from torch import nn

from pipeline.core.batching import decoder_input
from pipeline.infra.workers import set_up_worker
from pipeline.study.model import load_model
from pipeline.tokens import DIGITS

COUNTS = tuple(range(1, 21))  # copies of the digit decided on
LENGTH_STEP = 5  # input positions between two lengths measured
ROWS = 100  # inputs per count and length
SHOWN_COUNTS = (2, 4, 6)  # the counts the study's summary and figure show


def measured_lengths(longest_trained, longest_tested):
    """The input's lengths measured: training's longest first, then every LENGTH_STEP positions up to
    the study's longest tested length, which closes the list (10, 15, ..., 40 for the default
    study), so that the margins are read where the study reads accuracy and nowhere beyond; the
    longest tested alone where it is shorter than training's longest."""
    lengths = list(range(longest_trained, longest_tested + 1, LENGTH_STEP))
    return lengths if lengths and lengths[-1] == longest_tested else [*lengths, longest_tested]


def fixed_count_sources(count, length, rows, rng):
    """(rows, length) inputs, each with exactly `count` copies of a digit d (row's own, 0-8) and
    the rest drawn uniformly from the other digits, at least one of them above d (so that a next
    digit exists); returns (sources, d)."""
    digit = rng.integers(0, DIGITS - 1, rows)
    others = rng.integers(0, DIGITS - 1, (rows, length - count))
    others = others + (others >= digit[:, None])  # uniform over the nine digits other than d
    above = (others > digit[:, None]).any(1)
    others[~above, 0] = DIGITS - 1  # no digit above d drawn: one of them becomes 9
    source = np.concatenate([np.repeat(digit[:, None], count, 1), others], 1)
    return rng.permuted(source, axis=1), digit


class LayerNormDivisors:
    """Forward hooks on every sublayer's LayerNorm of a model (`<stack>.<layer>.sub.<k>.ln`, where
    the counts meet; not the closing LayerNorm of a pre-norm or ReZero stack): the divisor
    sqrt(var + eps) of each call's input, (B, T) per LayerNorm name, for the passes run inside the
    block."""

    def __init__(self, model):
        self.model, self.found, self.handles = model, {}, []

    def __enter__(self):
        for name, module in self.model.named_modules():
            if isinstance(module, nn.LayerNorm) and ".sub." in name:
                self.handles.append(module.register_forward_hook(self.reader(name, module)))
        return self.found

    def reader(self, name, module):
        def read(_module, inputs, _output):
            x = inputs[0]
            self.found[name] = (x.var(-1, unbiased=False) + module.eps).sqrt()

        return read

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


def decisions(model, source, digit):
    """Teacher-forced on the sorted input: at every step that has just written a copy of `digit`
    (each row's d), the copies still owed and the margin logit[d] - logit[next digit]; with each
    decoder LayerNorm's divisor there and each encoder LayerNorm's over the input. Returns (owed,
    margin, {layer name: divisors}) as flat arrays over those steps."""
    src = torch.as_tensor(source, dtype=torch.long)
    target = src.sort(1).values
    tgt_in = decoder_input(target)  # BOS, then the sorted input shifted right
    with torch.no_grad(), LayerNormDivisors(model) as divisors:
        logits = model(src, tgt_in)  # (B, T, vocab)
    d = torch.as_tensor(digit, dtype=torch.long)[:, None]
    nxt = torch.where(target > d, target, DIGITS).min(1, keepdim=True).values  # smallest digit above d
    written = tgt_in == d  # (B, T): the step has just written a copy of d
    owed = (target == d).sum(1, keepdim=True) - written.cumsum(1)
    margin = logits.gather(2, d[:, :, None].expand(-1, logits.shape[1], 1))[..., 0]
    margin = margin - logits.gather(2, nxt[:, :, None].expand(-1, logits.shape[1], 1))[..., 0]
    layers = {}
    for name, divisor in divisors.items():
        if name.startswith("decoder"):
            layers[name] = divisor[written].numpy()
        else:  # the encoder's: the input's rows (the memory), one mean a row, one value a step
            layers[name] = divisor.mean(1, keepdim=True).expand_as(written)[written].numpy()
    return owed[written].numpy(), margin[written].numpy(), layers


def measure(model, lengths, seed=0):
    """One model's margins and LayerNorm divisors at every count and each of `lengths` it reads:
    (margin rows {count, length, owed, margin, wrong_share, steps}, divisor rows {length, layer,
    divisor})."""
    rng = np.random.default_rng(seed)
    margins, divisors = [], []
    by_length = {}
    for n in lengths:
        if n > model.longest_source:
            continue
        for c in COUNTS:
            if c >= n:
                continue
            source, digit = fixed_count_sources(c, n, ROWS, rng)
            owed, margin, layers = decisions(model, source, digit)
            for k in range(c):
                here = margin[owed == k]
                wrong = here <= 0 if k else here >= 0  # owed 0: must move on; else write d again
                margins.append(
                    {
                        "count": c,
                        "length": n,
                        "owed": k,
                        "margin": float(here.mean()),
                        "wrong_share": float(wrong.mean()),
                        "steps": int(here.size),
                    }
                )
            for name, values in layers.items():
                by_length.setdefault((n, name), []).append(values)
    for (n, name), values in by_length.items():
        divisors.append({"length": n, "layer": name, "divisor": float(np.concatenate(values).mean())})
    return margins, divisors


def drift(margin_rows, count, owed):
    """The margin's change per 10 input positions at `count` and `owed` (least squares over the
    lengths measured), and its values by length."""
    found = {r["length"]: r["margin"] for r in margin_rows if r["count"] == count and r["owed"] == owed}
    lengths = sorted(found)
    if len(lengths) < 2:
        return None, found
    return float(10 * np.polyfit(lengths, [found[n] for n in lengths], 1)[0]), found


def measured_checkpoint(path, lengths):
    """Worker: the margins and divisors of one saved model (pipeline.model.checkpoint) at `lengths`."""
    set_up_worker("cpu")
    return measure(load_model(path)[0].eval(), lengths)


def summary(margin_rows, divisor_rows):
    """Per model (rows carry `variant` and `seed`), mean over its seeds: the margin at 0 and 1 copy
    owed by length and its drift per 10 positions at each of SHOWN_COUNTS, the share of those
    decisions the wrong way, and each LayerNorm's divisor by length with its ratio at the longest
    length to the shortest. A count shown that some seed reads at fewer than two lengths (the
    shorter lengths hold fewer copies) has no drift, and is left out; a model left with none, too."""
    out = {}
    for variant in dict.fromkeys(r["variant"] for r in margin_rows):
        rows = [r for r in margin_rows if r["variant"] == variant]
        seeds = sorted({r["seed"] for r in rows})
        margins = {}
        for c in SHOWN_COUNTS:
            for owed in (0, 1):
                per_seed = [drift([r for r in rows if r["seed"] == s], c, owed) for s in seeds]
                if any(d is None for d, _ in per_seed):
                    continue
                lengths = sorted(per_seed[0][1])
                at = [r for r in rows if r["count"] == c and r["owed"] == owed]
                margins[f"count_{c}_owed_{owed}"] = {
                    "margin": {n: float(np.mean([f[n] for _, f in per_seed])) for n in lengths},
                    "wrong_share": {
                        n: float(np.mean([r["wrong_share"] for r in at if r["length"] == n])) for n in lengths
                    },
                    "drift_per_10": float(np.mean([d for d, _ in per_seed])),
                }
        if not margins:  # no count shown at two lengths: nothing to say of a drift
            continue
        layers = {}
        for r in (r for r in divisor_rows if r["variant"] == variant):
            layers.setdefault(r["layer"], {}).setdefault(r["length"], []).append(r["divisor"])
        divisors = {
            name: {"divisor": {n: float(np.mean(v)) for n, v in sorted(by.items())}}
            for name, by in layers.items()
        }
        for d in divisors.values():
            lengths = sorted(d["divisor"])
            d["ratio_longest_to_shortest"] = d["divisor"][lengths[-1]] / d["divisor"][lengths[0]]
        out[variant] = {"seeds": seeds, "margins": margins, "divisors": divisors}
    return out

"""Turning stored sequences into model inputs: trimmed batches, decoder inputs, padding masks."""

from dataclasses import dataclass

import numpy as np
import torch

from pipeline.model.transformer import padding_mask
from pipeline.tokens import BOS, IGNORE


def decoder_input(tokens):
    """BOS, then `tokens` (B, T) shifted right by one: what the decoder reads while it is shown
    `tokens`, one position behind (teacher forcing)."""
    return torch.cat([torch.full_like(tokens[:, :1], BOS), tokens[:, :-1]], dim=1)


@dataclass
class Batch:
    src: torch.Tensor  # (B, T) digits, 0 where padded
    tgt_in: torch.Tensor  # (B, T) BOS + target shifted right by one
    target: torch.Tensor  # (B, T) sorted digits, IGNORE where padded
    src_mask: torch.Tensor | None  # (B, 1, 1, T) True at padding, None when nothing is padded
    lengths: torch.Tensor  # (B,)


def make_batch(source, target, lengths, device="cpu"):
    """A batch from int arrays (B, T_max) and lengths (B,), trimmed to its longest row."""
    lengths = torch.as_tensor(np.asarray(lengths), dtype=torch.long, device=device)
    T = int(lengths.max())
    src = torch.as_tensor(np.asarray(source)[:, :T], dtype=torch.long, device=device)
    tgt = torch.as_tensor(np.asarray(target)[:, :T], dtype=torch.long, device=device)
    tgt_in = decoder_input(tgt)
    padded = torch.arange(T, device=device)[None, :] >= lengths[:, None]
    has_padding = bool(padded.any())
    return Batch(
        src=src,
        tgt_in=tgt_in,
        target=tgt.masked_fill(padded, IGNORE),
        src_mask=padding_mask(lengths, T) if has_padding else None,
        lengths=lengths,
    )


def batch_indices(size, batch_size, steps, seed, lengths=None):
    """Row indices for every step: a seeded permutation per pass over the data (fresh examples
    while they last, as the lesson draws a fresh batch each step), the same on every machine.

    With `lengths` (each row's length), every batch holds rows of one length, so no step pays for
    padding: each pass's permutation is cut into batches length by length, and the batches are
    then shuffled, in one order of lengths for every seed (drawn from a generator of its own, not the
    seed's), so that seeds trained together read batches of one length at each step; the rows in
    them are each seed's own. Rows that do not fill a batch sit out that pass, as with mixed
    batches."""
    rng = np.random.default_rng([seed, 2])
    passes = _passes(rng, np.random.default_rng([0, 3]), size, batch_size, lengths)
    batches = []
    for _ in range(steps):
        if not batches:
            batches = list(next(passes))
        yield batches.pop()


def _passes(rng, lengths_rng, size, batch_size, lengths):
    """Each pass over the data as a list of batches, consumed from its end: the rows from `rng`, the
    order of one-length batches from `lengths_rng`."""
    while True:
        order = rng.permutation(size)
        if lengths is None:
            cuts = range(0, size - batch_size + 1, batch_size)
            yield [order[i : i + batch_size] for i in cuts][::-1]
            continue
        batches = []
        for n in np.unique(lengths):
            rows = order[lengths[order] == n]
            batches += [rows[i : i + batch_size] for i in range(0, len(rows) - batch_size + 1, batch_size)]
        if not batches:
            raise ValueError(f"no length has {batch_size} rows to fill a batch")
        yield [batches[i] for i in lengths_rng.permutation(len(batches))]

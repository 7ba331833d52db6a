"""Decoding (lesson 10, part 4): greedy generation token by token, and teacher forcing."""

import torch

from pipeline.tokens import BOS


@torch.no_grad()
def greedy(model, src, out_len=None, src_mask=None):
    """Greedy decoding: the encoder runs once; each step appends the most probable token, never BOS.

    Every step re-runs the decoder over all tokens written so far (no cache): simple and exact.
    Returns (B, out_len) tokens, out_len defaulting to the input length (sorting keeps length).
    """
    out_len = src.shape[1] if out_len is None else out_len
    memory = model.encode(src, src_mask)
    y = torch.full((src.shape[0], 1), BOS, dtype=torch.long, device=src.device)
    for _ in range(out_len):
        logits = model.decode(y, memory, src_mask)[:, -1]  # (B, vocab): only the last position
        logits[:, BOS] = float("-inf")  # BOS is never an output
        y = torch.cat([y, logits.argmax(-1, keepdim=True)], dim=1)
    return y[:, 1:]


@torch.no_grad()
def teacher_forced(model, src, tgt_in, src_mask=None):
    """Each position's most probable token when the decoder reads the correct answer so far."""
    logits = model(src, tgt_in, src_mask)
    logits[..., BOS] = float("-inf")
    return logits.argmax(-1)


def accuracy(pred, target):
    """(exact-sequence accuracy, per-digit accuracy) as fractions."""
    correct = pred == target
    return correct.all(1).float().mean().item(), correct.float().mean().item()

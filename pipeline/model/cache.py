"""What decoding token by token keeps between steps: each decoder layer's keys and values."""

from dataclasses import dataclass

import torch


@dataclass
class LayerCache:
    """One decoder layer's keys and values for decoding token by token (each (B, h, T, d_k))."""

    self_k: torch.Tensor  # (B, h, steps, d_k): filled up to DecoderCache.length
    self_v: torch.Tensor
    cross_k: torch.Tensor  # (B, h, T_enc, d_k): computed once from the memory
    cross_v: torch.Tensor
    # the signed count's keys and values of the tokens written (B, h, steps, d_k); None elsewhere
    written_k: torch.Tensor | None = None
    written_v: torch.Tensor | None = None


@dataclass
class DecoderCache:
    """What decoding keeps between steps: per layer K/V, the memory's mask, tokens fed so far, and the
    positions the session drew for the decoder (randomized's at test time; else None)."""

    layers: list[LayerCache]
    memory_mask: torch.Tensor | None  # additive (B, 1, 1, T_enc), or None
    steps: int  # room for this many tokens (BOS included)
    length: int = 0  # tokens fed so far
    drawn: torch.Tensor | None = None  # (B, T_enc): the session's decoder positions, where a scheme draws

    def reorder(self, rows):
        """Keep rows `rows` (B',) in this order, as beam search does when hypotheses are re-ranked."""
        n = self.length
        if self.drawn is not None:
            self.drawn = self.drawn[rows]
        for c in self.layers:
            c.self_k[:, :, :n] = c.self_k[rows, :, :n]
            c.self_v[:, :, :n] = c.self_v[rows, :, :n]
            if c.written_k is not None:
                c.written_k[:, :, :n] = c.written_k[rows, :, :n]
                c.written_v[:, :, :n] = c.written_v[rows, :, :n]

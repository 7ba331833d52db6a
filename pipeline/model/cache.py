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

    def reorder(self, rows, n):
        """Keep rows `rows` of the first n positions, in this order (DecoderCache.reorder); a layer
        that caches more extends it."""
        self.self_k[:, :, :n] = self.self_k[rows, :, :n]
        self.self_v[:, :, :n] = self.self_v[rows, :, :n]


@dataclass
class DecoderCache:
    """What decoding keeps between steps: per layer K/V, the memory's mask and the tokens fed so far."""

    layers: list[LayerCache]
    memory_mask: torch.Tensor | None  # additive (B, 1, 1, T_enc), or None
    steps: int  # room for this many tokens (BOS included)
    length: int = 0  # tokens fed so far

    def reorder(self, rows):
        """Keep rows `rows` (B',) in this order, as beam search does when hypotheses are re-ranked."""
        n = self.length
        for layer in self.layers:
            layer.reorder(rows, n)

"""What training adds to the prior: a signed model's count decoded by a readout set by hand, beside
the model's own layers, trained or not (pipeline/study/controls.py reads untrained models too).

Decoder layer 1's signed cross-attention writes, at each step, o = sum over digits q of
H_q * U[:, q] (plus W^O's bias), H_q = (copies of q in the input) - (copies written), for any
weights: the encoder sees each token alone, so a digit written has the key and value of the same
digit in the input. The owed count (`signed_owed`) writes the same with H_q clamped to [-1, 1].
U[:, q] = sum over heads of gate_h(query, key of q) * W^O_h value_h(q) is the direction the
weights give digit q at this step. The hand-set readout solves o = U H for H (least squares, ten
unknowns in d_model equations) and writes the smallest digit with H_q > 1/2, as the counting sort
would. Where this decodes a length that the model's own layers do not, the count held it and the
model's readout lost it.
"""

import math

import torch

from pipeline.core.decoding import shifted_targets
from pipeline.tokens import BOS, DIGITS


class CountReading:
    """Hooks on decoder layer 1's signed cross-attention that keep, at each decoding step, its query
    and its output; and each digit's key and W^O-mapped value, which do not change."""

    def __init__(self, model):
        cross = self.cross = model.decoder[0].cross
        # each digit a row of its own (one token fits any max_len): the encoder's rows (1, 10, d_model);
        # the owed count hands its layers the rows with their tokens
        fed = model.rows_fed(torch.arange(DIGITS)[:, None])
        digits = getattr(fed, "rows", fed)[:, 0][None]
        keys, values = cross.project_kv(digits)  # (1, h, 10, d_k)
        self.keys = keys[0]  # (h, 10, d_k)
        heads, d_k = cross.heads, cross.d_k
        w_o = cross.wo.weight.view(-1, heads, d_k)  # (d_model, h, d_k)
        self.directions = torch.einsum("mhk,hqk->hqm", w_o, values[0])  # (h, 10, d_model)
        self.hooks = [
            cross.wq.register_forward_hook(lambda _m, _i, out: setattr(self, "query", out)),
            cross.wo.register_forward_hook(lambda _m, _i, out: setattr(self, "output", out)),
        ]

    def owed(self):
        """H (B, T, 10), float64, from the last call's queries and outputs: every position of a
        teacher-forced pass, the one new position of a decoding step."""
        cross = self.cross
        q = cross.split_heads(self.query)  # (B, h, T, d_k)
        scores = torch.einsum("bhtk,hqk->bhtq", q, self.keys) / math.sqrt(cross.d_k)
        gates = cross.weights(scores, None)  # (B, h, T, 10)
        u = torch.einsum("bhtq,hqm->btmq", gates, self.directions).double()  # (B, T, d_model, 10)
        o = (self.output - cross.wo.bias).double()[..., None]  # (B, T, d_model, 1)
        return torch.linalg.lstsq(u, o).solution[..., 0]

    def remove(self):
        for hook in self.hooks:
            hook.remove()


def smallest_owed(owed):
    """The smallest digit with H_q > 1/2 (the largest H where none is)."""
    present = owed > 0.5
    first = present.to(torch.int8).argmax(-1)
    return torch.where(present.any(-1), first, owed.argmax(-1))


@torch.no_grad()
def handset_readout(model, src):
    """Greedy decoding of a trained signed model, each token chosen by the hand-set readout of its
    count (module docstring) instead of its logits: (B, T) tokens."""
    reading = CountReading(model)
    try:
        cache = model.start_cache(model.encode(src), steps=src.shape[1])
        token = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)
        out = []
        for _ in range(src.shape[1]):
            model.decode_step(token, cache)
            token = smallest_owed(reading.owed()[:, -1])
            out.append(token)
        return torch.stack(out, dim=1)
    finally:
        reading.remove()


@torch.no_grad()
def handset_readout_forced(model, src):
    """The hand-set readout's choice at every position (B, T) when the decoder reads the correct
    answer so far: it equals the sorted source on a row exactly where handset_readout's decoding
    does (each choice reads only the tokens before it), in one pass instead of one per token."""
    reading = CountReading(model)
    try:
        model(src, shifted_targets(src))
        return smallest_owed(reading.owed())
    finally:
        reading.remove()

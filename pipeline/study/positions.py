"""The length study's position schemes. The study's model (pipeline/study/model.py) calls a scheme
through hooks beside the paper's `vectors`, each with the paper's behaviour in NoPositions below:
`vectors` also learns which stack reads it and a decoding session's drawn positions, `source` and
`memory_mask` give the source the encoder reads and its memory's padding mask, `encoder_bias` is added
to the encoder's self-attention scores, and `decoder_draw` gives the positions a decoding session
fixes once per source (a scheme keeps no state between calls). The paper's sinusoids and learned
positions (pipeline/model/positions.py) take these hooks here, unchanged otherwise. none_encoder adds
no positions in the encoder, the decoder keeps sinusoids; randomized gives each
sequence the sinusoids of a sorted random subset of [0, max_len) (Ruoss et al., 2023); alibi biases
the encoder's self-attention by distance (Press et al., 2022); bos adds no vectors and opens the
source with BOS, a key present exactly once, against which attention can count; offset shifts each
training sequence's sinusoids by a random offset, so that every position below max_len is trained
(Ruoss et al., 2023; McLeish et al., 2024), and bos_offset does so in the decoder of bos.
"""

import torch
from torch import nn

from pipeline.model import draws
from pipeline.model import positions as paper
from pipeline.tokens import BOS


class NoPositions(nn.Module):
    """No position information at all: the base every scheme overrides a hook of."""

    def __init__(self, config=None):
        super().__init__()

    def vectors(self, tokens, start, encoder=False, drawn=None):
        """What embed() adds for positions start..start+T: (T, d_model), (B, T, d_model) or None."""
        return None

    def source(self, src):
        """The source tokens (B, T) as the encoder reads them."""
        return src

    def memory_mask(self, src_mask):
        """The source's padding mask (B, 1, 1, T) as the memory's keys need it, or None."""
        return src_mask

    def encoder_bias(self, size):
        """(h, T, T) added to the encoder's self-attention scores, or None."""
        return None

    def decoder_draw(self, memory):
        """The positions a decoding session fixes once per source, drawn right after the encoder's
        (B, T_enc): randomized's at test time; None for every other scheme, and in training."""
        return None


class Sinusoidal(paper.Sinusoidal, NoPositions):
    """The paper's sinusoids, in both stacks, with the study's hooks."""

    def vectors(self, tokens, start, encoder=False, drawn=None):
        return paper.Sinusoidal.vectors(self, tokens, start)


class Learned(paper.Learned, NoPositions):
    """One trained vector per position, in both stacks, with the study's hooks."""

    def vectors(self, tokens, start, encoder=False, drawn=None):
        return paper.Learned.vectors(self, tokens, start)


def random_positions(like, batch, size, max_len):
    """(B, T): each row a sorted random subset of range(max_len), drawn as dropout is, on the device
    of the tensor `like` (Ruoss et al., 2023: a training sequence takes positions a longer one would
    have)."""
    return draws.uniform(like, (batch, max_len)).argsort(-1)[:, :size].sort(-1).values


def alibi_bias(heads, size, device=None):
    """(h, T, T) = -m_h |i - j| with slopes m_h = 2^(-8h/heads), h = 1..heads (Press et al., 2022):
    added to self-attention scores, it favours near keys, each head at its own range."""
    slopes = torch.tensor([2.0 ** (-8.0 * h / heads) for h in range(1, heads + 1)], device=device)
    i = torch.arange(size, device=device)
    return -slopes[:, None, None] * (i[:, None] - i[None, :]).abs()  # (h, T, T)


class NoneInEncoder(Sinusoidal):
    """No positions in the encoder (a sorted output does not depend on input order); the decoder
    keeps the sinusoids."""

    def vectors(self, tokens, start, encoder, drawn=None):
        return None if encoder else super().vectors(tokens, start, encoder, drawn)


class Randomized(Sinusoidal):
    """Each sequence takes the sinusoids of a sorted random subset of [0, max_len), in both stacks,
    in training and in evaluation alike (Ruoss et al., 2023: "we also randomize at test time", so a
    test sequence's positions look like a training sequence's, never 0, 1, 2, ...). In evaluation a
    decoding session draws the decoder's subset once per row, right after the encoder's
    (StudyTransformer.decoder_positions), and hands it to every step (the cache keeps it), so every step
    of a (cached or uncached) decode sees the same positions."""

    def vectors(self, tokens, start, encoder, drawn=None):
        B, end = tokens.shape[0], start + tokens.shape[1]
        if self.training or encoder:
            rows = random_positions(tokens, B, end, self.pe.shape[0])  # (B, end)
        else:
            rows = drawn  # the session's, from decoder_draw
            if rows is None or rows.shape[0] != B or end > rows.shape[1]:
                raise ValueError(
                    "randomized positions decode at most as many tokens as the source they encoded, "
                    "at the positions decoder_draw drew for it"
                )
        return self.pe[rows[:, start:end]]  # (B, T, d_model)

    def decoder_draw(self, memory):
        if self.training:  # each training call draws its own
            return None
        return random_positions(memory, memory.shape[0], memory.shape[1], self.pe.shape[0])


class Offset(Sinusoidal):
    """The sinusoids of positions k, k+1, ..., each training sequence with its own k, uniform in
    [0, max_len - T], drawn afresh in each stack (the offsets of McLeish et al., 2024, from a range
    as long as max_len): a training sequence of 10 tokens takes positions a 40-token one will have.
    Evaluation counts from 0, so it draws nothing and decoding keeps no state between calls."""

    def vectors(self, tokens, start, encoder, drawn=None):
        if not self.training:
            return super().vectors(tokens, start, encoder, drawn)
        B, end = tokens.shape[0], start + tokens.shape[1]
        offsets = draws.integers(tokens, self.pe.shape[0] - end + 1, (B, 1))  # (B, 1)
        return self.pe[offsets + torch.arange(start, end, device=tokens.device)]  # (B, T, d_model)


class ALiBi(NoPositions):
    """No vectors; -m_h |i - j| on the encoder's self-attention scores (Press et al., 2022). The
    decoder's self-attention keeps only its causal mask, and cross-attention has no bias: an output
    step has no distance to an input position."""

    def __init__(self, config):
        super().__init__(config)
        self.register_buffer("bias", alibi_bias(config.heads, config.max_len), persistent=False)

    def encoder_bias(self, size):
        return self.bias[:, :size, :size]


class BOSFirst(NoPositions):
    """No vectors; BOS opens the source as it opens the target: a key present exactly once, against
    which attention can count. The memory gains that row, and every query may look at it."""

    def source(self, src):
        return torch.cat([torch.full_like(src[:, :1], BOS), src], dim=1)

    def memory_mask(self, src_mask):
        if src_mask is None:
            return None
        return torch.cat([torch.zeros_like(src_mask[..., :1]), src_mask], dim=-1)


class BOSOffset(BOSFirst, Offset):
    """bos's encoder (BOS opens the source, no vectors) with offset sinusoids in the decoder, so that
    an output step knows how far it has written at every position it will reach."""

    def vectors(self, tokens, start, encoder, drawn=None):
        return None if encoder else super().vectors(tokens, start, encoder, drawn)

"""The model's random draws (dropout masks, random positions), each seed's from its own generator.

One model draws from torch's generator, seeded by the trainer, as it goes: `torch.rand`. Seeds
trained together (pipeline/core/seed_axis.py) run the one model's code under torch.func.vmap, where
a plain draw would come from one generator for all seeds at once, so that a seed's masks would
depend on its companions. There each seed draws the step's numbers beforehand, in one block from its
own generator (`step_numbers`), and the model's draws take them from the block in order
(`from_block`). torch's CPU generator gives the same numbers in one block as in several draws of the
same total size, so a seed's masks are the same alone, beside companions, or trained as one model.

Integers (random offsets) are drawn as uniform numbers scaled and floored, so that every draw comes
from the one stream of uniform numbers.
"""

import contextlib
import math

import torch

_source = None  # while a step runs together: where the draws come from (a _Block or a _Count)


class _Block:
    """The step's numbers of one seed (a vector), handed out in order."""

    def __init__(self, numbers):
        self.numbers, self.used = numbers, 0

    def take(self, like, shape, dtype):
        size = math.prod(shape)
        if self.used + size > self.numbers.shape[-1]:
            raise RuntimeError("the step drew more numbers than were drawn for it beforehand")
        part = self.numbers[self.used : self.used + size]
        self.used += size
        return part.view(shape).to(dtype)


class _Count:
    """Counts the numbers a step draws, handing out zeros."""

    def __init__(self):
        self.used = 0

    def take(self, like, shape, dtype):
        self.used += math.prod(shape)
        return torch.zeros(shape, dtype=dtype, device=like.device)


@contextlib.contextmanager
def _drawing_from(source):
    global _source
    before, _source = _source, source
    try:
        yield source
    finally:
        _source = before


def from_block(numbers):
    """Within: every draw takes the next numbers of `numbers` (one seed's, under vmap)."""
    return _drawing_from(_Block(numbers))


def counting():
    """Within: draws are zeros, counted (`.used`), so that a step's numbers can be drawn beforehand."""
    return _drawing_from(_Count())


def step_numbers(generators, size, device):
    """Each seed's numbers for one step, (S, size): seed i's from generators[i]."""
    return torch.stack([torch.rand(size, generator=g, device=device) for g in generators])


def uniform(like, shape, dtype=torch.float32):
    """Uniform numbers in [0, 1) of `shape` on the device of `like`, as torch.rand draws them."""
    if _source is not None:
        return _source.take(like, tuple(shape), dtype)
    return torch.rand(shape, dtype=dtype, device=like.device)


def integers(like, high, shape):
    """Integers in [0, high) of `shape`: uniform numbers times `high`, floored."""
    return (uniform(like, shape) * high).floor().clamp(max=high - 1).long()

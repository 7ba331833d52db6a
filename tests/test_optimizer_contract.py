"""The optimiser's contract with seeds trained together: it is elementwise, so that no seed's update
reads another seed's gradient or weights.

Seeds trained together lay every seed's weights in one flat buffer (pipeline/core/seed_axis.py), and
the optimiser updates that buffer in one call. Adam and AdamW are elementwise, so each seed's slice
moves as it would alone; an update that is not (a clip by the global gradient norm, LAMB's
per-tensor trust ratio, a decay by group) would let the seeds mix without any error. The test below
changes one seed's gradients and requires every other seed's weights after the update to keep their
bytes; its own check is shown to catch a global-norm clip.
"""

import dataclasses

import pytest
import torch

from pipeline.core.loop import FlatAdam, build_optimizer
from pipeline.core.seed_axis import SeedStack
from pipeline.model.transformer import Transformer
from tests.conftest import tiny_params

SEEDS = [0, 1, 2]


def updated_weights(make_optimizer, recipe, disturbed=None, steps=3):
    """Each seed's weights (one tensor a seed) after `steps` updates of the stacked seeds from fixed
    gradients; with `disturbed`, that seed's gradients are scaled and shifted at every step."""
    stack = SeedStack(Transformer, tiny_params().model, SEEDS)
    optimizer = make_optimizer(stack.parameters(), recipe)
    generator = torch.Generator().manual_seed(7)
    for step in range(1, steps + 1):
        optimizer.zero_grad()
        for w in stack.parameters():
            w.grad.copy_(torch.randn(w.shape, generator=generator))
            if disturbed is not None:
                w.grad[disturbed].mul_(3.0).add_(0.5)
        optimizer.step(1e-2 / step)
    return [torch.cat([w.detach()[i].flatten() for w in stack.parameters()]) for i in range(len(SEEDS))]


def assert_seeds_never_mix(make_optimizer, recipe):
    """Changing seed 0's gradients changes seed 0's weights and no other seed's, bit for bit."""
    calm, disturbed = updated_weights(make_optimizer, recipe), updated_weights(make_optimizer, recipe, 0)
    assert not torch.equal(calm[0], disturbed[0]), "the disturbed seed did not move"
    for seed, (a, b) in enumerate(zip(calm[1:], disturbed[1:], strict=True), start=1):
        assert torch.equal(a, b), f"seed {SEEDS[seed]}'s update read seed {SEEDS[0]}'s gradients"


class ClippedByGlobalNorm(FlatAdam):
    """FlatAdam after a clip of the whole buffer's gradient to norm 1: not elementwise."""

    def step(self, lr):
        norm = self.flat.grad.norm()
        if norm > 1:
            self.flat.grad.div_(norm)
        super().step(lr)


@pytest.mark.parametrize("weight_decay", [0.0, 0.01], ids=["adam", "adamw"])
def test_the_optimiser_never_mixes_the_seeds_trained_together(weight_decay):
    recipe = dataclasses.replace(tiny_params().study.train, weight_decay=weight_decay)
    assert_seeds_never_mix(build_optimizer, recipe)


def test_the_contract_check_catches_an_update_that_mixes_the_seeds():
    with pytest.raises(AssertionError, match="read seed 0's gradients"):
        clipped = lambda weights, r: ClippedByGlobalNorm(weights, r.betas, r.eps, r.weight_decay)  # noqa: E731
        assert_seeds_never_mix(clipped, tiny_params().train)

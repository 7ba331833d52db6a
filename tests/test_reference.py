"""The architecture checked against an implementation nobody here wrote: our weights, loaded one to
one into torch.nn.Transformer, give the same teacher-forced logits."""

from pathlib import Path

import pytest
import torch

from pipeline.model.checkpoint import load_checkpoint
from pipeline.model.reference import reference_copy
from pipeline.model.transformer import Transformer, padding_mask
from tests.conftest import model_config

CHECKPOINTS = sorted((Path(__file__).parents[1] / "models").glob("seed_*.pt"))  # where trained


def same_function(model, dtype, rows=16, length=10, padded=False):
    """The largest absolute difference between our logits and nn.Transformer's, in evaluation mode."""
    model = model.to(dtype).eval()
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(0, 10, (rows, length), generator=generator)
    tgt_in = torch.randint(0, 11, (rows, length), generator=generator)
    mask = (
        padding_mask(torch.randint(3, length + 1, (rows,), generator=generator), length) if padded else None
    )
    with torch.no_grad():
        ours, theirs = model(src, tgt_in, mask), reference_copy(model)(src, tgt_in, mask)
    return (ours - theirs).abs().max().item()


@pytest.mark.parametrize("padded", [False, True])
def test_a_random_model_is_the_same_function_as_pytorchs_transformer(padded):
    torch.manual_seed(0)
    model = Transformer(model_config(d_model=16, heads=2, layers=2, d_ff=32, dropout=0.1, max_len=16))
    assert same_function(model, torch.float64, padded=padded) < 1e-12
    assert same_function(model, torch.float32, padded=padded) < 1e-5


@pytest.mark.skipif(not CHECKPOINTS, reason="no trained checkpoint (run `dvc repro train`)")
@pytest.mark.parametrize("path", CHECKPOINTS, ids=lambda p: p.stem)
def test_every_trained_checkpoint_is_the_same_function_as_pytorchs_transformer(path):
    model, _ = load_checkpoint(path)
    assert same_function(model, torch.float64) < 1e-12
    assert same_function(model, torch.float32) < 1e-5

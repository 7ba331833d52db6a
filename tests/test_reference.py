"""The architecture checked against an implementation nobody here wrote: our weights, loaded one to
one into torch.nn.Transformer, give the same teacher-forced logits, to within rounding.

The bound is the claim's own rule (pipeline.report.judging): epsilon x the largest
|logit| x the longest dot product, so it holds on any machine, whatever its kernels sum first."""

from pathlib import Path

import pytest
import torch

from pipeline.model.checkpoint import load_checkpoint
from pipeline.model.reference import reference_copy
from pipeline.model.transformer import Transformer, padding_mask
from pipeline.report.judging import rounding_bound
from tests.conftest import model_config

CHECKPOINTS = sorted((Path(__file__).parents[1] / "models").glob("seed_*.pt"))  # where trained
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def logit_gap(model, dtype, rows=16, length=10, padded=False):
    """(largest |our logit - nn.Transformer's|, largest |our logit|), both in evaluation mode."""
    model = model.to(dtype).eval()
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(0, 10, (rows, length), generator=generator)
    tgt_in = torch.randint(0, 11, (rows, length), generator=generator)
    mask = (
        padding_mask(torch.randint(3, length + 1, (rows,), generator=generator), length) if padded else None
    )
    with torch.no_grad():
        ours, theirs = model(src, tgt_in, mask), reference_copy(model)(src, tgt_in, mask)
    return (ours - theirs).abs().max().item(), ours.abs().max().item()


def assert_same_function(model, **inputs):
    dot_length = max(model.config.d_model, model.config.d_ff)  # as the evaluate stage records it
    for name, dtype in DTYPES.items():
        diff, logit_max = logit_gap(model, dtype, **inputs)
        assert diff <= rounding_bound(name, logit_max, dot_length), (name, diff, logit_max)


@pytest.mark.numerics
@pytest.mark.parametrize("padded", [False, True])
def test_a_random_model_is_the_same_function_as_pytorchs_transformer(padded):
    torch.manual_seed(0)
    model = Transformer(model_config(d_model=16, heads=2, layers=2, d_ff=32, dropout=0.1, max_len=16))
    assert_same_function(model, padded=padded)


def test_a_model_with_other_weights_is_not_the_same_function():
    """The check can fail: one weight changed in our model only lies far outside the bound."""
    torch.manual_seed(0)
    model = Transformer(model_config(d_model=16, heads=2, layers=2, d_ff=32, dropout=0.1, max_len=16))
    reference = reference_copy(model)
    with torch.no_grad():
        model.decoder[0].ffn[0].weight[0, 0] += 1.0
    src = torch.randint(0, 10, (4, 10), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ours = model.eval()(src, src)
        diff = (ours - reference(src, src)).abs().max().item()
    assert diff > rounding_bound("float32", ours.abs().max().item(), 32)


@pytest.mark.numerics
@pytest.mark.skipif(not CHECKPOINTS, reason="no trained checkpoint (run `dvc repro train`)")
@pytest.mark.parametrize("path", CHECKPOINTS, ids=lambda p: p.stem)
def test_every_trained_checkpoint_is_the_same_function_as_pytorchs_transformer(path):
    model, _ = load_checkpoint(path)
    assert_same_function(model)

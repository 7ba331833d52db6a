"""Shared fixtures: tiny parameters that train in a fraction of a second."""

import dataclasses
import functools
import json
import os
from pathlib import Path

# isort: off
import pipeline  # noqa: F401  first: it pins the CPU numerics before torch loads (pipeline/infra/numerics.py)

# isort: on
import pytest
import torch

from pipeline.infra.params import DataParams, ModelParams, Params, TrainParams
from pipeline.probes.fingerprint import differing, operation_entries

torch.set_num_threads(1)  # tiny models run fastest on one thread, and the suite shares the machine


def tiny_params(**overrides) -> Params:
    """A valid Params at toy size; overrides are {section: {key: value}}."""
    sections = {
        "data": DataParams(train_lengths=(5,), train_size=256, test_lengths=(3, 5), test_size=20, seed=0),
        "model": ModelParams(d_model=16, heads=2, layers=1, d_ff=32, dropout=0.0, max_len=16),
        "train": TrainParams(steps=30, batch_size=16, warmup=5, seeds=(0,), device="cpu", log_every=10),
    }
    for name, values in overrides.items():
        sections[name] = dataclasses.replace(sections[name], **values)
    return Params(**sections)


@pytest.fixture
def tiny():
    return tiny_params()


# Recorded bytes and the numerics they were recorded under; PIPELINE_RECORDED_BYTES names another
# file (a test simulates a machine that computes otherwise with it).
RECORDED_BYTES = Path(__file__).with_name("recorded_bytes.json")


def recorded_bytes():
    return json.loads(Path(os.environ.get("PIPELINE_RECORDED_BYTES", RECORDED_BYTES)).read_text())


@functools.cache
def this_machines_operations():
    return operation_entries()


def skip_unless_same_numerics(recorded):
    """Skip, naming the operations, where this machine rounds otherwise than the recording one."""
    differ = differing(this_machines_operations(), recorded["numerics"])
    if differ:
        made_on = recorded["recorded_on"]
        pytest.skip(
            f"recorded on {made_on['model']} ({made_on['vendor']}), whose numerics differ from this "
            f"machine's in {', '.join(differ)}: bytes hold only where every operation computes alike"
        )

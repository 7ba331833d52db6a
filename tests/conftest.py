"""Shared fixtures: tiny parameters that train in a fraction of a second."""

import copy
import dataclasses
import functools
import json
import os
from pathlib import Path

# isort: off
import pipeline  # noqa: F401  first: it pins the CPU numerics before torch loads (pipeline/numerics/pin.py)

# isort: on
import pytest
import torch
import yaml

from pipeline.core.loop import train
from pipeline.numerics.fingerprint import operation_entries
from pipeline.numerics.record import differing
from pipeline.params import lesson
from pipeline.study.load import STUDY_PARAMS, Params, joined_files, parse_params
from pipeline.study.options import StudyModelConfig
from tests.tiny_clone import build_in_background, reproduced_copy

torch.set_num_threads(1)  # tiny models run fastest on one thread, and the suite shares the machine

ROOT = Path(__file__).resolve().parents[1]
# the one source of values: the lesson's params.yaml and the study's study/params.yaml, as one mapping
PARAMS_YAML = joined_files(ROOT / "params.yaml", ROOT / STUDY_PARAMS)
TINY = {  # the toy sizes the unit tests train at; everything else as params.yaml sets it
    "data": {"train_lengths": [5], "train_size": 256, "test_lengths": [3, 5], "test_size": 20, "seed": 0},
    "model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32, "dropout": 0.0, "max_len": 16},
    "train": {"steps": 30, "batch_size": 16, "warmup": 5, "seeds": [0], "device": "cpu", "log_every": 10},
}


def trained_alone(config, recipe, seed, data, **options):
    """One seed trained by the training loop (a group of one): its model and its every step's loss."""
    (model,), (losses,) = train(config, recipe, [seed], data, **options)
    return model, losses


def laid_over(base, overrides):
    """`base` with `overrides` laid over it, nested mappings merged key by key, tuples as lists."""
    out = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = laid_over(out[key], value)
        else:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def tiny_params(**overrides) -> Params:
    """Valid Params at toy size: params.yaml with TINY's values and `overrides` ({section: {key:
    value}}) laid over it, parsed and checked as the stages parse them."""
    return parse_params(laid_over(laid_over(PARAMS_YAML, TINY), overrides))


def write_params_files(folder, raw):
    """A params mapping (the lesson's sections and `study`) as the two files a stage reads in
    `folder`: params.yaml, and study/params.yaml holding the study's section."""
    (Path(folder) / STUDY_PARAMS).parent.mkdir(parents=True, exist_ok=True)
    lesson = {k: v for k, v in raw.items() if k != "study"}
    (Path(folder) / "params.yaml").write_text(yaml.safe_dump(lesson, sort_keys=False))
    (Path(folder) / STUDY_PARAMS).write_text(yaml.safe_dump({"study": raw["study"]}, sort_keys=False))


def model_config(**changes):
    """The lesson's model (pipeline.params.lesson.MODEL) with some values changed."""
    return dataclasses.replace(lesson.MODEL, **changes)


def study_config(**changes):
    """A study variant's model: the lesson's sizes, softmax attention and a gate's bias of -8, with
    some values changed (the study's positions, attention, norm among them)."""
    fields = {**dataclasses.asdict(lesson.MODEL), "attention": "softmax", "sigmoid_bias": -8.0}
    return StudyModelConfig(**{**fields, **changes})


def data_params(**changes):
    """params.yaml's data section with some values changed (tuples as given)."""
    return dataclasses.replace(parse_params(PARAMS_YAML).data, **changes)


@pytest.fixture
def tiny():
    return tiny_params()


def shared_base(config):
    """The run's temporary folder, which every pytest-xdist worker sees (a worker's own is below it)."""
    base = config._tmp_path_factory.getbasetemp()
    return base.parent if hasattr(config, "workerinput") else base


def pytest_collection_modifyitems(config, items):
    """Each worker's share of the long tests first and of the many short ones last, so that the
    workers end together on short tests rather than one of them running a long test alone.
    pytest-xdist (--dist worksteal) hands each worker one contiguous share of this order, then lets
    an idle worker take the back half of another's queue; so each share is laid out as: the slow tests
    that need no clone (they run while the tiny clone is reproduced), those that start from the clone,
    then the short ones, each kind dealt round-robin to the shares."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)

    def kind(item):
        if item.get_closest_marker("slow") is None:
            return 2
        return 1 if "reproduced_clone" in item.fixturenames else 0

    shares = [[] for _ in range(workers)]
    for k in range(3):
        for i, item in enumerate(item for item in items if kind(item) == k):
            shares[i % workers].append(item)
    items[:] = [item for share in shares for item in share]


def pytest_collection_finish(session):
    """Where a selected test starts from the reproduced tiny clone, start building it now."""
    if any("reproduced_clone" in item.fixturenames for item in session.items):
        build_in_background(shared_base(session.config))


@pytest.fixture
def reproduced_clone(request, tmp_path):
    """(this test's own copy of the tiny clone after `dvc repro`, results committed; that repro's output)."""
    return reproduced_copy(shared_base(request.config), tmp_path / "clone")


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

"""Every parameter combination the model offers either works through the model's entry points or is
refused up front.

The classes: for a study variant (study.variants), positions scheme x attention (every weighting, for
all three attentions, and the per-kind mixes); for the lesson's model (model.*), each of its own
options (the paper's positions and attention, post- and pre-norm) and one of the study's of each kind,
which it must refuse. Norm and dropout alternate across them, and max_len sits at the longest length
a model must read or one more; a scheme that gives the BOS a row of its own takes the one more (it
cannot hold the longest length without it), but once, which must be refused.

A class differs from another only inside the model, so each is tested through the model's entry points,
as every stage uses them: built from its parameters, trained a few steps by the training loop (a study
variant by the study's own trainer), saved as a checkpoint and loaded back to the same weights, and
decoded greedily at every length it must read, with and without the key/value cache, to the same
tokens. A class the parameter check refuses is refused with one line naming why, and the first stage
of its pipeline (numerics for the lesson's model, the variant's own stage for the study) stops with
that line before writing anything. One tiny end-to-end pipeline per pipeline (tests/test_pipeline.py)
runs every stage; tests/test_report_editions.py holds every scheme's name in both editions' words.
"""

import itertools
import math
import sys
from pathlib import Path

import pytest
import torch
from conftest import PARAMS_YAML, laid_over, write_params_files

from pipeline.core.data import synthetic_rows
from pipeline.core.decoding import greedy, greedy_cached
from pipeline.core.loop import train
from pipeline.infra.errors import ConfigError
from pipeline.model.checkpoint import save_checkpoint
from pipeline.params import model as lesson_model
from pipeline.study.load import parse_params
from pipeline.study.model import load_model
from pipeline.study.options import ATTENTION, NORMS, POSITIONS, attention_kinds
from pipeline.study.sets import training_set
from pipeline.study.variant import train_variant

ROOT = Path(__file__).resolve().parents[1]
LONGEST = 5  # the longest length the tiny configuration trains and tests
TINY = {
    "data": {"train_lengths": [LONGEST], "train_size": 160, "test_lengths": [3, LONGEST], "test_size": 8},
    "model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32},
    "train": {"steps": 10, "batch_size": 16, "warmup": 2, "seeds": [0], "device": "cpu", "log_every": 5},
    "evaluate": {"batch_size": 64, "show_failures": 1},
    "norm": {"count": 1},
    "probe": {"depths": [1, 2], "sweep_layers": [1, 2]},
    "study": {
        "model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32},
        "train": {"steps": 10, "batch_size": 16, "warmup": 2, "seeds": [0], "device": "cpu"},
        "data": {"train_lengths": [1, 2, 3, 4, LONGEST]},
        "max_length": 8,
        "test_size": 8,
        "diagnosis_lengths": [3, LONGEST],
        "verdict": {  # the verdict at the tiny lengths, judging whichever variants a test names
            "max_length": LONGEST + 2,
            "test_size": 8,
            "table_lengths": [3, LONGEST],
            "bar": {"accuracy": 0.99, "lengths": [1, LONGEST + 2], "seed_floor": 0.98, "min_seeds": 1},
        },
    },
}
# the straight-through gate trains like sigmoid; a signed count is a cross-attention only (mixes below)
UNIFORM = sorted(a for a in ATTENTION if a != "sigmoid_st" and not ATTENTION[a].counts_written)
MIXES = [
    "softmax/sigmoid/sigmoid",
    "none/sigmoid/sigmoid",
    "softmax/softmax/sigmoid",
    "none/split/split",
    "none/none/signed",
    "none/hard_sigmoid/signed",
    "softmax/none/signed",
    "none/none/signed_tanh",
    "none/none/signed_clamp",
    "none/sigmoid/signed_owed",
]
NO_ROOM = ("bos", "softmax")  # the one class whose BOS has no row to spare: refused for its max_len
# the study's options tried on the lesson's model, one of each kind: each refused, naming the key (the
# lesson's model has no attention to choose: a key it does not know)
LESSON_REFUSAL = {
    ("bos", "softmax", "post"): "model.positions = 'bos'",
    ("sinusoidal", "softmax/sigmoid/sigmoid", "post"): "model.attention",
    ("learned", "softmax", "rezero"): "model.norm = 'rezero'",
}
LESSON_REFUSED = list(LESSON_REFUSAL)


def classes():
    """(where, positions, attention, norm, dropout, max_len): for a study variant every scheme and every
    attention, each met at least once with the other turning over; for the lesson's model each of its
    own options (the paper's and pre-norm) and one study option of each kind, which it refuses. Norm,
    dropout and max_len's slack (at the longest length, or one past it) turn over across them."""
    attentions = UNIFORM + MIXES
    schemes = list(POSITIONS)
    pairs = [(p, attentions[i % len(attentions)]) for i, p in enumerate(schemes)]
    pairs += [(schemes[i % len(schemes)], a) for i, a in enumerate(attentions, start=1)]
    out = []
    for k, (positions, attention) in enumerate(pairs):
        norm, dropout, slack = list(NORMS)[k % len(NORMS)], (0.0, 0.1)[k % 2], (k // 2) % 2
        if POSITIONS[positions].source_rows and (positions, attention) != NO_ROOM:
            slack = 1
        out.append(("study", positions, attention, norm, dropout, LONGEST + slack))
    for k, (positions, norm) in enumerate(itertools.product(lesson_model.POSITIONS, lesson_model.NORMS)):
        out.append(("model", positions, "softmax", norm, (0.0, 0.1)[k % 2], LONGEST + k % 2))
    out += [("model", *refused, 0.1, LONGEST) for refused in LESSON_REFUSED]
    # the signed counts alone, with the one scheme they take and room for its BOS
    return out + [
        ("study", "bos", "none/none/signed", "post", 0.1, LONGEST + 1),
        ("study", "bos", "none/none/signed_owed", "pre", 0.0, LONGEST + 1),
    ]


def refusal(where, positions, attention, norm):
    """What the parameter check must name when it refuses a class: a study option on the lesson's
    model, a decoder blind to the input, a signed count whose encoder does not see each token alone,
    or else a max_len without room."""
    if where == "model" and (positions, attention, norm) in LESSON_REFUSED:
        return LESSON_REFUSAL[(positions, attention, norm)]
    encoder, _, cross = attention_kinds(attention)
    if cross == "none":
        return "cross-attention 'none'"
    if ATTENTION[cross].counts_written and (encoder != "none" or positions != "bos"):
        return "signed count"
    return "max_len"


def run_params(cls):
    """The tiny params of a class: a lesson's model's class under model.*, a study variant's as the
    variant `v` (the softmax baseline where the class is the lesson's)."""
    where, positions, attention, norm, dropout, max_len = cls
    raw = laid_over(PARAMS_YAML, TINY)
    values = {"positions": positions, "attention": attention, "norm": norm, "dropout": dropout}
    if where == "model":  # the lesson's model takes no attention but the paper's: named only to refuse
        values = {k: v for k, v in values.items() if k != "attention" or v != "softmax"}
        raw = laid_over(raw, {"model": {**values, "max_len": max_len}})
        raw["study"]["variants"] = {"v": {"positions": "bos", "attention": "softmax"}}
    else:
        model = {"norm": norm, "dropout": dropout, "max_len": max_len}
        raw["study"]["variants"] = {"v": {"positions": positions, "attention": attention, "model": model}}
    raw["study"]["verdict"]["variants"] = ["v"]
    return raw


def accepted(cls):
    try:
        parse_params(run_params(cls))
    except ConfigError:
        return False
    return True


CLASSES = classes()
ACCEPTED = [c for c in CLASSES if accepted(c)]
REFUSED = [c for c in CLASSES if not accepted(c)]


def class_id(cls):
    return "-".join(str(v) for v in cls)


def test_every_scheme_and_every_attention_is_tried_and_some_are_refused():
    study = [c for c in CLASSES if c[0] == "study"]
    assert {c[1] for c in study} == set(POSITIONS)
    named = {name for c in study for name in attention_kinds(c[2])}
    assert named == set(ATTENTION) - {"sigmoid_st"}
    assert ACCEPTED and REFUSED and {c[0] for c in REFUSED} == {"model", "study"}


def trained(cls, params):
    """(the class's model after a few training steps, its losses, the lengths it must read)."""
    if cls[0] == "model":
        recipe, lengths = params.train, list(params.data.test_lengths)
        data = synthetic_rows(recipe.steps * recipe.batch_size, LONGEST)
        (model,), (losses,) = train(params.model, recipe, [0], data)
        return model, losses, recipe, lengths
    config, recipe, data_params = params.study.recipes["v"]
    lengths = list(data_params.train_lengths)
    data = training_set(lengths, 160, 0, data_params.repeats, data_params.long_counts)
    (model,), (losses,) = train_variant(config, recipe, data, [0], "cpu")
    return model, losses, recipe, lengths


@pytest.mark.parametrize("cls", ACCEPTED, ids=map(class_id, ACCEPTED))
def test_an_accepted_combination_trains_saves_loads_and_decodes(cls, tmp_path):
    params = parse_params(run_params(cls))
    model, losses, recipe, lengths = trained(cls, params)
    assert len(losses) == recipe.steps and all(math.isfinite(v) for v in losses)
    save_checkpoint(tmp_path / "seed_0.pt", model)
    loaded, _ = load_model(tmp_path / "seed_0.pt")  # the class its stored configuration names
    assert type(loaded) is type(model)
    for name, weight in model.state_dict().items():
        assert torch.equal(weight, loaded.state_dict()[name]), name
    generator = torch.Generator().manual_seed(0)
    for length in lengths:
        src = torch.randint(0, 10, (4, length), generator=generator)
        with torch.no_grad():
            written, cached = greedy(loaded, src), greedy_cached(loaded, src)
        assert written.shape == (4, length) and ((written >= 0) & (written < 10)).all(), length
        if not POSITIONS[cls[1]].draws_positions:  # a drawing scheme draws anew each session
            assert torch.equal(written, cached), f"length {length}: the cache decodes otherwise"


def run_stage(module_name, args, monkeypatch):
    module = __import__(module_name, fromlist=["main"])
    monkeypatch.setattr(sys, "argv", [module_name, *args])
    module.main()


FIRST_STAGE = {  # the first stage of each pipeline, which checks its parameters before writing
    "model": ("pipeline.stages.numerics", ["--out", "metrics/numerics.json"]),
    "study": ("pipeline.stages.variant", ["v", "--out", "metrics/variants/v.json", "--models", "m/v"]),
}


@pytest.mark.parametrize("cls", REFUSED, ids=map(class_id, REFUSED))
def test_a_refused_combination_is_one_line_before_anything_is_written(cls, tmp_path, monkeypatch, capsys):
    raw = run_params(cls)
    with pytest.raises(ConfigError) as refused:
        parse_params(raw)
    where, positions, attention, norm, _, max_len = cls
    message, reason = str(refused.value), refusal(where, positions, attention, norm)
    assert "\n" not in message and reason in message, message
    assert reason != "max_len" or max_len == LONGEST, f"refused with room to spare: {message}"
    write_params_files(tmp_path, raw)
    before = sorted(tmp_path.rglob("*"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        run_stage(*FIRST_STAGE[where], monkeypatch)
    assert stopped.value.code == 2 and sorted(tmp_path.rglob("*")) == before
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and reason in err, err

"""Every parameter combination the model offers either runs every stage or is refused up front.

The classes: for a study variant (study.variants), positions scheme x attention (every weighting, for
all three attentions, and the per-kind mixes); for the lesson's model (model.*), each of its own
options (the paper's positions and attention, post- and pre-norm) and one of the study's of each kind,
which it must refuse. Norm and dropout alternate across them, and max_len sits at the longest length
a model must read or one more; a scheme that gives the BOS a row of its own takes the one more (it
cannot hold the longest length without it), but once, which must be refused. A combination that runs must
produce every stage's outputs, the report included; one that cannot must be refused by the
parameter check with one line, before any stage writes.

A class the check accepts runs beside another: each run pairs a class of the lesson's model with one of
a study variant (the variant `v` of that run's study), in the classes' order, and a lesson's model left
without a partner keeps the softmax baseline as its study's variant. Both classes of a run go through
every stage, the report included, as they would alone; the run's one study and one report take both,
as a user's pipeline holds a model and its variants together. A class the check refuses is tried
alone, so that its refusal names it.

A stage whose inputs equal those of a run earlier in this test process (the values its `params:`
list names and its input files, as DVC decides a rerun; the code is the same for every class) takes
that run's outputs instead of running again: each class shares half its stages with others. The
report runs in every class, its inputs being the class's own; so does each of its figures, except one
whose inputs (its arguments, a file by its bytes) equal those of a figure an earlier class drew: that
one takes the earlier PNG, as the report reruns nothing but what changed. Most of a class's time is
the report's figures, and a study variant leaves the lesson's model's figures as they were.
"""

import hashlib
import itertools
import json
import pickle
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PARAMS_YAML, laid_over

from pipeline.infra import files
from pipeline.infra.errors import ConfigError
from pipeline.params.load import parse_params
from pipeline.params.model import ATTENTION, NORMS, POSITIONS, attention_kinds
from pipeline.report import figures, study_figures
from pipeline.report import report as draw

pytestmark = pytest.mark.slow  # every stage in this process for each class: a few minutes

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
UNIFORM = sorted(a for a in ATTENTION if a != "sigmoid_st" and not ATTENTION.facts[a].counts_written)
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
# the study's options tried on the lesson's model, one of each kind: each refused, naming the study
LESSON_REFUSED = [
    ("bos", "softmax", "post"),
    ("sinusoidal", "softmax/sigmoid/sigmoid", "post"),
    ("learned", "softmax", "rezero"),
]
# Inputs the pipeline reads but a repro does not make: the frozen stages' and the fingerprint's records.
RECORDS = ["metrics/numerics.json", "metrics/benchmark.json", "metrics/benchmark", "metrics/search.json"]


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
        if POSITIONS.facts[positions].source_rows and (positions, attention) != NO_ROOM:
            slack = 1
        out.append(("study", positions, attention, norm, dropout, LONGEST + slack))
    lesson = [p for p in POSITIONS if not POSITIONS.facts[p].study]
    norms = [n for n in NORMS if not NORMS.facts[n].study]
    for k, (positions, norm) in enumerate(itertools.product(lesson, norms)):
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
        return "one of the length study's options"
    encoder, _, cross = attention_kinds(attention)
    if cross == "none":
        return "cross-attention 'none'"
    if ATTENTION.facts[cross].counts_written and (encoder != "none" or positions != "bos"):
        return "signed count"
    return "max_len"


def stage_commands():
    """dvc.yaml's stages in order, as (name, entry); the fingerprint and the frozen stages left out
    (their records are copied in)."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for name, stage in stages.items():
        if stage.get("frozen") or name == "numerics":
            continue
        yield name, stage


def argv_of(cmd):
    words = cmd.split()
    assert words[:2] == ["python", "-m"], cmd
    return words[2], words[3:]


def run_stage(module_name, args, monkeypatch):
    module = __import__(module_name, fromlist=["main"])
    monkeypatch.setattr(sys, "argv", [module_name, *args])
    try:
        module.main()
    except SystemExit as stop:  # a stage's error exits non-zero after one line
        raise AssertionError(f"{module_name} {' '.join(args)} exited {stop.code}") from None


def param_values(raw, names, key):
    """The values a stage's `params:` list names (dotted keys; `${key}`: its foreach key)."""
    found = {}
    for name in names:
        value = raw
        for part in name.replace("${key}", key).split("."):
            value = value.get(part) if isinstance(value, dict) else None
        found[name] = value
    return found


def digest(path):
    """SHA-256 of a file, or of every file below a folder with its name."""
    hashed = hashlib.sha256()
    for file in sorted([path] if path.is_file() else path.rglob("*")):
        if file.is_file():
            hashed.update(str(file).encode() + file.read_bytes())
    return hashed.hexdigest()


def stage_inputs(body, raw, key):
    """What DVC reruns a stage on, less the code: its parameters' values and its input files."""
    files = [d.replace("${key}", key) for d in body.get("deps", []) if not d.startswith("pipeline/")]
    values = param_values(raw, body.get("params", []), key)
    return json.dumps([values, {f: digest(Path(f)) for f in files}], sort_keys=True, default=str)


def stage_outputs(body, key):
    declared = body.get("outs", []) + body.get("metrics", [])
    return [(next(iter(o)) if isinstance(o, dict) else o).replace("${key}", key) for o in declared]


def copy_outputs(paths, source, target):
    """Each of `paths` (files or folders) from under `source` to the same place under `target`."""
    for path in paths:
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (source / path).is_dir() else shutil.copy2)(source / path, target / path)


RUN_BEFORE = {}  # (stage, foreach key, its inputs) -> a folder holding that run's outputs


@pytest.fixture(scope="module")
def outputs_store(tmp_path_factory):
    return tmp_path_factory.mktemp("stage_outputs")


def run_or_reuse(name, key, body, raw, monkeypatch, store):
    """Run the stage in the current folder, or take the outputs of an earlier run on the same inputs."""
    outputs, seen = stage_outputs(body, key), (name, key, stage_inputs(body, raw, key))
    if seen in RUN_BEFORE:
        return copy_outputs(outputs, RUN_BEFORE[seen], Path.cwd())
    run_stage(*argv_of(body["cmd"].replace("${key}", key)), monkeypatch)
    if all(Path(path).exists() for path in outputs):
        RUN_BEFORE[seen] = store / str(len(RUN_BEFORE))
        copy_outputs(outputs, Path.cwd(), RUN_BEFORE[seen])


FIGURES_BEFORE = {}  # (figure function, its inputs) -> the PNG drawn from them earlier in this process


def figure_png(args):
    """The PNG a report figure writes: its last path argument (the edition's words come after it)."""
    return next(a for a in reversed(args) if isinstance(a, Path))


def figure_inputs(args):
    """What a report figure is drawn from: its arguments but the PNG it writes, a file by its bytes."""
    png = figure_png(args)
    named = [a.read_bytes() if isinstance(a, Path) and a.is_file() else a for a in args if a is not png]
    return hashlib.sha256(pickle.dumps(named)).hexdigest()


def drawn_once(plot):
    def draw_or_copy(*args):
        seen, png = (plot.__qualname__, figure_inputs(args)), figure_png(args)
        if seen in FIGURES_BEFORE:
            return files.write_bytes(png, FIGURES_BEFORE[seen])  # as the figure's own save writes it
        plot(*args)
        FIGURES_BEFORE[seen] = png.read_bytes()

    return draw_or_copy


@pytest.fixture(autouse=True)
def figures_drawn_once(monkeypatch):
    """Every report figure drawn at most once per distinct inputs in this process (see the docstring)."""
    for module in (draw, figures, study_figures):
        for name in [n for n in vars(module) if n.startswith("plot_")]:
            monkeypatch.setattr(module, name, drawn_once(getattr(module, name)))


BASELINE = {"positions": "bos", "attention": "softmax"}  # a lesson's model's variant when none is paired


def run_params(model_class, study_class):
    """The tiny params of a run: a lesson's model's class under model.*, a study variant's as the variant
    `v` (the baseline where the run has none)."""
    raw = laid_over(PARAMS_YAML, TINY)
    if model_class is not None:
        _, positions, attention, norm, dropout, max_len = model_class
        values = {"positions": positions, "attention": attention, "norm": norm, "dropout": dropout}
        raw = laid_over(raw, {"model": {**values, "max_len": max_len}})
    if study_class is None:
        raw["study"]["variants"] = {"bos_mixed": dict(BASELINE)}
    else:
        _, positions, attention, norm, dropout, max_len = study_class
        model = {"norm": norm, "dropout": dropout, "max_len": max_len}
        raw["study"]["variants"] = {"v": {"positions": positions, "attention": attention, "model": model}}
    raw["study"]["verdict"]["variants"] = list(raw["study"]["variants"])  # the verdict judges it
    return raw


def alone(cls):
    """A class's run without a partner, as (model's class, study's class)."""
    return (cls, None) if cls[0] == "model" else (None, cls)


def accepted(cls):
    try:
        parse_params(run_params(*alone(cls)))
    except ConfigError:
        return False
    return True


def runs():
    """(model's class, study's class) of each run: every class the parameter check refuses alone, and
    those it accepts paired, the lesson's model's and the study variant's in the classes' order, a
    class left over alone (see the docstring)."""
    every = classes()
    refused = [alone(c) for c in every if not accepted(c)]
    models, studies = ([c for c in every if c[0] == where and accepted(c)] for where in ("model", "study"))
    return list(itertools.zip_longest(models, studies)) + refused


def run_id(run):
    return "+".join("-".join(str(v) for v in cls) for cls in run if cls is not None)


RUNS = runs()


def test_the_runs_hold_every_class_once_and_pair_only_accepted_ones():
    held = [c for run in RUNS for c in run if c is not None]
    assert sorted(held) == sorted(classes())
    for model_class, study_class in RUNS:
        assert model_class is None or model_class[0] == "model"
        assert study_class is None or study_class[0] == "study"
        if model_class is not None and study_class is not None:
            assert accepted(model_class) and accepted(study_class)


@pytest.mark.parametrize("model_class, study_class", RUNS, ids=map(run_id, RUNS))
def test_a_combination_runs_every_stage_or_is_refused_up_front(
    model_class, study_class, tmp_path, monkeypatch, outputs_store
):
    raw = run_params(model_class, study_class)
    copy_outputs(RECORDS, ROOT, tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    try:
        parse_params(raw)
    except ConfigError as refused:
        classes_run = [c for c in (model_class, study_class) if c is not None]
        assert len(classes_run) == 1, f"two classes accepted alone are refused together: {refused}"
        (where, positions, attention, norm, _, max_len), message = classes_run[0], str(refused)
        reason = refusal(where, positions, attention, norm)
        assert "\n" not in message and reason in message, message
        assert reason != "max_len" or max_len == LONGEST, f"refused with room to spare: {message}"
        # the numerics stage runs first in every run and checks params.yaml whole: it stops there
        numerics = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["numerics"]
        with pytest.raises(AssertionError, match="exited 2"):
            run_stage(*argv_of(numerics["cmd"]), monkeypatch)
        after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.name != "params.yaml")
        assert after == before
        return
    for name, stage in stage_commands():
        for key in raw["study"]["variants"] if "foreach" in stage else [""]:
            body = stage.get("do", stage)
            run_or_reuse(name, key, body, raw, monkeypatch, outputs_store)
            for path in stage_outputs(body, key):
                assert Path(path).exists(), f"{name}{'@' + key if key else ''} did not write {path}"

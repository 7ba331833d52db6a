"""The codebase's shape, kept: layers that point one way, stages thin and apart, modules small,
names public, and nothing tracked speaks of tickets instead of things."""

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.tools.code_shape import code_lines, imports_of, measure

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pipeline"
# A module is as long as its one job and a function as long as its one step; these caps only catch a
# module or a function that has grown a second one.
MAX_LINES = 500
MAX_FUNCTION_LINES = 80


def modules():
    return sorted(PACKAGE.rglob("*.py"))


def dotted(path):
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


@pytest.mark.parametrize("path", modules(), ids=dotted)
def test_no_stage_imports_a_stage_and_no_library_imports_one(path):
    for module, names in imports_of(path):
        targets = [module] + [f"{module}.{n}" for n in names]
        assert not any(t.startswith("pipeline.stages") for t in targets), (
            f"{dotted(path)} imports {module}: what stages share belongs in the library"
        )


# The layers, lowest first: a module imports only from lower layers or its own package.
LAYERS = {
    "pipeline.numerics.pin": 0,  # the pin, which the package root runs before anything loads torch
    "pipeline.infra": 0,  # helpers that know nothing of the task
    "pipeline.tokens": 0,  # the vocabulary
    "pipeline.params": 1,  # params.yaml: its rules, sections and the model's options
    "pipeline.model": 2,
    "pipeline.core": 3,  # the task and the recipe
    "pipeline.numerics": 4,  # byte reproducibility: the fingerprint, its record, its tools
    "pipeline.probes": 4,
    "pipeline.study": 4,
    "pipeline.report": 5,
    "pipeline.tools": 5,  # run by hand, and the frozen benchmark's work
    "pipeline.stages": 6,
}


def layer_of(module):
    """(package, rank) of a project module; the package root, which only pins the numerics
    (pipeline.numerics.pin) before anything loads torch, sits just above infra."""
    for package, rank in LAYERS.items():
        if module == package or module.startswith(package + "."):
            return package, rank
    return "pipeline", 0.5


@pytest.mark.parametrize("path", modules(), ids=dotted)
def test_imports_point_down_the_layers(path):
    own, rank = layer_of(dotted(path).removesuffix(".__init__"))
    for module, _ in imports_of(path):
        target, target_rank = layer_of(module)
        assert target == own or target_rank < rank, (
            f"{dotted(path)} ({own}) imports {module} ({target}): "
            "infra <- params <- model <- core <- numerics, probes, study <- report, tools <- stages"
        )


def test_the_model_imports_torch_the_standard_library_infra_its_parameters_and_the_vocabulary_only():
    allowed_third_party = {"torch"}
    for path in sorted((PACKAGE / "model").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top == "pipeline":
                    assert name.startswith(
                        ("pipeline.infra", "pipeline.params", "pipeline.model", "pipeline.tokens")
                    ), (
                        path,
                        name,
                    )
                else:
                    assert top in allowed_third_party or top in sys.stdlib_module_names, (path, name)


def top_level_imports(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def test_every_library_the_code_imports_is_pinned_in_requirements():
    """One that arrives only through another library's requirements can vanish with its next version."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    pinned = {re.split(r"[=<>~ ]", line)[0].lower() for line in lines if line and not line.startswith("#")}
    ours = {"pipeline", "tests", "conftest", "tiny_clone"}
    imported = {name for path in [*modules(), *ROOT.glob("tests/*.py")] for name in top_level_imports(path)}
    libraries = imported - ours - set(sys.stdlib_module_names)
    providers = importlib.metadata.packages_distributions()
    unpinned = {
        name: providers.get(name) for name in libraries if not pinned & {d.lower() for d in providers[name]}
    }
    assert libraries >= {"torch", "numpy", "jinja2"} and not unpinned, f"not in requirements.txt: {unpinned}"


def test_parsing_parameters_loads_neither_torch_nor_the_hand_set_construction():
    """The stages that only read results (data, report) start without torch's seconds of import."""
    probe = "import sys, pipeline.study.load, pipeline.params.lesson, pipeline.stages.report"
    probe += ", pipeline.stages.data"
    probe += "; print(sorted({'torch', 'pipeline.study.counting_sort'} & set(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr


def test_no_module_imports_form_a_cycle():
    graph = {dotted(p).removesuffix(".__init__"): {m for m, _ in imports_of(p)} for p in modules()}
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", "import cycle: " + " -> ".join([*trail, node])
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if nxt in graph and nxt != node:
                visit(nxt, [*trail, node])
        state[node] = "done"

    for node in graph:
        visit(node, [])


@pytest.mark.parametrize("path", modules(), ids=dotted)
def test_no_module_exceeds_the_size_a_reader_holds(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{dotted(path)} has {lines} lines (at most {MAX_LINES}): split it by job"


@pytest.mark.parametrize("path", modules(), ids=dotted)
def test_no_function_exceeds_a_screen(path):
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{dotted(path)}: {', '.join(long)}: at most {MAX_FUNCTION_LINES} lines a function"


def test_the_report_code_stays_a_fraction_of_the_project():
    """The report is one job of the package's seven, its prose in templates/ and the YAML catalogues,
    not in Python: its code stays within a fifth of the package's."""
    lines = lambda paths: sum(len(p.read_text().splitlines()) for p in paths)  # noqa: E731
    report, package = lines((ROOT / "pipeline/report").glob("*.py")), lines((ROOT / "pipeline").rglob("*.py"))
    assert report <= package / 5, f"pipeline/report/*.py holds {report} of the package's {package} lines"


@pytest.mark.parametrize("path", [*modules(), *sorted((ROOT / "tests").glob("*.py"))], ids=dotted)
def test_no_private_name_is_imported_across_modules(path):
    for module, names in imports_of(path):
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{dotted(path)} imports private {', '.join(private)} from {module}"


def test_nothing_tracked_names_a_ticket():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode:
        pytest.skip("not a git checkout")
    pattern = re.compile(r"\bissues? ?#?[0-9]", re.IGNORECASE)
    found = []
    for name in tracked.stdout.splitlines():
        path = ROOT / name
        if path.suffix in {".png", ".lock", ".npz", ".pt"} or not path.is_file():
            continue
        text = path.read_text(errors="ignore")
        found += [f"{name}: {m.group(0)}" for m in pattern.finditer(text)]
    assert not found, "name things by what they are, not by ticket: " + "; ".join(found[:5])


def test_the_shape_is_measured_from_the_source_as_the_readme_reports_it():
    """`python -m pipeline.tools.code_shape`: code lines leave out blanks, comments and docstrings; the
    package's folders and the pairs of them that imports tie are counted from the same reading of the
    imports that the layers above are held to."""
    assert (
        code_lines('"""Doc\nstring."""\n\n# a comment\nx = 1\n\n\ndef f():\n    """Doc."""\n    return x\n')
        == 3
    )
    m = measure()
    assert m["modules"] == len(modules()) and m["code_lines"] == sum(m["lines_by_module"].values())
    assert ("params", "stages") in m["ties"] and ("report", "stages") in m["ties"]
    assert ("model", "report") not in m["ties"]  # the report reads saved metrics, never a model
    assert (
        m["folder_pairs_tied"]
        <= m["folder_pairs_possible"]
        == len(m["folders"]) * (len(m["folders"]) - 1) // 2
    )

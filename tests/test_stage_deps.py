"""dvc.yaml's code deps follow the code: each stage lists exactly the project modules its command
imports, directly or through others, so editing any of them reruns the stage and no other change
does. A missing module would let DVC serve results the code no longer makes."""

import ast
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pipeline"


def module_file(name):
    """pipeline.a.b -> its source file, or None when the name is not a project module."""
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported_modules(path):
    """Project modules that the source at `path` imports anywhere (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}  # submodules by name
    return {name for name in found if name.split(".")[0] == PACKAGE and module_file(name)}


def with_parents(name):
    """Importing pipeline.a.b runs pipeline/__init__.py and pipeline/a/__init__.py first."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def import_closure(module):
    """Every project source file that `python -m <module>` executes, as repository-relative paths."""
    seen, todo = set(), [module]
    while todo:
        for name in with_parents(todo.pop()):
            if name not in seen:
                seen.add(name)
                todo += sorted(imported_modules(module_file(name)))
    return {module_file(name).relative_to(ROOT).as_posix() for name in seen}


def stages():
    """(stage name, module its cmd runs, its deps) for every stage of dvc.yaml, foreach included."""
    for name, stage in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].items():
        body = stage.get("do", stage)
        words = body["cmd"].split()
        assert words[:2] == ["python", "-m"], f"stage {name}: cmd is not `python -m <module>`"
        yield name, words[2], body.get("deps", [])


@pytest.mark.parametrize("name,module,deps", list(stages()), ids=[s[0] for s in stages()])
def test_stage_deps_equal_the_import_closure(name, module, deps):
    code = import_closure(module)
    repeated = sorted({d for d in deps if deps.count(d) > 1})
    assert not repeated, f"stage {name}: dvc.yaml lists deps twice: {', '.join(repeated)}"
    listed = {d for d in deps if d.endswith(".py")}
    missing, extra = sorted(code - listed), sorted(listed - code)
    assert not missing, f"stage {name}: dvc.yaml lacks deps it imports: {', '.join(missing)}"
    assert not extra, f"stage {name}: dvc.yaml lists deps it never imports: {', '.join(extra)}"


def test_the_closure_follows_imports_through_other_modules():
    closure = import_closure("pipeline.stages.train")
    assert {"pipeline/__init__.py", "pipeline/infra/numerics.py", "pipeline/infra/resume.py"} <= closure
    assert "pipeline/report/readme.py" not in closure

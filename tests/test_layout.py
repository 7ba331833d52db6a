"""The codebase's shape, kept: stages stay thin and apart, modules stay small, names stay public,
and nothing tracked speaks of tickets instead of things."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pipeline"
MAX_LINES = 300


def modules():
    return sorted(PACKAGE.rglob("*.py"))


def imports_of(path):
    """(module, names) of every `from pipeline... import ...` and `import pipeline...` in a file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline"):
            yield node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pipeline"):
                    yield alias.name, []


def dotted(path):
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


@pytest.mark.parametrize("path", modules(), ids=dotted)
def test_no_stage_imports_a_stage_and_no_library_imports_one(path):
    for module, names in imports_of(path):
        targets = [module] + [f"{module}.{n}" for n in names]
        assert not any(t.startswith("pipeline.stages") for t in targets), (
            f"{dotted(path)} imports {module}: what stages share belongs in the library"
        )


@pytest.mark.parametrize("path", modules(), ids=dotted)
def test_no_module_exceeds_the_size_a_reader_holds(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{dotted(path)} has {lines} lines (at most {MAX_LINES}): split it by job"


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

"""dvc.yaml's code deps, kept equal to what each stage imports.

Each stage's `deps:` in dvc.yaml is one flow list: its data and results first (written by hand),
then every project module its `python -m` command executes, directly or through other modules, so
that editing any of them reruns the stage and no other change does. `python -m
pipeline.tools.stage_deps --write` rewrites the module part from the code; without `--write` it
names the stages whose list is out of date (exit status 1). tests/test_stage_deps.py checks it too.
"""

import argparse
import ast
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "pipeline"
WIDTH = 110
DEPS = re.compile(r"^(?P<indent> +)deps: \[(?P<items>[^\]]*)\]", re.MULTILINE)
STAGE = re.compile(r"^  (?P<name>[a-z_]+):", re.MULTILINE)


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


def stages(text):
    """(stage name, module its cmd runs, its deps) for every stage of dvc.yaml, foreach included."""
    for name, stage in yaml.safe_load(text)["stages"].items():
        body = stage.get("do", stage)
        words = body["cmd"].split()
        if words[:2] != ["python", "-m"]:
            raise ValueError(f"stage {name}: cmd is not `python -m <module>`")
        yield name, words[2], body.get("deps", [])


def code_deps(module):
    """The stage's own module first, then the rest of its closure in order."""
    own = module_file(module).relative_to(ROOT).as_posix()
    return [own, *sorted(import_closure(module) - {own})]


def flow_list(indent, items):
    """`deps: [a, b, ...]`, wrapped at WIDTH, continuation lines two spaces deeper."""
    lines, line = [], f"{indent}deps: ["
    for i, item in enumerate(items):
        word = item + ("]" if i == len(items) - 1 else ",")
        if len(line) + 1 + len(word) > WIDTH and not line.endswith("["):
            lines.append(line)
            line = f"{indent}  {word}"
        else:
            line += ("" if line.endswith("[") else " ") + word
    return "\n".join([*lines, line])


def rewritten(text):
    """dvc.yaml with every stage's code deps recomputed (its other deps kept, in their order)."""
    modules = {name: module for name, module, _ in stages(text)}
    out, last = [], 0
    for match in DEPS.finditer(text):
        name = [m["name"] for m in STAGE.finditer(text, 0, match.start())][-1]
        items = [i.strip() for i in match["items"].replace("\n", " ").split(",") if i.strip()]
        kept = [i for i in items if not i.startswith(f"{PACKAGE}/")]
        out += [text[last : match.start()], flow_list(match["indent"], kept + code_deps(modules[name]))]
        last = match.end()
    return "".join(out) + text[last:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite dvc.yaml's code deps")
    args = parser.parse_args()
    path = ROOT / "dvc.yaml"
    text = path.read_text()
    new = rewritten(text)
    if args.write:
        path.write_text(new)
        print("dvc.yaml: code deps rewritten from each stage's imports")
    elif new != text:
        print("dvc.yaml's code deps are out of date: run python -m pipeline.tools.stage_deps --write")
        sys.exit(1)


if __name__ == "__main__":
    main()

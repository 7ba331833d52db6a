"""dvc.yaml's code deps and params, kept equal to what each stage imports and reads.

Each stage's `deps:` in dvc.yaml is one flow list: its data and results first (written by hand),
then every project module its `python -m` command executes, directly or through other modules, so
that editing any of them reruns the stage and no other change does. Its `params:` are what the
stage's module reads of params.yaml, by one rule: every `params.<section>` or
`params.<section>.<key>` it writes out (`params.study.variants[name]`, indexed by a name: a foreach
stage's own entry, `study.variants.${key}`), a whole section where it names one. The stage hands the
library only those values, so nothing else can reach it; a module that hands `params` itself to a
function reads everything, and is refused. `python -m pipeline.tools.stage_deps --write` rewrites
both from the code; without `--write` it says whether either is out of date (exit status 1).
tests/test_stage_deps.py checks it too.
"""

import argparse
import ast
import itertools
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "pipeline"
WIDTH = 110
DEPS = re.compile(r"^(?P<indent> +)deps: \[(?P<items>[^\]]*)\]", re.MULTILINE)
PARAMS = re.compile(r"^(?P<indent> +)params: \[(?P<items>(?:[^\[\]]|\[[^\]]*\])*)\]", re.MULTILINE)
PIPELINES = ("dvc.yaml", "study/dvc.yaml")  # the lesson's, the length study's
# The sections a pipeline reads from a file of their own (beside its dvc.yaml), and which pipeline may
# read them: the lesson's reads nothing of the study.
SECTION_FILES = {"study": "study/params.yaml"}
READS_SECTION = {"study/dvc.yaml": {"study"}, "dvc.yaml": set()}
STAGE = re.compile(r"^  (?P<name>[a-z_]+):", re.MULTILINE)


def module_file(name):
    """pipeline.a.b -> its source file, or None when the name is not a project module."""
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def run_module(module):
    """What `python -m <module>` runs: a package's `__main__` (after its `__init__`), else the module."""
    main = f"{module}.__main__"
    return main if module_file(module).name == "__init__.py" and module_file(main) else module


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


def named_strings(tree):
    """The string constants of a module, its docstrings left out."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
        and ast.get_docstring(node) is not None
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    }


def data_read_by(path):
    """The package's data files beside a module that the module names in code (`claims.yaml`, a
    folder such as `templates`): what it reads, so editing one reruns the stage as code does."""
    names, found = named_strings(ast.parse(path.read_text())), set()
    for data in path.parent.rglob("*"):
        parts = data.relative_to(path.parent).parts
        inside = [path.parent.joinpath(*parts[: i + 1]) for i in range(len(parts) - 1)]
        if any((folder / "__init__.py").exists() for folder in inside):
            continue  # a subpackage's data is its own modules' to name
        if data.is_file() and data.suffix not in (".py", ".pyc") and "__pycache__" not in parts:
            if parts[0] in names or data.name in names:
                found.add(data.relative_to(ROOT).as_posix())
    return found


def with_parents(name):
    """Importing pipeline.a.b runs pipeline/__init__.py and pipeline/a/__init__.py first."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def only_a_docstring(path):
    """A package's __init__.py that holds nothing but its docstring: importing it runs no code, so it
    is no code dependency (the day it holds a statement, it is one again, and this tool says so)."""
    body = ast.parse(path.read_text()).body
    docstring = [
        node for node in body[:1] if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    ]
    return path.name == "__init__.py" and body == docstring


def import_closure(module):
    """Every project source file that `python -m <module>` executes, and the data files they read,
    as repository-relative paths; a package marker that holds only its docstring left out."""
    seen, todo = set(), [run_module(module)]
    while todo:
        for name in with_parents(todo.pop()):
            if name not in seen:
                seen.add(name)
                todo += sorted(imported_modules(module_file(name)))
    files = {module_file(name) for name in seen} - set(filter(only_a_docstring, map(module_file, seen)))
    return {path.relative_to(ROOT).as_posix() for path in files} | set().union(*map(data_read_by, files))


def stages(text):
    """(stage name, module its cmd runs, its deps) for every stage of dvc.yaml, foreach included."""
    for name, stage in yaml.safe_load(text)["stages"].items():
        body = stage.get("do", stage)
        words = body["cmd"].split()
        if words[:2] != ["python", "-m"]:
            raise ValueError(f"stage {name}: cmd is not `python -m <module>`")
        yield name, words[2], body.get("deps", [])


def command_files(text):
    """{stage: the project files its command line names (an input such as search.yaml)}: deps the
    stage reads that no import shows."""
    found = {}
    for name, stage in yaml.safe_load(text)["stages"].items():
        words = stage.get("do", stage)["cmd"].split()
        found[name] = [w for w in words if w.startswith(f"{PACKAGE}/") and (ROOT / w).is_file()]
    return found


def code_deps(module):
    """The stage's own module first, then the rest of its closure in order."""
    own = module_file(run_module(module)).relative_to(ROOT).as_posix()
    return [own, *sorted(import_closure(module) - {own})]


OWN_ENTRY = "${key}"  # a foreach stage's own entry, as dvc.yaml names it (study.variants.${key})


def chain(node):
    """`params.a.b` (an Attribute chain rooted at the name `params`) as ["a", "b"], else None."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return names[::-1] if isinstance(node, ast.Name) and node.id == "params" and names else None


def stage_reads(module):
    """The params.yaml keys a stage's module reads, in the order it first names them: every maximal
    `params.x.y` it writes out (one indexed by a name is a foreach stage's own entry), a key dropped where
    its section is read whole. A bare `params` handed on reads everything: an error to fix."""
    tree = ast.parse(module_file(run_module(module)).read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "params" and isinstance(node.ctx, ast.Load):
            if not isinstance(parents.get(node), ast.Attribute):
                raise ValueError(
                    f"{module} hands all of params on (line {node.lineno}): pass its sections or values"
                )
        names = chain(node)
        if names is None or isinstance(parents.get(node), ast.Attribute):
            continue  # not a chain, or not the longest one
        parent = parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.slice, ast.Name):
            names = [*names, OWN_ENTRY]  # indexed by a name (the stage's own): not the whole mapping
        found.append((node.lineno, node.col_offset, ".".join(names)))
    keys = list(dict.fromkeys(key for *_, key in sorted(found)))
    whole = [k for k in keys if not any(k.startswith(f"{other}.") for other in keys if other != k)]
    return [f'"{key}"' if "${" in key else key for key in whole]


def listed(items):
    """`a, b, c]`: the items as words of a flow list, each with the punctuation that follows it."""
    return [item + ("]" if i == len(items) - 1 else ",") for i, item in enumerate(items)]


def flow_list(indent, items, key="deps"):
    """`deps: [a, b, ...]`, wrapped at WIDTH, continuation lines two spaces deeper."""
    return wrapped(indent, key, listed(items))


def wrapped(indent, key, words):
    """`key: [` and `words` (each with its punctuation), wrapped at WIDTH two spaces deeper."""
    lines, line = [], f"{indent}{key}: ["
    for word in words:
        if len(line) + 1 + len(word) > WIDTH and not line.endswith("["):
            lines.append(line)
            line = f"{indent}  {word}"
        else:
            line += ("" if line.endswith("[") else " ") + word
    return "\n".join([*lines, line])


def params_words(reads, pipeline):
    """A stage's params as words of its flow list: the keys of params.yaml bare, then those of a
    section with a file of its own (SECTION_FILES) as `file: [keys]`; a section this pipeline may not
    read is an error."""
    by_file = {}
    for key in reads:
        section = key.strip('"').split(".")[0]
        if section in SECTION_FILES and section not in READS_SECTION[pipeline]:
            raise ValueError(f"{pipeline}: a stage reads the section {section}, which is not this pipeline's")
        by_file.setdefault(SECTION_FILES.get(section), []).append(key)
    words = [f"{key}," for key in by_file.pop(None, [])]
    for path, keys in by_file.items():
        inner = listed(keys)
        inner[0] = f"{path}: [{inner[0]}"
        inner[-1] += ","
        words += inner
    return [*words[:-1], words[-1].removesuffix(",") + "]"]


def rewritten(text, pipeline="dvc.yaml"):
    """A pipeline's dvc.yaml (`pipeline`: its path) with every stage's code deps recomputed (its other
    deps kept, in their order) and its params rewritten."""
    modules, named = {name: module for name, module, _ in stages(text)}, command_files(text)
    out, last = [], 0
    for match in DEPS.finditer(text):
        name = [m["name"] for m in STAGE.finditer(text, 0, match.start())][-1]
        items = [i.strip() for i in match["items"].replace("\n", " ").split(",") if i.strip()]
        kept = [i for i in items if not i.startswith(f"{PACKAGE}/")] + named[name]
        out += [text[last : match.start()], flow_list(match["indent"], kept + code_deps(modules[name]))]
        last = match.end()
    return with_params("".join(out) + text[last:], modules, pipeline)


def with_params(text, modules, pipeline):
    """dvc.yaml with every stage's params: what its module reads. A stage whose module reads
    params.yaml and has no params: line, or has one and reads nothing, is an error to fix by hand."""
    starts = [(m["name"], m.start()) for m in STAGE.finditer(text)] + [(None, len(text))]
    out, last = [], 0
    for (name, start), (_, end) in itertools.pairwise(starts):
        reads, match = stage_reads(modules[name]), PARAMS.search(text, start, end)
        if bool(reads) != bool(match):
            raise ValueError(
                f"dvc.yaml: stage {name} has {'no ' if reads else ''}params: but its module "
                f"reads {'' if reads else 'no '}parameters"
            )
        if match:
            out += [
                text[last : match.start()],
                wrapped(match["indent"], "params", params_words(reads, pipeline)),
            ]
            last = match.end()
    return "".join(out) + text[last:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite dvc.yaml's code deps and params")
    args = parser.parse_args()
    stale = []
    for pipeline in PIPELINES:
        path = ROOT / pipeline
        text = path.read_text()
        new = rewritten(text, pipeline)
        if args.write:
            path.write_text(new)
            print(f"{pipeline}: code deps and params rewritten from each stage's imports and reads")
        elif new != text:
            stale.append(pipeline)
    if stale:
        print(
            f"{' and '.join(stale)}: code deps or params out of date: "
            "run python -m pipeline.tools.stage_deps --write"
        )
        sys.exit(1)


if __name__ == "__main__":
    main()

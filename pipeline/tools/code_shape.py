"""The package's shape, measured from its source alone: how many modules and lines of code, how long
its functions are, and which of its folders import which.

    python -m pipeline.tools.code_shape            # a summary
    python -m pipeline.tools.code_shape --json     # everything measured, as JSON

A line of code is a line that is not blank, not a comment and not part of a docstring. A folder is a
top-level folder of the package (its two root modules, `__init__.py` and `tokens.py`, are the folder
`.`); two folders are tied when a module of one imports a module of the other, either way.
tests/test_layout.py holds the layers with the same reading of the imports.
"""

import argparse
import ast
import itertools
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def imports_of(path):
    """(module, names) of every `from pipeline... import ...` and `import pipeline...` in a file."""
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline"):
            yield node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pipeline"):
                    yield alias.name, []


def code_lines(text):
    """The lines of `text` that hold code."""
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
                if isinstance(first.value.value, str):
                    docstrings |= set(range(first.lineno, first.end_lineno + 1))
    return sum(
        1
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.strip().startswith("#") and number not in docstrings
    )


def function_lengths(path):
    """(lines, name) of every function of a file, its decorators left out."""
    tree = ast.parse(Path(path).read_text())
    return [
        (node.end_lineno - node.lineno + 1, node.name)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def folder_of(path, package=PACKAGE):
    parts = Path(path).relative_to(package).parts
    return parts[0] if len(parts) > 1 else "."


def module_path(name, package=PACKAGE):
    """The file of a dotted project module (`pipeline.core.train`), or None."""
    base = package.joinpath(*name.split(".")[1:])
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def folder_ties(paths, package=PACKAGE):
    """The pairs of folders tied by an import, each pair sorted."""
    ties = set()
    for path in paths:
        for module, names in imports_of(path):
            for target in [module, *(f"{module}.{n}" for n in names)]:
                found = module_path(target, package)
                if found and folder_of(found, package) != folder_of(path, package):
                    ties.add(tuple(sorted((folder_of(path, package), folder_of(found, package)))))
    return ties


def measure(package=PACKAGE):
    """Everything measured, as a dict."""
    paths = sorted(Path(package).rglob("*.py"))
    lines = {str(p.relative_to(package.parent)): code_lines(p.read_text()) for p in paths}
    functions = sorted(
        ((n, f"{p.relative_to(package.parent)}:{name}") for p in paths for n, name in function_lengths(p)),
        reverse=True,
    )
    folders = sorted({folder_of(p, package) for p in paths})
    ties = folder_ties(paths, package)
    return {
        "modules": len(paths),
        "code_lines": sum(lines.values()),
        "folders": {f: sum(1 for p in paths if folder_of(p, package) == f) for f in folders},
        "folder_pairs_tied": len(ties),
        "folder_pairs_possible": len(list(itertools.combinations(folders, 2))),
        "ties": sorted(ties),
        "longest_functions": functions[:5],
        "functions_over_40_lines": sum(n > 40 for n, _ in functions),
        "lines_by_module": lines,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="everything measured, as JSON")
    args = parser.parse_args(argv)
    m = measure()
    if args.json:
        print(json.dumps(m, indent=1))
        return
    print(f"{m['modules']} modules, {m['code_lines']:,} lines of code")
    print(f"{len(m['folders'])} folders: " + ", ".join(f"{f} ({n})" for f, n in m["folders"].items()))
    print(f"folder pairs tied by imports: {m['folder_pairs_tied']} of {m['folder_pairs_possible']}")
    print("longest functions: " + ", ".join(f"{name} ({n})" for n, name in m["longest_functions"]))
    print(f"functions over 40 lines: {m['functions_over_40_lines']}")


if __name__ == "__main__":
    main()

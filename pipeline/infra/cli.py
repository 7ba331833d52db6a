"""A stage's command line: the paths it reads and writes, named once, in dvc.yaml's `cmd`."""

import argparse
from pathlib import Path


def stage_paths(doc, *names, positional=()):
    """Parse `--<name> PATH` for each of `names` (all required) and the `positional` words first;
    `doc` is the stage's docstring, whose first line is the help."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for word in positional:
        parser.add_argument(word)
    for name in names:
        parser.add_argument(f"--{name}", type=Path, required=True, metavar="PATH")
    return parser.parse_args()

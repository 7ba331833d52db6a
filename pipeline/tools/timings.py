"""How long each stage took on this machine, from the run records that every stage keeps
(runs/<stage>.json: its wall time, when it finished, the environment it ran in):

    python -m pipeline.tools.timings

Timings are not results: they depend on the machine and its load, so no stage writes them into
metrics/ or the pages, and this tool reads them where they are kept, git-ignored. One line a stage,
in the order they finished, then each pipeline's sum and the machine
they ran on (the frozen stages are in the sums where they ran).
"""

import argparse
import json
import sys
from pathlib import Path

import yaml

from pipeline.infra.entry import RUNS_DIR

PIPELINES = {"the lesson's": Path("dvc.yaml"), "the study's": Path("study/dvc.yaml")}


def stages_by_pipeline():
    """{pipeline: the stage names its file declares} (a foreach stage by its name, without `@key`)."""
    found = {name: path for name, path in PIPELINES.items() if path.exists()}
    return {name: set(yaml.safe_load(path.read_text())["stages"]) for name, path in found.items()}


def read_records(folder=RUNS_DIR):
    """Every stage's latest run record in `folder`, in the order they finished."""
    records = []
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise SystemExit(f"error: {path} is not a run record ({error}): rerun its stage") from None
        records.append(record)
    return sorted(records, key=lambda r: (r.get("finished", ""), r["stage"]))


def table(records):
    """The records as aligned lines: stage, seconds, when it finished; then the sum and the machine."""
    if not records:
        return f"no run records in {RUNS_DIR}/: run `dvc repro -P` (or `make repro`) first"
    width = max(len(r["stage"]) for r in records)
    lines = [f"{'stage':<{width}}  {'seconds':>8}  finished"]
    lines += [f"{r['stage']:<{width}}  {r['seconds']:8.1f}  {r.get('finished', '')}" for r in records]
    for name, stages in stages_by_pipeline().items():
        seconds = [r["seconds"] for r in records if r["stage"].split("@")[0] in stages]
        if seconds:
            lines.append(f"{'sum, ' + name:<{width}}  {sum(seconds):8.1f}")
    last = next((r for r in reversed(records) if "threads" in r), records[-1])  # a stage's full record
    lines.append(
        f"on {last.get('platform', '?')}, {last.get('threads', '?')} threads, "
        f"torch {last.get('torch', '?')}, CPU code paths {last.get('cpu_capability', '?')}; "
        "each stage's own wall time, DVC's aside"
    )
    return "\n".join(lines)


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    print(table(read_records()))


if __name__ == "__main__":
    sys.exit(main())

"""The replication as a gate: `python -m pipeline.tools.verdict` exits 1 when a claim fails that is
not a known, reviewed deviation, or when a known deviation no longer fails (strict, like a strict
xfail: the list must follow the results). It reads the lesson's claims table and the length study's
(the lesson's statements on other lengths that the study judges)."""

import csv
import sys
from pathlib import Path

import yaml

from pipeline.infra.entry import stage_entry
from pipeline.infra.errors import DataError

CLAIMS_PATHS = (Path("reports/claims.csv"), Path("reports/study/claims.csv"))
DEVIATIONS_PATH = Path(__file__).parents[1] / "report/known_deviations.yaml"


def read_statuses(paths=CLAIMS_PATHS):
    """{claim id: status} of every claims table in `paths`."""
    statuses = {}
    for path in paths:
        try:
            with open(path, newline="") as f:
                statuses |= {row["id"]: row["status"] for row in csv.DictReader(f)}
        except FileNotFoundError:
            raise DataError(f"{path} not found: run `make repro` first") from None
    return statuses


def read_deviations(path=DEVIATIONS_PATH):
    """{claim id: reason} of the reviewed list; every entry is a mapping with an id, a reason and
    evidence, and names a claim once. A hand-edited file that breaks these is one clear error."""
    try:
        listed = yaml.safe_load(Path(path).read_text()) or {}
    except yaml.YAMLError as err:
        raise DataError(f"{path} is not valid YAML: {getattr(err, 'problem', err)}") from None
    entries = listed.get("deviations") or [] if isinstance(listed, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise DataError(f"{path}: expected `deviations:` and a list of entries with id, reason, evidence")
    deviations = {}
    for entry in entries:
        missing = [k for k in ("id", "reason", "evidence") if not str(entry.get(k) or "").strip()]
        if missing:
            raise DataError(f"{path}: entry {entry.get('id', '?')} lacks {', '.join(missing)}")
        if entry["id"] in deviations:
            raise DataError(f"{path}: {entry['id']} is listed twice")
        deviations[entry["id"]] = entry["reason"]
    return deviations


def judge(statuses, deviations):
    """The problems that fail the gate, each one line: unexpected fails, and listed claims that are
    missing from the table or no longer fail."""
    problems = [
        f"{c}: fails and is not a known deviation"
        for c, s in statuses.items()
        if s == "fail" and c not in deviations
    ]
    for claim in deviations:
        if claim not in statuses:
            problems.append(f"{claim}: listed as a known deviation but not in the claims table")
        elif statuses[claim] != "fail":
            problems.append(f"{claim}: listed as a known deviation but now {statuses[claim]}: take it off")
    return problems


def summary(statuses, deviations):
    counts = {s: sum(status == s for status in statuses.values()) for s in ("pass", "fail", "note")}
    return (
        f"claims: {counts['pass']} pass, {counts['fail']} fail ({len(deviations)} known deviations), "
        f"{counts['note']} noted"
    )


@stage_entry
def main():
    statuses, deviations = read_statuses(), read_deviations()
    print(summary(statuses, deviations))
    problems = judge(statuses, deviations)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()

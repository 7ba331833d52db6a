"""The replication as a gate: `python -m pipeline.tools.verdict` exits 1 when any claim has failed."""

import csv
import sys
from pathlib import Path

from pipeline.infra.errors import DataError, stage_entry

CLAIMS_PATH = Path("reports/claims.csv")


def read_statuses(path=CLAIMS_PATH):
    try:
        with open(path, newline="") as f:
            return [(row["id"], row["status"]) for row in csv.DictReader(f)]
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `make repro` first") from None


@stage_entry
def main():
    rows = read_statuses()
    failed = [claim for claim, status in rows if status == "fail"]
    counts = {s: sum(status == s for _, status in rows) for s in ("pass", "fail", "note")}
    print(f"claims: {counts['pass']} pass, {counts['fail']} fail, {counts['note']} noted")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

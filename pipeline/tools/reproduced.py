"""After `make repro`: did the regeneration reproduce the committed results, as far as this machine can?

`python -m pipeline.tools.reproduced` (CI runs it after `make repro`) reads the claims' verdict and
sets the numerics the regeneration ran with (metrics/numerics.json, just rewritten by the numerics
stage) against those of the committed results (the same file at git's HEAD):
- the same numerics: every tracked file must be the committed bytes (`git status` clean);
- other numerics (another CPU vendor, another mode): the bytes may differ in the last bits, so the
  verdict must pass, and it prints which operations compute otherwise and which files differ.
Exit status 0 when the results hold, 1 when they do not, 2 on missing inputs.
"""

import json
import subprocess
import sys

from pipeline.infra.entry import stage_entry
from pipeline.infra.errors import DataError
from pipeline.numerics.record import differing, mode_entries, read_record
from pipeline.tools.verdict import judge, read_deviations, read_statuses, summary

NUMERICS = "metrics/numerics.json"


def git(*args):
    out = subprocess.run(["git", *args], capture_output=True, text=True)
    if out.returncode:
        raise DataError(f"git {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout


def committed_record():
    try:
        return json.loads(git("show", f"HEAD:{NUMERICS}"))
    except DataError:
        raise DataError(
            f"{NUMERICS} is not committed: there are no committed results to compare with"
        ) from None


def numerics_changes(committed, regenerated):
    """What computes otherwise: a change of mode, if any, then the entries whose hashes differ
    between the mode the regeneration ran in and the one the committed results were made in."""
    made, ran = committed["in_use"], regenerated["in_use"]
    mode = [f"mode {ran} instead of {made}"] if made != ran else []
    return mode + differing(mode_entries(regenerated, ran), mode_entries(committed, made))


def check(problems, changes, changed_files):
    """(exit status, the lines to print) for the verdict's problems, what computes otherwise and the
    tracked files the regeneration changed."""
    lines = [*problems]
    if problems:
        return 1, lines + ["the claims' verdict fails: the replication does not hold"]
    if not changes:
        if changed_files:
            return 1, lines + [
                f"the same numerics as the committed results, yet {len(changed_files)} tracked files "
                "differ (same code and parameters must give the same bytes):",
                *changed_files,
            ]
        return 0, ["the same numerics as the committed results: every result reproduced to the byte"]
    lines += [
        f"this machine computes otherwise than the committed results' machine: {', '.join(changes)}",
        f"{len(changed_files)} tracked files differ in their bytes:",
        *changed_files,
        "every claim still holds (the verdict passes): the replication holds with these numerics",
    ]
    return 0, lines


@stage_entry
def main():
    statuses, deviations = read_statuses(), read_deviations()
    print(summary(statuses, deviations))
    problems = judge(statuses, deviations)
    changes = numerics_changes(committed_record(), read_record(NUMERICS))
    changed_files = [line[3:] for line in git("status", "--porcelain").splitlines()]
    status, lines = check(problems, changes, changed_files)
    for line in lines:
        print(line, file=sys.stderr if status else sys.stdout)
    sys.exit(status)


if __name__ == "__main__":
    main()

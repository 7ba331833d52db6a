"""Does this machine compute as the one that made the committed results?

`python -m pipeline.numerics.compare` computes the numerics fingerprint of this machine in both
modes (pipeline/numerics/pin.py: `portable`, the committed results', and `fast`) and names,
for each, the operations that round differently from the fingerprint the committed results were
made with (metrics/numerics.json, or `--against` another machine's file). Where the mode in use
agrees entry for entry, `make repro` reproduces every committed result to the byte; where it does
not, the results differ in the last bits and the claims' verdict is what must hold.

    python -m pipeline.numerics.compare                      # this machine against metrics/numerics.json
    python -m pipeline.numerics.compare --against other.json # against a fingerprint from elsewhere
    python -m pipeline.numerics.compare --write mine.json    # save this machine's, to send to someone
    python -m pipeline.numerics.compare --other-mode         # the mode the reference was not made in

Exit status 0 when the mode in use agrees with the reference, 1 when it does not, 2 on bad input.
"""

import argparse
import sys
import time

from pipeline.infra import files
from pipeline.infra.entry import stage_entry
from pipeline.numerics import pin as numerics
from pipeline.numerics.record import differing, measure, mode_entries, read_record

REFERENCE = "metrics/numerics.json"


def reference_mode(reference, settings):
    """The reference's name for the mode of these settings, or None. A record made under other mode
    names (from before the committed mode was renamed) is matched by what its modes set, and one
    made before a library was pinned (NumPy's settings) by the settings it names: its entries then
    lack that library's, which the comparison names as differing."""
    modes = reference["modes"].items()
    same = next((name for name, m in modes if m["settings"] == settings), None)
    return same or next((name for name, m in modes if m["settings"].items() <= settings.items()), None)


def compare(ours, reference):
    """One line per mode: agrees with the reference, or which entries differ. Returns whether this
    machine, in its mode, computes as the reference's results were computed."""
    made_on = reference["cpu"]
    print(f"reference: {made_on['model']} ({made_on['vendor']}), results made in mode {reference['in_use']}")
    agrees = False  # until this machine's mode in use is found to compute as the reference's results
    for mode, measured in ours["modes"].items():
        theirs = reference_mode(reference, measured["settings"])
        if theirs is None:
            print(f"  {mode:9s} not in the reference")
            continue
        named = "" if theirs == mode else f" (the reference's {theirs})"
        entries = mode_entries(ours, mode)
        diff = differing(entries, mode_entries(reference, theirs))
        if diff:
            print(f"  {mode:9s} differs in {len(diff)} of {len(entries)} entries{named}: {', '.join(diff)}")
        else:
            print(
                f"  {mode:9s} agrees in all {len(entries)} entries{named} "
                f"(fingerprint {measured['fingerprint']})"
            )
        if theirs == reference["in_use"]:
            agrees = not diff and ours["in_use"] == mode
    return agrees


def other_mode(reference):
    """The numerics mode the reference's results were not made in: CI runs the machine-dependent tests
    in it once more, so that a test that assumes this machine computes as the record fails anywhere."""
    return next(mode for mode in numerics.MODES if mode != reference["in_use"])


@stage_entry
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=REFERENCE, help=f"reference fingerprint (default {REFERENCE})")
    parser.add_argument("--write", metavar="PATH", help="also save this machine's fingerprint to PATH")
    parser.add_argument(
        "--other-mode", action="store_true", help="only print the mode the reference was not made in"
    )
    args = parser.parse_args()
    reference = read_record(args.against)
    if args.other_mode:
        print(other_mode(reference))
        return
    start = time.perf_counter()
    ours = measure()
    cpu = ours["cpu"]
    print(
        f"this machine: {cpu['model']} ({cpu['vendor']}), torch {ours['torch']}, mode in use "
        f"{ours['in_use']} ({time.perf_counter() - start:.1f} s)"
    )
    if args.write:
        files.write_json(args.write, ours)
        print(f"written: {args.write}")
    agrees = compare(ours, reference)
    in_use = ours["in_use"]
    if agrees:
        print(f"mode {in_use} computes as the reference's results: `make repro` gives the same bytes")
    else:
        print(
            f"mode {in_use} computes otherwise than the reference's results (made in its mode "
            f"{reference['in_use']}): results will differ in the last bits "
            f"(set {numerics.MODE_ENV} to compare another mode); the claims' verdict is what must hold"
        )
    sys.exit(0 if agrees else 1)


if __name__ == "__main__":
    main()

"""Stage `numerics`: the numerics fingerprint of the machine the results are made on.

Runs on every `dvc repro` (always_changed): where this machine computes every operation of the mode
in use as the one that wrote metrics/numerics.json (whatever the other modes compute here), the
file stays as it was and nothing downstream reruns; where it computes otherwise (another mode, a CPU
whose kernels round otherwise), the file changes and every stage that computes with torch reruns,
so that results and the fingerprint beside them always agree.
The work is in pipeline/probes/numerics_record.py (the record) and fingerprint.py (the measures).
"""

import time
from pathlib import Path

from pipeline.infra import files, runlog
from pipeline.infra.errors import PipelineError, stage_entry
from pipeline.probes.numerics_record import kept_record, read_record

PATH = Path("metrics/numerics.json")


@stage_entry
def main():
    start = time.perf_counter()
    try:
        previous = read_record(PATH)
    except PipelineError:  # missing or unreadable: this machine's record replaces it
        previous = None
    record = kept_record(previous)
    files.write_json(PATH, record)
    mode = record["in_use"]
    print(
        f"numerics: mode {mode}, fingerprint {record['modes'][mode]['fingerprint']}: "
        + ("as recorded" if record == previous else f"a new record, made on {record['cpu']['model']}")
    )
    runlog.record_run("numerics", time.perf_counter() - start)


if __name__ == "__main__":
    main()

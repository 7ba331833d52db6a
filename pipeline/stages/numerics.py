"""Stage `numerics`: the numerics fingerprint of the machine the results are made on.

    python -m pipeline.stages.numerics --out metrics/numerics.json

Runs on every `dvc repro` (always_changed): where this machine computes every operation of the mode
in use as the one that wrote the record (whatever the other modes compute here), the file stays as
it was and nothing downstream reruns; where it computes otherwise (another mode, a CPU whose
kernels round otherwise), the file changes and every stage that computes with torch reruns, so that
results and the fingerprint beside them always agree. The work is in pipeline/numerics/record.py
(the record) and fingerprint.py (the measures).

It is also where params.yaml is checked whole, before any stage trains: every section and the rules
across them (pipeline/params/lesson_load.py), so a bad value is refused here, in one line, before
minutes of training. The length study's file is checked by each of its own stages.
"""

import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.errors import PipelineError
from pipeline.infra.outputs import stage_outputs
from pipeline.numerics.record import kept_record, read_record
from pipeline.params.lesson_load import load_lesson_params


@stage_entry
def main():
    args = stage_paths(__doc__, "out")
    start = time.perf_counter()
    load_lesson_params()  # every section and rule: a bad value stops the run here
    try:
        previous = read_record(args.out)
    except PipelineError:  # missing or unreadable: this machine's record replaces it
        previous = None
    record = kept_record(previous)
    with stage_outputs(args.out, detail=False) as out:
        out.headline = record
    mode = record["in_use"]
    print(
        f"numerics: mode {mode}, fingerprint {record['modes'][mode]['fingerprint']}: "
        + ("as recorded" if record == previous else f"a new record, made on {record['cpu']['model']}")
    )
    record_run("numerics", time.perf_counter() - start)


if __name__ == "__main__":
    main()

"""Stage `report`: the lesson's figures, the claims table, reports/README.md and reports/APPENDIX.md
with their Spanish editions README.es.md and APPENDIX.es.md, from the lesson's saved metrics only.

    python -m pipeline.stages.report --metrics metrics --reports reports

A thin entry point that reads inputs and writes outputs; the work is in pipeline/report/report.py.
"""

import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.params.lesson_load import LessonParams, load_lesson_params
from pipeline.report.report import ReportParams, write_report


def report_params(params: LessonParams) -> ReportParams:
    """What the report reads of params.yaml (`params`, checked whole); the tests build it here too."""
    return ReportParams(
        data=params.data,
        model=params.model,
        train=params.train,
        norm_count=params.norm.count,
        probe_depths=params.probe.depths,
    )


@stage_entry
def main():
    args = stage_paths(__doc__, "metrics", "reports")
    start = time.perf_counter()
    claims, tally, pages = write_report(report_params(load_lesson_params()), args.metrics, args.reports)
    record_run("report", time.perf_counter() - start)
    failed = [c.id for c in claims if c.status == "fail"]
    print(
        f"report: {tally['measured_pass']} of {tally['falsifiable']} falsifiable claims hold, "
        f"{tally['measured_undecided']} cannot discriminate; fail: {', '.join(failed) or 'none'}; "
        + ", ".join(str(args.reports / page) for page in pages)
    )


if __name__ == "__main__":
    main()

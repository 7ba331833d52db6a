"""Stage `study_pages`: the length study's own pages, reports/study/README.md and APPENDIX.md with their
Spanish editions, its figures and the table of the lesson's statements it judges (claims.csv), from
saved metrics only: the study's, and the lesson's where it compares with them.

    python -m pipeline.stages.study_pages --metrics metrics --pages reports/study \
        --out metrics/study_pages.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/report/study/report.py.
"""

import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.report.study.report import StudyPagesParams, write_study_pages
from pipeline.study.load import load_params


@stage_entry
def main():
    args = stage_paths(__doc__, "metrics", "pages", "out")
    start = time.perf_counter()
    params = load_params()
    pages_params = StudyPagesParams(data=params.data, train=params.train, study=params.study)
    claims, pages = write_study_pages(pages_params, args.metrics, args.pages, args.out)
    record_run("study_pages", time.perf_counter() - start)
    failed = [c.id for c in claims if c.status == "fail"]
    held = sum(c.status == "pass" for c in claims)
    print(
        f"study pages: {held} of {len(claims)} of the lesson's statements on other lengths hold; "
        f"fail: {', '.join(failed) or 'none'}; " + ", ".join(str(args.pages / page) for page in pages)
    )


if __name__ == "__main__":
    main()

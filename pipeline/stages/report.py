"""Stage `report`: figures, the claims table and reports/README.md, from saved metrics only.

A thin entry point that reads inputs and writes outputs; the work is in pipeline/report/readme.py.
"""

import time
from pathlib import Path

from pipeline.infra import files, runlog
from pipeline.infra.errors import stage_entry
from pipeline.infra.params import load_params
from pipeline.report import study_section
from pipeline.report.readme import (
    FIGURE_LIST,
    FIGURES,
    REPORTS,
    build_claims,
    claims_csv,
    draw_figures,
    findings,
    read_json,
    read_losses,
    render_readme,
)


@stage_entry
def main():
    start = time.perf_counter()
    params = load_params()
    m = {
        name: read_json(f"metrics/{name}.json")
        for name in ("architecture", "data", "train", "evaluate", "probe", "study")
    }
    m["example"] = read_json("metrics/evaluate/example.json")
    losses = read_losses("metrics/train", params.train.seeds)
    claims = build_claims(params, m, losses)
    draw_figures(params, m)
    files.write_text(REPORTS / "claims.csv", claims_csv(claims))
    runlog.record_run("report", time.perf_counter() - start)
    notes = read_json("metrics/probe/notes.json")
    study = study_section.section(
        m["study"],
        read_json("metrics/study/meta.json"),
        Path("metrics/study/diagnosis.md").read_text(),
        read_json("metrics/study/diagnosis.json"),
    )
    readme = render_readme(params, claims, notes, findings(params, m), study)
    files.write_text(REPORTS / "README.md", readme)
    failed = [c.id for c in claims if c.status == "fail"]
    print(
        f"report: {sum(c.status == 'pass' for c in claims)} of {len(claims)} claims pass; "
        f"fail: {', '.join(failed) or 'none'}; {len(FIGURE_LIST)} figures in {FIGURES}"
    )


if __name__ == "__main__":
    main()

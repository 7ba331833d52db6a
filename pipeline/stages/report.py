"""Stage `report`: figures, the claims table and reports/README.md, from saved metrics only.

A thin entry point that reads inputs and writes outputs; the work is in pipeline/report/.
"""

import time
from pathlib import Path

from pipeline.infra import files, runlog
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import detail_path
from pipeline.infra.params import load_params
from pipeline.report import study_section
from pipeline.report.claims.table import all_claims, claims_csv
from pipeline.report.draw import draw_figures
from pipeline.report.environment import environment_lines
from pipeline.report.findings.summary import all_findings
from pipeline.report.inputs import read_json, read_losses
from pipeline.report.readme import render_readme
from pipeline.report.seed_figure import plot_seed_distributions

REPORTS = Path("reports")
SAVED = ("architecture", "data", "train", "evaluate", "norm", "probe", "study")  # metrics/<name>/summary.json
CLAIMS_METRICS = "metrics/report.json"  # the claims' verdict, compared across experiments


@stage_entry
def main():
    start = time.perf_counter()
    params = load_params()
    m = {name: read_json(detail_path(f"metrics/{name}.json")) for name in SAVED}
    m["benchmark"] = read_json("metrics/benchmark.json")  # the speed report: a script's, not a stage's
    m["example"] = read_json("metrics/evaluate/example.json")
    m["study_meta"] = read_json("metrics/study/meta.json")
    m["diagnosis"] = read_json("metrics/study/diagnosis.json")
    m["search"] = read_json("metrics/search.json")  # the length study's search: a tool's, not a stage's
    claims = all_claims(params, m, read_losses("metrics/train", params.train.seeds))
    draw_figures(params, m, REPORTS / "figures")
    plot_seed_distributions(claims, REPORTS / "figures" / "seed_distributions.png")
    files.write_text(REPORTS / "claims.csv", claims_csv(claims))
    study = study_section.section(
        m["study"],
        m["study_meta"],
        Path("metrics/study/diagnosis.md").read_text(),
        m["diagnosis"],
        m["search"],
    )
    readme = render_readme(
        seeds=params.train.seeds,
        claims=claims,
        findings=all_findings(params, m, claims),
        notes=read_json("metrics/probe/notes.json"),
        study=study,
        environment=environment_lines(read_json("metrics/numerics.json")),
    )
    files.write_text(REPORTS / "README.md", readme)
    counts = {f"claims_{s}": sum(c.status == s for c in claims) for s in ("pass", "fail", "note")}
    files.write_json(CLAIMS_METRICS, {**counts, "claims_total": len(claims)})
    runlog.record_run("report", time.perf_counter() - start)
    failed = [c.id for c in claims if c.status == "fail"]
    print(
        f"report: {sum(c.status == 'pass' for c in claims)} of {len(claims)} claims pass; "
        f"fail: {', '.join(failed) or 'none'}; figures in {REPORTS / 'figures'}"
    )


if __name__ == "__main__":
    main()

"""Stage `report`: figures, the claims table and reports/README.md, from saved metrics only.

    python -m pipeline.stages.report --metrics metrics --reports reports

A thin entry point that reads inputs and writes outputs; the work is in pipeline/report/.
"""

import time

from pipeline.core.params import load_params
from pipeline.infra import files, runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import detail_path
from pipeline.report import study_section
from pipeline.report.claims.table import all_claims, claims_csv
from pipeline.report.draw import draw_figures
from pipeline.report.environment import environment_lines
from pipeline.report.findings.summary import all_findings
from pipeline.report.inputs import read_json, read_losses
from pipeline.report.readme import render_readme
from pipeline.report.seed_figure import plot_seed_distributions

SAVED = ("architecture", "data", "train", "evaluate", "norm", "probe", "study")  # metrics/<name>/summary.json


@stage_entry
def main():
    args = stage_paths(__doc__, "metrics", "reports")
    metrics_dir, REPORTS = args.metrics, args.reports
    start = time.perf_counter()
    params = load_params()
    m = {name: read_json(detail_path(metrics_dir / f"{name}.json")) for name in SAVED}
    m["benchmark"] = read_json(metrics_dir / "benchmark.json")  # the frozen benchmark stage's
    m["example"] = read_json(metrics_dir / "evaluate/example.json")
    m["study_meta"] = read_json(metrics_dir / "study/meta.json")
    m["diagnosis"] = read_json(metrics_dir / "study/diagnosis.json")
    m["search"] = read_json(metrics_dir / "search.json")  # the frozen search stage's
    claims = all_claims(params, m, read_losses(metrics_dir / "train", params.train.seeds))
    draw_figures(params, m, REPORTS / "figures", metrics_dir)
    plot_seed_distributions(claims, REPORTS / "figures" / "seed_distributions.png")
    files.write_text(REPORTS / "claims.csv", claims_csv(claims))
    study = study_section.section(
        m["study"],
        m["study_meta"],
        (metrics_dir / "study/diagnosis.md").read_text(),
        m["diagnosis"],
        m["search"],
    )
    readme = render_readme(
        seeds=params.train.seeds,
        claims=claims,
        findings=all_findings(params, m, claims),
        notes=read_json("metrics/probe/notes.json"),
        study=study,
        environment=environment_lines(read_json(metrics_dir / "numerics.json")),
    )
    files.write_text(REPORTS / "README.md", readme)
    counts = {f"claims_{s}": sum(c.status == s for c in claims) for s in ("pass", "fail", "note")}
    files.write_json(metrics_dir / "report.json", {**counts, "claims_total": len(claims)})
    runlog.record_run("report", time.perf_counter() - start)
    failed = [c.id for c in claims if c.status == "fail"]
    print(
        f"report: {sum(c.status == 'pass' for c in claims)} of {len(claims)} claims pass; "
        f"fail: {', '.join(failed) or 'none'}; figures in {REPORTS / 'figures'}"
    )


if __name__ == "__main__":
    main()

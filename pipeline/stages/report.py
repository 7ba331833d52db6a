"""Stage `report`: figures, the claims table, reports/README.md and reports/APPENDIX.md with their
Spanish editions README.es.md and APPENDIX.es.md, from saved metrics only.

    python -m pipeline.stages.report --metrics metrics --reports reports

A thin entry point that reads inputs and writes outputs; the work is in pipeline/report/.
"""

import time

from pipeline.core.params import load_params
from pipeline.infra import files, runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import detail_path
from pipeline.infra.results import read_table
from pipeline.report.claims import claims_csv, counts, evaluate, load_claims
from pipeline.report.context import report_context
from pipeline.report.draw import draw_figures
from pipeline.report.environment import environment
from pipeline.report.inputs import loss_table, read_json, read_losses
from pipeline.report.quantities import quantities
from pipeline.report.readme import render

SAVED = ("architecture", "probe")  # metrics/<name>/summary.json
TABLES = (
    "architecture/by_heads",
    "evaluate/accuracy",
    "evaluate/by_seed",
    "evaluate/reference",
    "norm/by_seed",
    "data/by_length",
    "probe/layernorm_cell",
    "probe/paths",
    "probe/residual_table",
    "study/per_seed",
    "study/bar",
)


# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("data", "model", "train", "norm.count", "probe.depths", "study")


def read_metrics(saved, seeds):
    """Every stage's detail, and the other files the report reads, by name: the tidy tables under
    m["tables"] (the training logs as train/losses), the rest by stage."""
    m = {name: read_json(detail_path(saved / f"{name}.json")) for name in SAVED}
    m["losses"] = read_losses(saved / "train", seeds)
    m["tables"] = {name: read_table(saved / f"{name}.csv") for name in TABLES} | {
        "train/losses": loss_table(m["losses"], seeds)
    }
    m["train"], m["evaluate"] = (
        read_json(saved / f"{name}.json") for name in ("train", "evaluate")
    )  # headlines
    m["benchmark"] = read_json(saved / "benchmark.json")  # the frozen benchmark stage's
    m["search"] = read_json(saved / "search.json")  # the frozen search stage's
    m["example"] = read_json(saved / "evaluate/example.json")
    m["study_meta"] = read_json(saved / "study/meta.json")
    m["diagnosis"] = read_json(saved / "study/diagnosis.json")
    m["numerics"] = read_json(saved / "numerics.json")
    return m


@stage_entry
def main():
    args = stage_paths(__doc__, "metrics", "reports")
    start = time.perf_counter()
    params = load_params(reads=READS)
    m = read_metrics(args.metrics, params.train.seeds)
    claims = evaluate(load_claims(), quantities(params, m, m["benchmark"]), params)
    draw_figures(params, m, claims, m["losses"], args.reports / "figures", args.metrics)
    files.write_text(args.reports / "claims.csv", claims_csv(claims))
    context = report_context(params, m, claims, environment(m["numerics"]))
    pages = render(context)
    for page, text in pages.items():
        files.write_text(args.reports / page, text)
    tally = counts(claims)
    shown = ("falsifiable", "measured_pass", "measured_undecided", "fail", "lesson_errors")  # the headline's
    files.write_json(args.metrics / "report.json", {f"claims_{k}": tally[k] for k in shown})
    runlog.record_run("report", time.perf_counter() - start)
    failed = [c.id for c in claims if c.status == "fail"]
    print(
        f"report: {tally['measured_pass']} of {tally['falsifiable']} falsifiable claims hold, "
        f"{tally['measured_undecided']} cannot discriminate; fail: {', '.join(failed) or 'none'}; "
        + ", ".join(str(args.reports / page) for page in pages)
    )


if __name__ == "__main__":
    main()

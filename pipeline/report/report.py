"""The report stage's work: every lesson stage's saved results read back, the claims judged, every
figure drawn, and the pages written: reports/README.md, reports/README.es.md, reports/APPENDIX.md,
reports/APPENDIX.es.md, reports/claims.csv and reports/figures/*.png, from saved metrics only. It
reads nothing of the length study, whose pages are its own (pipeline/report/study/)."""

import platform
from importlib.metadata import version  # numpy and dvc are requirements: always installed
from pathlib import Path

from pipeline.infra import files
from pipeline.infra.outputs import read_table, stage_outputs
from pipeline.infra.pool import run_jobs
from pipeline.report import figures
from pipeline.report.claims import claims_csv, counts, evaluate, load_claims
from pipeline.report.context import report_context
from pipeline.report.inputs import ReportParams, loss_table, read_json, read_losses
from pipeline.report.pages import render
from pipeline.report.quantities import quantities
from pipeline.report.style import Words

SUMMARIES = ("architecture", "probe")  # metrics/<name>/summary.json
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
    "probe/jacobian_sweep",
)


def read_metrics(saved, seeds):
    """Every stage's detail, and the other files the report reads, by name: the tidy tables under
    m["tables"] (the training logs as train/losses), the rest by stage."""
    m = {name: read_json(saved / name / "summary.json") for name in SUMMARIES}
    m["losses"] = read_losses(saved / "train", seeds)
    m["tables"] = {name: read_table(saved / f"{name}.csv") for name in TABLES} | {
        "train/losses": loss_table(m["losses"], seeds)
    }
    m["data"], m["train"], m["evaluate"] = (
        read_json(saved / f"{name}.json") for name in ("data", "train", "evaluate")
    )  # headlines
    m["benchmark"] = read_json(saved / "benchmark.json")  # the frozen benchmark stage's
    m["example"] = read_json(saved / "evaluate/example.json")
    m["numerics"] = read_json(saved / "numerics.json")
    m["device"] = read_json(saved / "train/device.json")["device"]
    return m


def write_report(params: ReportParams, metrics_dir, reports_dir):
    """Judge every claim, draw every figure (written aside, then moved into place), write every page
    and the headline metrics/report.json; returns (the judged claims, their tally, the pages)."""
    metrics_dir, reports_dir = Path(metrics_dir), Path(reports_dir)
    m = read_metrics(metrics_dir, params.train.seeds)
    claims = evaluate(load_claims(), quantities(params, m, m["benchmark"]), params)
    tally = counts(claims)
    shown = ("falsifiable", "measured_pass", "measured_undecided", "fail", "lesson_errors")  # the headline's
    with stage_outputs(metrics_dir / "report.json", reports_dir / "figures", detail=False) as out:
        draw_figures(params, m, claims, m["losses"], out.folders[0], metrics_dir)
        files.write_text(reports_dir / "claims.csv", claims_csv(claims))
        pages = render(report_context(params, m, claims, environment(m["numerics"], m["device"])))
        for page, text in pages.items():
            files.write_text(reports_dir / page, text)
        out.headline = {f"claims_{k}": tally[k] for k in shown}
    return claims, tally, pages


def environment(numerics, device):
    """Versions, the device the lesson's models trained on, the numerics of the results (the numerics
    stage's record, not the machine rendering the report); nothing of the moment (times, dates, host),
    which would change bytes (each language's catalogue, words/, says which machines give each mode's
    bytes)."""
    mode = numerics["in_use"]
    used = numerics["modes"][mode]
    return {
        "versions": f"python {'.'.join(platform.python_version_tuple()[:2])}, torch {numerics['torch']}, "
        f"numpy {version('numpy')}, dvc {version('dvc')}",
        "mode": mode,
        "settings": ", ".join(f"{k}={v}" for k, v in used["settings"].items()),
        "capability": used["capability"],
        "fingerprint": used["fingerprint"],
        "cpu": numerics["cpu"],
        "device": device,
    }


def lesson_values(prefix, suffix):
    """{number: the lesson's value} of the claims `<prefix><number><suffix>` (claims.yaml)."""
    found = [e for e in load_claims() if e["id"].startswith(prefix) and e["id"].endswith(suffix)]
    return {int(e["id"][len(prefix) : len(e["id"]) - len(suffix)]): float(e["expected"]) for e in found}


EDITIONS = ("en", "es")  # every figure is drawn once per edition, into figures/<edition>/


def draw_figures(params: ReportParams, m, claims, losses, out, metrics_dir):
    """Draw every figure of every edition into the directory `out` (`out/en`, `out/es`); `m`: each
    stage's metrics by stage name, read from `metrics_dir`; `claims`: the judged claims; `losses`:
    every seed's loss, step by step. The editions are drawn side by side, one process each: drawing
    is most of the stage's time, and an edition's figures depend on nothing the other draws."""
    lesson = {"losses": lesson_values("l10-loss-", ""), "table": lesson_values("l10-length-", "-seq")}
    jobs = [
        (params, m, claims, losses, lesson, Path(out) / lang, Path(metrics_dir), Words(lang))
        for lang in EDITIONS
    ]
    run_jobs(draw_edition, jobs)


def draw_edition(params: ReportParams, m, claims, losses, lesson, out, saved, w):
    """Every figure in the words of one edition (`w`); `lesson`: the lesson's printed losses and its
    length table."""
    probe, evaluate = saved / "probe", saved / "evaluate"
    figures.plot_loss(losses, m["train"]["loss_floor"], lesson["losses"], out / "loss.png", w)
    length_table = evaluate / "length_table.csv"
    figures.plot_length_accuracy(
        length_table, params.data.train_lengths, lesson["table"], out / "length_accuracy.png", w
    )
    figures.plot_seed_distributions(claims, out / "seed_distributions.png", w)
    figures.plot_cross_attention(evaluate / "example.json", out / "cross_attention.png", w)
    figures.plot_residual(probe / "residual_table.csv", out / "residual.png", w)
    figures.plot_gradient_depth(probe / "grad_norms.csv", out / "gradient_depth.png", w)
    figures.plot_jacobian_sweep(probe / "jacobian_sweep.csv", out / "jacobian_sweep.png", w)
    figures.plot_layernorm(probe / "layernorm_cell.csv", m["probe"], out / "layernorm.png", w)
    figures.plot_benchmark(saved / "benchmark.json", out / "benchmark.png", w)

"""Every report figure, drawn from the saved metrics into reports/figures/."""

from pathlib import Path

from pipeline.report import figures, study_figures
from pipeline.report.benchmark_figure import plot_benchmark
from pipeline.report.claims import load_claims
from pipeline.report.ladder_figure import plot_ladder
from pipeline.report.seed_figure import plot_seed_distributions
from pipeline.study.confirmation import confirmation


def lesson_values(prefix, suffix):
    """{number: the lesson's value} of the claims `<prefix><number><suffix>` (claims.yaml)."""
    found = [e for e in load_claims() if e["id"].startswith(prefix) and e["id"].endswith(suffix)]
    return {int(e["id"][len(prefix) : len(e["id"]) - len(suffix)]): float(e["expected"]) for e in found}


def draw_figures(params, m, claims, losses, out, metrics_dir):
    """Draw every figure into the directory `out`; `m`: each stage's metrics by stage name, read from
    `metrics_dir`; `claims`: the judged claims; `losses`: every seed's loss, step by step."""
    out, saved = Path(out), Path(metrics_dir)
    study, probe, evaluate = saved / "study", saved / "probe", saved / "evaluate"
    figures.plot_loss(losses, m["train"]["loss_floor"], lesson_values("l10-loss-", ""), out / "loss.png")
    lesson_table = lesson_values("l10-length-", "-seq")
    figures.plot_length_accuracy(
        evaluate / "length_table.csv", params.data.train_lengths, lesson_table, out / "length_accuracy.png"
    )
    plot_seed_distributions(claims, out / "seed_distributions.png")
    figures.plot_cross_attention(evaluate / "example.json", out / "cross_attention.png")
    figures.plot_residual(probe / "residual_table.csv", out / "residual.png")
    figures.plot_gradient_depth(probe / "grad_norms.csv", out / "gradient_depth.png")
    figures.plot_jacobian_sweep(probe / "jacobian_sweep.csv", out / "jacobian_sweep.png")
    figures.plot_layernorm(probe / "layernorm_cell.csv", m["probe"], out / "layernorm.png")
    plot_benchmark(saved / "benchmark.json", out / "benchmark.png")
    table, meta, diagnosis = study / "length_accuracy.csv", study / "meta.json", study / "diagnosis.json"
    study_figures.plot_study_accuracy(table, meta, out / "study_length.png")
    study_figures.plot_study_heatmap(table, meta, out / "study_heatmap.png")
    study_figures.plot_study_diagnosis(diagnosis, out / "study_diagnosis.png")
    study_figures.plot_study_attention(diagnosis, out / "study_attention.png")
    study_figures.plot_study_counting(diagnosis, out / "study_counting.png")
    chosen, bar = confirmation(params, m["search"]["rows"]), m["study_meta"]["bar"]
    confirm_seeds = params.study.search_seeds.confirm
    plot_ladder(
        study / "per_seed.csv", m["study_meta"], m["search"]["rows"], confirm_seeds, bar, out / "ladder.png"
    )
    if chosen["variant"]:  # the search's choice, judged on the held-out seeds
        seeds_figure = out / "study_seeds.png"
        study_figures.plot_study_seeds(
            study / "per_seed.csv", chosen["variant"], chosen["row"], bar, seeds_figure
        )

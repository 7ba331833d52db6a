"""Every report figure, drawn from the saved metrics into reports/figures/."""

from pathlib import Path

from pipeline.report import figures, study_figures
from pipeline.report.benchmark_figure import plot_benchmark


def draw_figures(params, m, out, metrics_dir):
    """Draw every figure into the directory `out`; `m`: each stage's metrics by stage name, read from
    `metrics_dir`."""
    out, saved = Path(out), Path(metrics_dir)
    study, probe = saved / "study", saved / "probe"
    figures.plot_loss(saved / "train", m["train"], out / "loss.png")
    figures.plot_length_accuracy(
        saved / "evaluate/length_table.csv", params.data.train_lengths, out / "length_accuracy.png"
    )
    figures.plot_cross_attention(saved / "evaluate/example.json", out / "cross_attention.png")
    figures.plot_residual(probe / "residual_table.csv", out / "residual.png")
    figures.plot_gradient_depth(probe / "grad_norms.csv", out / "gradient_depth.png")
    figures.plot_jacobian_sweep(probe / "jacobian_sweep.csv", out / "jacobian_sweep.png")
    figures.plot_layernorm(probe / "layernorm_cell.csv", m["probe"], out / "layernorm.png")
    plot_benchmark(saved / "benchmark.json", out / "benchmark.png")
    study_figures.plot_study_accuracy(
        study / "length_accuracy.csv", study / "meta.json", out / "study_length.png"
    )
    study_figures.plot_study_heatmap(
        study / "length_accuracy.csv", study / "meta.json", out / "study_heatmap.png"
    )
    study_figures.plot_study_diagnosis(study / "diagnosis.json", out / "study_diagnosis.png")
    study_figures.plot_study_attention(study / "diagnosis.json", out / "study_attention.png")

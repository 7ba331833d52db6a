"""Stage `report`: figures, the claims table and reports/README.md, from saved metrics only."""

import csv
import io
import json
import platform
from pathlib import Path

from pipeline.infra import numerics
from pipeline.infra.errors import DataError
from pipeline.report import claims_table, figures, study_figures, study_section
from pipeline.report.benchmark_figure import plot_benchmark
from pipeline.report.claims import COLUMNS, Claim

REPORTS = Path("reports")
FIGURES = REPORTS / "figures"


def read_json(path):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `dvc repro` to produce it") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{path} is not valid JSON (line {err.lineno}): regenerate it") from None


def read_losses(log_dir, seeds):
    losses = []
    for seed in seeds:
        _, values = figures.read_tsv_column(Path(log_dir) / f"seed_{seed}/plots/metrics/loss.tsv", "loss")
        losses.append(values)
    return losses


def build_claims(params, m, losses) -> list[Claim]:
    seeds = params.train.seeds
    return [
        *claims_table.architecture_claims(m["architecture"]),
        *claims_table.training_claims(m["train"], seeds, losses, params.train.label_smoothing),
        *claims_table.evaluation_claims(
            m["evaluate"], seeds, params.data.test_size, max(params.data.train_lengths), m["example"]
        ),
        *claims_table.data_claims(m["data"]),
        *claims_table.probe_claims(m["probe"]),
    ]


def claims_csv(claims):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([getattr(c, k) for k in COLUMNS] for c in claims)
    return buffer.getvalue()


FIGURE_LIST = [
    ("loss.png", 'The loss of every seed against its floor (lesson 10, "La pérdida y su piso").'),
    (
        "length_accuracy.png",
        "Exact-sequence accuracy by input length, seed range, lesson values as diamonds "
        '("Secuencias perfectas según el largo").',
    ),
    ("cross_attention.png", "Cross-attention of every head while sorting the lesson's example."),
    (
        "residual.png",
        "Lesson 6's residual cell: with the sum the derivative stays near 1; without it, it vanishes.",
    ),
    (
        "gradient_depth.png",
        "The loss gradient at every sublayer's input of the real model, post- and pre-norm.",
    ),
    ("jacobian_sweep.png", "Input-output Jacobian norms at initialisation from 1 to 12 layers a side."),
    ("layernorm.png", "Lesson 6's LayerNorm cell: per-row statistics, and per row against per column."),
    (
        "benchmark.png",
        "Speed: our training step against nn.Transformer, cached decoding, throughput, seeds "
        "side by side (python -m pipeline.tools.benchmark; metrics/benchmark.json).",
    ),
    (
        "study_length.png",
        "Length study: exact sequences by input length for each variant of the study, seed range as a band.",
    ),
    (
        "study_heatmap.png",
        "Length study: every variant at every tested length, mean over seeds; trained lengths outlined.",
    ),
    (
        "study_diagnosis.png",
        "Length study: why the model trained on length 10 fails elsewhere: the pace of its outputs.",
    ),
    (
        "study_attention.png",
        "Length study: where the cross-attention looks, inputs ordered by their rank (models/ and the three "
        "most accurate variants).",
    ),
]


def findings(params, m):
    """A few sentences a reader wants first, with this run's numbers."""
    e, t = m["evaluate"], m["train"]
    trained = ", ".join(map(str, params.data.train_lengths))
    table = ", ".join(
        f"{n}: {100 * e[f'length_{n}_seq_acc']:.1f} %"
        for n in params.data.test_lengths
        if f"length_{n}_seq_acc" in e
    )
    return [
        f"- Trained on length {trained}, greedy decoding sorts {100 * e['greedy_seq_acc']:.1f} % "
        f"± {100 * e['greedy_seq_acc_std']:.1f} of held-out sequences exactly "
        f"({100 * e['greedy_digit_acc']:.1f} % of digits); teacher forcing gives "
        f"{100 * e['tf_seq_acc']:.1f} %"
        + (
            f", the paper's beam search (beam 4, α 0.6) {100 * e['beam_seq_acc']:.1f} %."
            if "beam_seq_acc" in e
            else "."
        ),
        f"- The final loss, {t['loss_final']:.3f} ± {t['loss_final_std']:.3f}, sits "
        f"{t['loss_gap_to_floor']:.3f} above the floor {t['loss_floor']:.3f} that label smoothing "
        "sets (the entropy of the smoothed target).",
        f"- Away from the trained length the model fails, as the lesson found (exact sequences by "
        f"length: {table}); the spread across seeds is large at the lengths next to the trained one.",
        *study_section.headline(m["study"], params.study.variants),
    ]


def render_readme(params, claims, notes=None, summary=(), sections=()):
    counts = {s: sum(c.status == s for c in claims) for s in ("pass", "fail", "note")}
    lines = [
        "# Replication report",
        "",
        f"**{counts['pass']} of {len(claims)} claims pass, {counts['fail']} fail, "
        f"{counts['note']} are noted** (training seeds: {', '.join(map(str, params.train.seeds))}).",
        "",
        "Generated by `dvc repro` (stage `report`) from the saved metrics; do not edit by hand.",
        "",
        *summary,
        "",
        "## Claims",
        "",
        "Tolerance rules, fixed before looking at results: **exact** for counts, shapes and the lessons' "
        "fixed-seed NumPy cells (equal at the precision the lesson prints); **seed range** for trained "
        "results: the lesson's value must lie within the range our seeds span, widened by a margin: "
        "twice the binomial standard error of the lesson's own measurement for an accuracy "
        "(2·sqrt(p(1−p)/n), at least 0.1 point), twice the batch-to-batch standard deviation of the "
        "loss over the preceding 100 steps for a one-batch loss; **within 5 %** for a prose "
        'approximation ("about 18.9 million"); **note** for a deliberate, explained difference.',
        "",
        "| id | source | claim | expected | reproduced | tolerance | status |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in claims:
        status = {"pass": "pass", "fail": "**FAIL**", "note": "note"}[c.status]
        cells = [c.id, c.source, c.claim, c.expected, c.reproduced, c.tolerance, status]
        lines.append("| " + " | ".join(str(x).replace("|", "/") for x in cells) + " |")
    if notes:
        lines += ["", "## Notes from the probes", ""]
        lines += [f"- **{key.replace('_', ' ')}**: {text}" for key, text in notes.items()]
    lines += ["", *sections]
    lines += ["", "## Figures", ""]
    for name, caption in FIGURE_LIST:
        if (FIGURES / name).exists():
            lines += [f"![{name}](figures/{name})", "", f"*{caption}*", ""]
    lines += [*environment_lines(), ""]
    lines += [
        "## Regenerate",
        "",
        "```",
        "make repro          # set up .venv, then dvc repro: every stage whose inputs changed",
        "dvc repro -f        # every stage, from scratch",
        "dvc exp run -S train.steps=600   # one parameter varied, as an experiment",
        "```",
        "",
    ]
    return "\n".join(lines)


def environment_lines():
    """What determines the bytes of every result: versions, the CPU code paths, the thread policy.
    Nothing of the machine or the moment (wall times, dates, host, commit): those change the bytes
    of this file without changing a result; each stage's wall time is in runs/<stage>.json."""
    pinned = numerics.describe()
    capability = pinned["cpu_capability"]
    return [
        "## Environment",
        "",
        f"- python {'.'.join(platform.python_version_tuple()[:2])}, torch {_version('torch')}, "
        f"numpy {_version('numpy')}, dvc {_version('dvc')}",
        f"- CPU kernels: {capability} (ATen, MKL and oneDNN capped at AVX2 on every x86-64 CPU that has "
        "it, so results are the same bytes on any of them; see pipeline/infra/numerics.py)",
        "- threads: each training seed and the evaluation run on one thread with deterministic "
        "algorithms; seeds train side by side in separate processes",
        "- wall time of each stage's last run on this machine: `runs/<stage>.json` (not tracked)",
    ]


def _version(package):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


def draw_figures(params, m):
    figures.plot_loss("metrics/train", m["train"], FIGURES / "loss.png")
    figures.plot_length_accuracy(
        "metrics/evaluate/length_table.csv", params.data.train_lengths, FIGURES / "length_accuracy.png"
    )
    figures.plot_cross_attention("metrics/evaluate/example.json", FIGURES / "cross_attention.png")
    figures.plot_residual("metrics/probe/residual_table.csv", FIGURES / "residual.png")
    figures.plot_gradient_depth("metrics/probe/grad_norms.csv", FIGURES / "gradient_depth.png")
    figures.plot_jacobian_sweep("metrics/probe/jacobian_sweep.csv", FIGURES / "jacobian_sweep.png")
    figures.plot_layernorm("metrics/probe/layernorm_cell.csv", m["probe"], FIGURES / "layernorm.png")
    plot_benchmark("metrics/benchmark.json", FIGURES / "benchmark.png")  # saved by the benchmark script
    study = Path("metrics/study")
    study_figures.plot_study_accuracy(
        study / "length_accuracy.csv", study / "meta.json", FIGURES / "study_length.png"
    )
    study_figures.plot_study_heatmap(
        study / "length_accuracy.csv", study / "meta.json", FIGURES / "study_heatmap.png"
    )
    study_figures.plot_study_diagnosis(study / "diagnosis.json", FIGURES / "study_diagnosis.png")
    study_figures.plot_study_attention(study / "diagnosis.json", FIGURES / "study_attention.png")

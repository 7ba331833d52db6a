"""Every report figure reads cleanly in both editions: no two texts overlap, no text falls off the
canvas, no legend stands over a data point, and no more than a third of the canvas is blank
(pipeline/infra/figure_layout.py's `layout_faults`, which `save` runs on every figure it writes); and each
of those faults, drawn on purpose, is caught."""

import json
from pathlib import Path

import pytest

from pipeline.infra.figure_layout import CrowdedFigure, layout_faults
from pipeline.report.claims import evaluate, load_claims
from pipeline.report.quantities import quantities
from pipeline.report.report import EDITIONS, draw_edition, lesson_values, read_metrics
from pipeline.report.study import figures as study_figures
from pipeline.report.study import report as study_report
from pipeline.report.style import Words, plt, save, shared_dashes
from pipeline.stages.report import report_params
from pipeline.study.load import load_params

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("lang", EDITIONS)
def test_every_figure_of_an_edition_reads_cleanly(lang, tmp_path):
    """Drawn from the committed results: `save` refuses a figure with a fault, naming it."""
    params = report_params(load_params(ROOT / "params.yaml"))
    m = read_metrics(ROOT / "metrics", params.train.seeds)
    claims = evaluate(load_claims(), quantities(params, m, m["benchmark"]), params)
    lesson = {"losses": lesson_values("l10-loss-", ""), "table": lesson_values("l10-length-", "-seq")}
    draw_edition(params, m, claims, m["losses"], lesson, tmp_path, ROOT / "metrics", Words(lang))
    drawn = {p.name for p in tmp_path.glob("*.png")}
    assert drawn == {p.name for p in (ROOT / "reports/figures" / lang).glob("*.png")}


@pytest.mark.parametrize("lang", EDITIONS)
def test_every_figure_of_the_studys_pages_reads_cleanly(lang, tmp_path):
    """The length study's figures, drawn from the committed results as its pages draw them."""
    whole = load_params(ROOT / "params.yaml")
    params = study_report.StudyPagesParams(data=whole.data, train=whole.train, study=whole.study)
    m = study_report.read_study_metrics(ROOT / "metrics")
    study_report.draw_edition(params, m, tmp_path, ROOT / "metrics", Words(lang))
    drawn = {p.name for p in tmp_path.glob("*.png")}
    assert drawn == {p.name for p in (ROOT / "reports/study/figures" / lang).glob("*.png")}


def a_panel(size=(6, 4)):
    fig, ax = plt.subplots(figsize=size)
    ax.plot(range(10), range(10), "o-", label="a line")
    ax.set(title="a title", xlabel="x", ylabel="y")
    return fig, ax


def test_a_clean_figure_has_no_fault():
    fig, _ = a_panel()
    assert layout_faults(fig) == []
    plt.close(fig)


def test_a_title_over_a_panel_title_is_caught_and_refused(tmp_path):
    fig, _ = a_panel()
    fig.suptitle("a figure title on top of the panel's", va="center", y=0.9)  # the panel's title's height
    faults = layout_faults(fig)
    assert any("overlaps panel 0 title 'a title'" in f for f in faults), faults
    with pytest.raises(CrowdedFigure, match=r"^figure bad\.png \(en\): .*overlaps") as refused:
        save(fig, tmp_path / "bad.png")
    assert "\n" not in str(refused.value) and not (tmp_path / "bad.png").exists()


def test_two_legends_on_top_of_each_other_are_caught():
    fig, ax = a_panel()
    first = ax.legend(loc="upper left")
    ax.add_artist(first)
    ax.legend(["a second legend"], loc="upper left", bbox_to_anchor=(0.05, 0.98))
    assert any("legend" in f and "overlaps legend" in f for f in layout_faults(fig))
    plt.close(fig)


def test_a_text_off_the_canvas_is_caught():
    fig, _ = a_panel()
    lost = fig.text(1.4, 0.5, "off the edge")
    lost.set_in_layout(False)  # the saved canvas is trimmed to what takes part in the layout
    assert any("'off the edge' runs off the canvas" in f for f in layout_faults(fig))
    plt.close(fig)


def test_a_legend_over_a_data_point_is_caught():
    fig, ax = a_panel()
    ax.legend(loc="upper left")  # the line rises to the right: its first points are lower left
    assert not any("covers" in f for f in layout_faults(fig))
    ax.legend(loc="upper right")  # over the last points
    assert any("legend 0 covers" in f and "of panel 0" in f for f in layout_faults(fig))
    plt.close(fig)


def test_a_canvas_mostly_blank_is_caught():
    fig = plt.figure(figsize=(8, 6))
    ax = fig.add_axes((0.05, 0.05, 0.3, 0.3))  # a small panel in one corner
    ax.plot([0, 1], [0, 1])
    fig.text(0.95, 0.95, "a note far away", ha="right")  # stretches the saved canvas
    assert any("of the canvas is blank" in f for f in layout_faults(fig))
    plt.close(fig)


def test_tick_labels_of_one_axis_are_not_held_against_each_other_but_against_the_rest():
    fig, ax = a_panel((3, 2))
    ax.set_xticks(range(10), [f"label {i}" for i in range(10)])  # crowded: side by side by design
    assert not any(f.count("x tick label") == 2 for f in layout_faults(fig))
    ax.set_xlabel("x", labelpad=-12)  # the axis label pulled onto its tick labels
    assert any("x label 'x' overlaps" in f and "tick label" in f for f in layout_faults(fig))
    plt.close(fig)


@pytest.mark.parametrize("kept", [["8"], ["8", "20"]])
def test_the_diagnosis_figures_read_cleanly_at_any_number_of_diagnosis_lengths(kept, tmp_path):
    """study.diagnosis_lengths may name one length: the committed diagnosis cut to `kept` still draws
    every figure that reads it, in each edition, without a fault (one length lays the models side by
    side rather than in one narrow column)."""
    diagnosis = json.loads((ROOT / "metrics/study/diagnosis.json").read_text())
    diagnosis["lengths"] = {n: d for n, d in diagnosis["lengths"].items() if n in kept}
    diagnosis["variants"] = {
        v: {n: d for n, d in by_length.items() if n in kept} for v, by_length in diagnosis["variants"].items()
    }
    cut = tmp_path / "diagnosis.json"
    cut.write_text(json.dumps(diagnosis))
    for lang in EDITIONS:
        for plot in (study_figures.plot_study_attention, study_figures.plot_study_diagnosis):
            plot(cut, tmp_path / f"{plot.__name__}_{lang}.png", Words(lang))
    assert len(list(tmp_path.glob("*.png"))) == 2 * len(EDITIONS)


def test_lines_drawn_over_one_another_take_turns_in_their_dashes():
    """study_length.png: models at 100 % at every length share one line; each shows in the others' gaps."""
    same, other = ((1, 2), (100.0, 100.0)), ((1, 2), (100.0, 90.0))
    dashes = shared_dashes({"a": same, "b": other, "c": same, "d": same})
    assert set(dashes) == {"a", "c", "d"}  # "b" runs alone: its own style
    assert [dashes[n][0] for n in "acd"] == [0, 6, 12] and {dashes[n][1] for n in "acd"} == {(6, 12)}

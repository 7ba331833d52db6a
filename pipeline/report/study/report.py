"""The study_pages stage's work: the length study's saved results (and the lesson's it compares with)
read back, the lesson's statements the study judges, every figure of the study drawn, and its pages
written: reports/study/README.md, README.es.md, APPENDIX.md, APPENDIX.es.md, claims.csv and
figures/<edition>/*.png, from saved metrics only. The lesson's report reads none of it."""

from dataclasses import dataclass
from pathlib import Path

from pipeline.infra import files
from pipeline.infra.outputs import read_table, stage_outputs
from pipeline.infra.pool import run_jobs
from pipeline.params.sections import DataParams, TrainParams
from pipeline.report.claims import claims_csv, counts
from pipeline.report.inputs import read_json
from pipeline.report.pages import render
from pipeline.report.study import controls_figure, figures, loss_figure, verdict_figure
from pipeline.report.study.context import searched, study_pages_context
from pipeline.report.study.lesson_claims import judged_claims
from pipeline.report.study.readout_search import plot_readout_search, readout_search
from pipeline.report.style import Words
from pipeline.study.bar import confirmation
from pipeline.study.params import StudyParams

TEMPLATES = Path(__file__).with_name("templates")
PAGES = {"README.md": "en", "README.es.md": "es", "APPENDIX.md": "en", "APPENDIX.es.md": "es"}
EDITIONS = ("en", "es")  # every figure is drawn once per edition, into figures/<edition>/
TABLES = (
    "study/per_seed",
    "study/bar",
    "study/count_margin",
    "verdict/per_seed",
    "verdict/certificates",
    "data/by_length",
)  # the last the lesson's


@dataclass(frozen=True)
class StudyPagesParams:
    """What the study's pages read: the study's section, and the lesson's data and train sections
    where they compare with the lesson (its trained length, its seeds, its test sets)."""

    data: DataParams
    train: TrainParams
    study: StudyParams


def read_study_metrics(saved):
    """The study's results, and the lesson's table the habit claims read, by name."""
    return {
        "tables": {name: read_table(saved / f"{name}.csv") for name in TABLES},
        "search": read_json(saved / "search.json"),  # the frozen search stage's
        "study_meta": read_json(saved / "study/meta.json"),
        "diagnosis": read_json(saved / "study/diagnosis.json"),
        "count_margin": read_json(saved / "study/count_margin.json"),
        "verdict": read_json(saved / "verdict.json"),
    }


def write_study_pages(params: StudyPagesParams, metrics_dir, pages_dir, headline_path):
    """Judge the lesson's statements the study tests, draw every figure (written aside, then moved
    into place with the pages), write every page; returns (the judged claims, the pages)."""
    metrics_dir, pages_dir = Path(metrics_dir), Path(pages_dir)
    m = read_study_metrics(metrics_dir)
    claims, habit_claims = judged_claims(params, m["tables"], m["search"])
    tally = counts(claims)
    with stage_outputs(headline_path, pages_dir, detail=False) as out:
        (staged,) = out.folders
        draw_figures(params, m, staged / "figures", metrics_dir)
        files.write_text(staged / "claims.csv", claims_csv(claims))
        pages = render(study_pages_context(params, m, claims, habit_claims), TEMPLATES, PAGES)
        for page, text in pages.items():
            files.write_text(staged / page, text)
        out.headline = {f"claims_{k}": tally[k] for k in ("falsifiable", "measured_pass", "fail")}
    return claims, pages


def draw_figures(params: StudyPagesParams, m, out, metrics_dir):
    """Every figure of every edition into `out/<edition>`, the editions side by side (one process each)."""
    jobs = [(params, m, Path(out) / lang, Path(metrics_dir), Words(lang)) for lang in EDITIONS]
    run_jobs(draw_edition, jobs)


def draw_edition(params: StudyPagesParams, m, out, saved, w):
    """Every figure of the study in the words of one edition (`w`)."""
    study = saved / "study"
    table, meta, diagnosis = study / "length_accuracy.csv", study / "meta.json", study / "diagnosis.json"
    figures.plot_study_accuracy(table, meta, out / "study_length.png", w)
    figures.plot_study_heatmap(table, meta, out / "study_heatmap.png", w)
    figures.plot_study_diagnosis(diagnosis, out / "study_diagnosis.png", w)
    figures.plot_study_attention(diagnosis, out / "study_attention.png", w)
    counting_at = str(max(params.study.diagnosis_lengths))  # the length its caption names
    figures.plot_study_counting(diagnosis, out / "study_counting.png", w, length=counting_at)
    figures.plot_count_margin(study / "count_margin.json", out / "study_count_margin.png", w)
    loss_figure.plot_loss_curves(study / "loss_curves.csv", out / "study_loss.png", w)
    rows = m["search"]["rows"]
    chosen, bar = confirmation(params.study, rows), m["study_meta"]["bar"]
    verdict = saved / "verdict/per_seed.csv"
    figures.plot_ladder(study / "per_seed.csv", m["study_meta"], rows, bar, out / "ladder.png", w, verdict)
    verdict_figure.plot_verdict(saved / "verdict.json", verdict, out / "verdict.png", w)
    longest_trained = max(params.study.data.train_lengths)
    controls_figure.plot_controls(saved / "verdict.json", out / "controls.png", longest_trained, w)
    aimed = readout_search([searched(r, params.study.bar) for r in rows], params.study)
    if aimed:  # the search's rows judged on the verdict's three kinds
        plot_readout_search(aimed, params.study.bar, out / "readout_search.png", w)
    if chosen["variant"]:  # the search's choice, judged on the held-out seeds
        path = out / "study_seeds.png"
        figures.plot_study_seeds(study / "per_seed.csv", chosen["variant"], chosen["row"], bar, path, w)

"""End to end: the real `dvc repro` of a tiny configuration in a temporary clone (the reproduced clone
of tests/tiny_clone.py, built once per run; each test works on a copy of it)."""

import json
import re
import select
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from tiny_clone import TINY, clone_env, run, write_params

from pipeline.numerics import pin as numerics

pytestmark = pytest.mark.slow  # a real `dvc repro` of a tiny configuration, each test in its own copy


def table(repo, name):
    return pd.read_csv(repo / f"metrics/{name}.csv")


def test_dvc_repro_writes_the_metrics(reproduced_clone):
    repo, output = reproduced_clone
    data, train = (json.loads((repo / f"metrics/{stage}.json").read_text()) for stage in ("data", "train"))
    assert round(train["loss_floor"], 3) == 0.514
    for stage in ("data", "train", "evaluate", "norm", "study"):  # their detail is tables (the train logs)
        assert not (repo / f"metrics/{stage}/summary.json").exists()
    accuracy, at_trained = table(repo, "evaluate/accuracy"), table(repo, "evaluate/by_seed")
    assert set(accuracy["seed"]) == {0, 1} == set(at_trained["seed"])
    assert {(d, n) for d, n in zip(accuracy["decoder"], accuracy["length"], strict=True)} >= {
        ("greedy", 3),
        ("greedy", 5),
        ("tf", 5),
    }
    assert accuracy[["seq_acc", "digit_acc"]].stack().between(0, 1).all()
    assert at_trained[["greedy_seq_acc", "tf_seq_acc", "beam_seq_acc"]].stack().between(0, 1).all()
    assert set(table(repo, "norm/by_seed")["norm"]) == {"post", "pre"}
    assert data["test_overlap_total"] == 0 and table(repo, "data/by_length")["length"].tolist() == [3, 5]
    per_seed, bar = table(repo, "study/per_seed"), table(repo, "study/bar").set_index("variant")
    for variant, seed in (("pipeline", 1), ("bos_mixed", 201)):  # train.seeds, the study's held-out
        rows = per_seed[
            (per_seed["variant"] == variant) & (per_seed["seed"] == seed) & (per_seed["length"] == 8)
        ]
        assert len(rows) == 1 and 0.0 <= rows["seq_acc"].item() <= 1.0
        assert 0.0 <= bar.loc[variant, "bar_min_seq_acc"] <= 1.0 and bar.loc[variant, "meets_bar"] in (
            True,
            False,
        )
    diagnosis = json.loads((repo / "metrics/study/diagnosis.json").read_text())
    assert {"bos_mixed", "handset"} <= set(diagnosis["variants"]) and "handset" in diagnosis["gates"]
    assert not (repo / "metrics/study/diagnosis.md").exists()  # the report words it, from the numbers
    assert (repo / "models/seed_0.pt").exists() and (repo / "models/seed_1.pt").exists()
    for variant in ("bos_mixed", "bos_mixed_sums"):  # each variant's checkpoints, committed
        assert sorted(p.name for p in (repo / "metrics/variants" / variant).iterdir()) == [
            "seed_200.pt",
            "seed_201.pt",
        ]
    assert (repo / "metrics/train/seed_1/plots/metrics/loss.tsv").read_text().count("\n") == 31
    assert "step    30  loss" in output  # the greppable progress line


def test_report_renders_the_claims_and_figures(reproduced_clone):
    repo, _ = reproduced_clone
    header = (repo / "reports/claims.csv").read_text().splitlines()[0]
    assert (
        header
        == "id,source,claim,expected,reproduced,tolerance,status,kind,seeds,words,undecided,lesson_error,"
        "test,test_why"
    )
    readme, appendix = ((repo / f"reports/{page}").read_text() for page in ("README.md", "APPENDIX.md"))
    opening = " ".join(readme.split("\n\n")[2].split())  # after the title and the other edition's link
    assert readme.startswith("# Replication report") and "claims that data could falsify hold" in opening
    assert (
        "| l10-params | structural | Transformer parameters | «parámetros: 59,744» | 59744 | 59744 |"
        in appendix
    )
    figures = sorted(p.name for p in (repo / "reports/figures/en").glob("*.png"))
    assert figures == sorted(p.name for p in (repo / "reports/figures/es").glob("*.png"))
    assert {"loss.png", "length_accuracy.png", "cross_attention.png", "residual.png"} <= set(figures)
    assert not [name for name in figures if name.startswith(("study_", "verdict", "ladder"))]
    assert (
        "runs/<stage>.json" in appendix and f"numerics: mode `{numerics.mode()}`" in appendix
    )  # the environment
    shown = set(re.findall(r"\]\(figures/([^)]+)\)", readme + appendix))
    assert shown == {f"en/{name}" for name in figures}  # every figure drawn is shown


def test_the_study_pipeline_renders_its_own_pages(reproduced_clone):
    """The study's pages: its figures in both editions, its variants in its appendix, the lesson's
    two statements it judges in its claims table."""
    repo, _ = reproduced_clone
    pages = repo / "reports/study"
    figures = sorted(p.name for p in (pages / "figures/en").glob("*.png"))
    assert figures == sorted(p.name for p in (pages / "figures/es").glob("*.png"))
    assert {"study_counting.png", "study_length.png", "verdict.png", "ladder.png"} <= set(figures)
    readme, appendix = ((pages / page).read_text() for page in ("README.md", "APPENDIX.md"))
    assert "| `bos_mixed` | no positions (BOS opens the source) | softmax | 1-5 | 30 | 2 |" in appendix
    claims = (pages / "claims.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in claims[1:]] == ["l10-shortest", "l10-not-position"]
    shown = set(re.findall(r"\]\(figures/([^)]+)\)", readme + appendix))
    assert shown == {f"en/{name}" for name in figures}


def stages_run(output):
    """The stages a `dvc repro` ran, in order."""
    return re.findall(r"Running stage '([^']+)'", output)


def test_second_repro_checks_the_numerics_and_has_nothing_else_to_do(reproduced_clone):
    repo, _ = reproduced_clone
    recorded = (repo / "metrics/numerics.json").read_bytes()
    again = run(["dvc", "repro", "-P"], repo)  # both pipelines
    assert stages_run(again.stdout) == ["numerics"]  # always: this machine's numerics, as recorded
    assert f"numerics: mode {numerics.mode()}" in again.stdout and ": as recorded" in again.stdout
    assert (repo / "metrics/numerics.json").read_bytes() == recorded
    status = run(["dvc", "status"], repo).stdout
    assert "always changed" in status and "modified" not in status and "changed deps" not in status


LESSON_STAGES = ("data", "architecture", "train", "evaluate", "norm", "probe")


def test_an_edit_to_the_study_alone_reruns_none_of_the_lessons_stages(reproduced_clone):
    """A study-only rule (pipeline/study/params.py), a study-only module (pipeline/study/) and the
    study's schemes (the signed count, its attention and positions) edited: `dvc status` names the
    study's stages and none of the lesson's."""
    repo, _ = reproduced_clone
    schemes = ("signed_count", "attention", "positions", "rezero")
    for module in (
        "pipeline/study/params.py",
        "pipeline/study/bar.py",
        *(f"pipeline/study/{m}.py" for m in schemes),
    ):
        with open(repo / module, "a") as edited:
            edited.write("\n# an edit\n")
    listed = re.findall(r"^(\S+):$", run(["dvc", "status"], repo).stdout, re.M)
    stale = {name.removeprefix("study/dvc.yaml:") for name in listed}
    assert "study" in stale and any(s.startswith("variant@") for s in stale), stale
    outside = [name for name in listed if not name.startswith("study/dvc.yaml:") and name != "numerics"]
    assert not outside, listed  # the study's pipeline, and the fingerprint, which always runs
    assert not stale & set(LESSON_STAGES), stale


def test_the_headline_metrics_fit_one_screen(reproduced_clone):
    """`dvc exp show` lists the headline files' keys only: a few dozen a person compares."""
    repo, _ = reproduced_clone
    shown = json.loads(run(["dvc", "metrics", "show", "--json"], repo).stdout)
    columns = {k for files in shown.values() for f in files["data"].values() for k in f["data"]}
    assert {
        "greedy_seq_acc",
        "loss_final",
        "best_variant",
        "claims_measured_pass",
        "length_5_seq_acc",
    } <= columns
    assert len(columns) <= 40, sorted(columns)
    study = json.loads((repo / "metrics/study.json").read_text())
    best = study["best_variant"]
    assert best in ("bos_mixed", "bos_mixed_sums")
    assert (
        study["best_bar_min_seq_acc"]
        == table(repo, "study/bar").set_index("variant").loc[best, "bar_min_seq_acc"]
    )


def commit_all(repo, message):
    run(["git", "add", "-A"], repo)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], repo)


def test_a_rerun_from_scratch_is_deterministic_and_leaves_the_tree_clean(reproduced_clone):
    """Every stage forced to run again (data, training, evaluation and the variants among them) gives
    the same dvc.lock, and the same bytes in every tracked file: no time, date, host or commit."""
    repo, _ = reproduced_clone  # its results committed
    locks = ("dvc.lock", "study/dvc.lock")
    before = [(repo / lock).read_text() for lock in locks]
    run(["dvc", "repro", "-f", "-P"], repo)
    assert [(repo / lock).read_text() for lock in locks] == before
    assert run(["git", "status", "--porcelain"], repo).stdout == ""


def test_a_team_remote_shares_results_without_retraining(reproduced_clone, tmp_path):
    """The workflow the README teaches teams: push to a shared remote, pull in a second clone."""
    repo, _ = reproduced_clone
    run(["dvc", "remote", "add", "-d", "team", str(tmp_path / "remote")], repo)
    commit_all(repo, "team remote")
    run(["dvc", "push", "--run-cache"], repo)
    second = tmp_path / "second"
    run(["git", "clone", "-q", str(repo), str(second)], tmp_path)
    run(["dvc", "pull", "--run-cache"], second)
    assert (second / "models/seed_1.pt").read_bytes() == (repo / "models/seed_1.pt").read_bytes()
    again = run(["dvc", "repro", "-P"], second)
    assert stages_run(again.stdout) == ["numerics"]  # nothing trained
    assert run(["git", "status", "--porcelain"], second).stdout == ""


def wait_until_every_seed_trains(proc, seeds, limit=60):
    """Until each seed's worker has logged a training step on stdout: every worker spawned and in its
    training loop, the moment an interrupt must leave nothing half written."""
    waiting, deadline = {f"seed {s} " for s in seeds}, time.monotonic() + limit
    while waiting and time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], deadline - time.monotonic())[0]:
            line = proc.stdout.readline().decode()
            assert line, f"training ended before every seed logged a step: {proc.stderr.read().decode()}"
            waiting = {w for w in waiting if not (line.startswith(w) and " step " in line)}
    assert not waiting, f"no training step logged in {limit} s by {sorted(waiting)}"


def test_interrupted_training_leaves_nothing_half_written(reproduced_clone):
    repo, _ = reproduced_clone
    write_params(repo, {**TINY, "train": {**TINY["train"], "steps": 100_000}})
    shutil.rmtree(repo / "models")
    (repo / "metrics/train.json").unlink()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.stages.train", "--data", "data/train.npz", "--models", "models"]
        + ["--metrics", "metrics/train.json"],
        cwd=repo,
        env=clone_env(repo),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_until_every_seed_trains(proc, seeds=TINY["train"]["seeds"])
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err.decode()
    assert not (repo / "models").exists() and not (repo / "metrics/train.json").exists()
    assert not list(repo.glob(".models*")) and not list((repo / "metrics").glob(".train*"))
    write_params(repo, TINY)
    run(["dvc", "repro"], repo)  # the next repro completes
    assert (repo / "metrics/train.json").exists() and (repo / "models/seed_0.pt").exists()

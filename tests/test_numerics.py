"""The pinned CPU numerics: a training run gives the same bytes whatever the outer environment asks
for, and would not without the pin, so the pin is what makes results portable across x86-64 CPUs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.numerics import fingerprint
from pipeline.numerics import pin as numerics
from pipeline.numerics import record as numerics_record
from pipeline.numerics.compare import compare, other_mode
from pipeline.tools import reproduced
from tests import test_train
from tests.conftest import RECORDED_BYTES, this_machines_operations

ROOT = Path(__file__).resolve().parents[1]

# A few training steps of a tiny model, in a fresh process; prints the SHA-256 of its weights and
# the capability ATen ran with.
TRAIN_AND_HASH = """
import hashlib, io
import pipeline  # first, as every entry point: it pins the numerics before torch loads
import torch
from pipeline.core.data import make_datasets
from tests.conftest import tiny_params, trained_alone

torch.set_num_threads(1)
params = tiny_params(train={"steps": 8})
model, _ = trained_alone(params.model, params.train, 0, make_datasets(params.data)[0])
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
print(hashlib.sha256(buffer.getvalue()).hexdigest(), torch.backends.cpu.get_cpu_capability())
"""

OUTER = {"unset": None, "default": "default", "avx2": "avx2", "avx512": "avx512"}


def run_training(outer_capability, unpinned=False):
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED and k != numerics.UNPINNED_ENV}
    if outer_capability is not None:
        env["ATEN_CPU_CAPABILITY"] = outer_capability
    if unpinned:
        env[numerics.UNPINNED_ENV] = "1"
    out = subprocess.run([sys.executable, "-c", TRAIN_AND_HASH], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    digest, capability = out.stdout.split()
    return digest, capability


needs_avx2 = pytest.mark.skipif(not numerics.has_avx2(), reason="the pin applies to x86-64 CPUs with AVX2")


@pytest.mark.slow
@pytest.mark.numerics
@needs_avx2
def test_pinned_training_gives_the_same_bytes_whatever_the_environment_asks():
    runs = {name: run_training(value) for name, value in OUTER.items()}
    assert {capability for _, capability in runs.values()} == {"AVX2"}
    assert len({digest for digest, _ in runs.values()}) == 1, runs


@pytest.mark.slow
@pytest.mark.numerics
@needs_avx2
def test_without_the_pin_the_kernels_and_the_bytes_differ():
    scalar, avx2 = run_training("default", unpinned=True), run_training("avx2", unpinned=True)
    assert (scalar[1], avx2[1]) == ("DEFAULT", "AVX2")
    assert scalar[0] != avx2[0]  # other kernels round differently: what the pin guards against


def test_the_pin_applies_only_where_avx2_exists():
    assert numerics.has_avx2({"avx2", "fma", "sse4_2"}, "x86_64")
    assert not numerics.has_avx2({"sse4_2", "avx"}, "x86_64")
    assert not numerics.has_avx2({"avx2", "fma"}, "aarch64")  # the flags of another architecture


def test_cpu_flags_of_an_unreadable_file_are_empty(tmp_path):
    assert numerics.cpu_flags(tmp_path / "missing") == set()
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n")
    assert numerics.cpu_flags(info) == {"fpu", "avx2", "fma"}


# --------------------------------------------------------------------- the numerics fingerprint


@pytest.mark.numerics
def test_the_fingerprint_names_the_operations_another_kernel_computes_otherwise():
    """ATen's generic kernels in place of its AVX2 ones: the entries of ATen's own operations
    change, MKL's matrix products do not, and the fingerprint says which."""
    if not numerics.has_avx2():
        pytest.skip("the pinned kernels are AVX2 ones")
    env = {**os.environ, numerics.UNPINNED_ENV: "1", "ATEN_CPU_CAPABILITY": "default"}
    code = (
        "import pipeline, json; from pipeline.numerics.fingerprint import operation_entries; "
        "print(json.dumps(operation_entries()))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    changed = numerics_record.differing(json.loads(out.stdout), fingerprint.operation_entries())
    assert "softmax_forward" in changed and "layernorm_backward" in changed
    assert "linear_proj_forward" not in changed  # MKL's, which the capability does not choose


def test_a_record_is_kept_where_the_mode_in_use_computes_as_it_records(monkeypatch):
    """The mode in use decides alone: a machine that computes it alike keeps the file (and the CPU
    that first made it) whatever the other mode computes here; one that computes it otherwise, or
    runs another mode, writes a new record of every mode, the mode in use measured once."""
    monkeypatch.setenv(numerics.MODE_ENV, "portable")
    torch_version = numerics_record.metadata.version("torch")
    here = {"portable": {"fingerprint": "p"}, "fast": {"fingerprint": "f-here"}}
    measured = []

    def measure_mode(mode):
        measured.append(mode)
        return here[mode]

    monkeypatch.setattr(numerics_record, "measure_mode", measure_mode)
    first = {"in_use": "portable", "cpu": {"vendor": "A", "model": "first"}, "torch": torch_version}
    record = {**first, "modes": {"portable": {"fingerprint": "p"}, "fast": {"fingerprint": "f-there"}}}
    assert numerics_record.kept_record(record) is record and measured == ["portable"]
    for previous in (
        {**record, "modes": {**record["modes"], "portable": {"fingerprint": "p-there"}}},
        {**record, "in_use": "fast"},
        {**record, "torch": "another"},
        None,
    ):
        measured.clear()
        new = numerics_record.kept_record(previous)
        assert new["modes"] == here and new["in_use"] == "portable" and new["cpu"] == numerics.cpu_identity()
        assert sorted(measured) == ["fast", "portable"]


def test_the_other_mode_is_the_one_the_committed_results_were_not_made_in():
    assert other_mode({"in_use": "portable"}) == "fast" and other_mode({"in_use": "fast"}) == "portable"


def test_a_record_made_under_other_mode_names_is_compared_by_what_its_modes_set(capsys):
    """The other vendor's record (../shared/numerics/) names the modes `default` and `portable`:
    each of ours is compared with the reference's mode of the same settings, and the verdict reads
    the reference's mode in use by its settings too."""
    entries = {"operations": {"linear_proj_forward": "1"}, "training_steps": "2"}
    ours = {
        "in_use": "fast",
        "modes": {
            "portable": {"settings": numerics.MODES["portable"], "fingerprint": "p", **entries},
            "fast": {"settings": numerics.MODES["fast"], "fingerprint": "f", **entries},
        },
    }
    older = {
        "in_use": "default",
        "cpu": {"vendor": "GenuineIntel", "model": "other"},
        "modes": {
            "default": {"settings": numerics.MODES["fast"], **entries},
            "portable": {"settings": numerics.MODES["portable"], **entries, "training_steps": "3"},
        },
    }
    assert compare(ours, older)  # our fast is their default, entry for entry
    said = capsys.readouterr().out
    assert "fast      agrees in all 2 entries (the reference's default)" in said
    assert "portable  differs in 1 of 2 entries: training_steps" in said


def test_a_record_from_before_numpys_pin_is_compared_and_its_missing_entries_named(capsys):
    """A record whose modes set fewer libraries (the Intel Xeon's, before NumPy was pinned) is matched
    by the settings it names; the entries it lacks differ, so it never passes for this machine's."""
    ours_entries = {"operations": {"linear_proj_forward": "1", "numpy_exp_log": "4"}, "training_steps": "2"}
    theirs_entries = {"operations": {"linear_proj_forward": "1"}, "training_steps": "2"}
    ours = {
        "in_use": "portable",
        "modes": {
            m: {"settings": numerics.MODES[m], "fingerprint": m, **ours_entries} for m in numerics.MODES
        },
    }
    without_numpy = {k: v for k, v in numerics.MODES["portable"].items() if k not in numerics.NUMPY_AT_AVX2}
    older = {
        "in_use": "portable",
        "cpu": {"vendor": "GenuineIntel", "model": "other"},
        "modes": {"portable": {"settings": without_numpy, **theirs_entries}},
    }
    assert not compare(ours, older)
    assert "portable  differs in 1 of 3 entries: numpy_exp_log" in capsys.readouterr().out
    unmatched = {**older, "modes": {"portable": {"settings": {"MKL_CBWR": "AUTO"}, **theirs_entries}}}
    assert not compare(ours, unmatched)  # its mode in use matches none of ours: no agreement claimed


@pytest.mark.numerics
@pytest.mark.skipif(not numerics.has_avx2(), reason="the hash is the x86-64 AVX2 kernel's")
def test_the_pipelines_adam_computes_as_torchs_fused_adam_in_every_mode():
    """The fingerprint's Adam entry (two updates of the pipeline's FlatAdam) is one hash in both modes:
    the fused kernel's square root does not follow MKL's branch. 3d823db9d0d6d7fb is what
    torch.optim.Adam(fused=True) gave for the entry's inputs on an Intel Xeon in both of its modes
    (../shared/numerics/): the test holds the two vendors' Adam together wherever it runs
    (tests/test_train.py holds FlatAdam bit-equal to torch.optim.Adam(fused=True))."""
    code = "import pipeline; from pipeline.numerics import fingerprint as f; print(f.operation_entries()['adam_update'])"  # noqa: E501
    hashes = set()
    for mode in numerics.MODES:
        env = {**os.environ, numerics.MODE_ENV: mode}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        hashes.add(out.stdout.strip())
    assert hashes == {"3d823db9d0d6d7fb"}


def simulated_record(tmp_path, numerics=None, training=None):
    """tests/recorded_bytes.json as if recorded on a machine whose operations compute as this one's,
    but for the entries in `numerics`, and whose training gave `training`; its path."""
    recorded = json.loads(RECORDED_BYTES.read_text())
    recorded["numerics"] = {**this_machines_operations(), **(numerics or {})}
    recorded["training"] = {**recorded["training"], **(training or {})}
    path = tmp_path / "recorded_elsewhere.json"
    path.write_text(json.dumps(recorded))
    return path


@pytest.mark.slow
@pytest.mark.numerics
def test_a_machine_that_computes_otherwise_skips_the_recorded_bytes_and_says_why(tmp_path):
    """A record made where one operation rounds otherwise than here: both recorded-bytes tests skip,
    naming that operation and no other (the record is this machine's own fingerprint less one entry,
    so the simulation holds whatever this machine is)."""
    other = simulated_record(tmp_path, numerics={"linear_proj_grad_weight": "0" * 16})
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/test_train.py"]
        + ["-k", "recorded"],
        env={**os.environ, "PIPELINE_RECORDED_BYTES": str(other)},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout
    assert "4 skipped" in out.stdout
    assert "differ from this machine's in linear_proj_grad_weight:" in out.stdout  # that one alone


@pytest.mark.numerics
def test_where_the_numerics_agree_other_bytes_fail(tmp_path, monkeypatch):
    """The same check can fail: a record whose operations compute as here but whose training gave
    other weights makes the recorded-bytes test fail, not skip."""
    name = next(iter(test_train.RECORDED_CASES))
    wrong = {"weights_sha256": "0" * 64, "last_loss": 0.0}
    monkeypatch.setenv("PIPELINE_RECORDED_BYTES", str(simulated_record(tmp_path, training={name: wrong})))
    with pytest.raises(AssertionError):
        test_train.test_training_gives_the_recorded_bytes(name, together=False)


# ------------------------------------------------------- CI's check of a regeneration


def commit(repo, *paths):
    subprocess.run(["git", "add", *paths], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results"], cwd=repo, check=True
    )


@pytest.fixture
def results_repo(tmp_path, monkeypatch):
    """A git repository with committed results: a claims table that passes, the numerics record."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "reports").mkdir()
    (tmp_path / "metrics").mkdir()
    (tmp_path / "reports/study").mkdir()
    (tmp_path / "reports/claims.csv").write_text("id,status\na,pass\nb,note\n")
    (tmp_path / "reports/study/claims.csv").write_text("id,status\nc,pass\n")  # the study's judged ones
    record = {
        "in_use": "portable",
        "cpu": {"vendor": "AuthenticAMD", "model": "first"},
        "torch": "t",
        "modes": {
            "portable": {
                "operations": {"linear_proj_forward": "1", "softmax_forward": "2"},
                "training_steps": "3",
            }
        },
    }
    (tmp_path / reproduced.NUMERICS).write_text(json.dumps(record))
    commit(tmp_path, ".")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(reproduced, "read_deviations", lambda: {})
    return tmp_path, record


def run_check(capsys):
    with pytest.raises(SystemExit) as stopped:
        reproduced.main()
    out = capsys.readouterr()
    return stopped.value.code, out.out + out.err


def test_the_same_numerics_and_a_clean_tree_reproduce_every_result(results_repo, capsys):
    status, said = run_check(capsys)
    assert status == 0 and "reproduced to the byte" in said


def test_the_same_numerics_and_a_changed_result_fail(results_repo, capsys):
    repo, _ = results_repo
    (repo / "reports/claims.csv").write_text("id,status\na,pass\nb,pass\n")
    status, said = run_check(capsys)
    assert status == 1 and "1 tracked files differ" in said and "reports/claims.csv" in said


def test_other_numerics_pass_on_the_verdict_and_say_what_differs(results_repo, capsys):
    """Another machine: one operation rounds otherwise, the regenerated results differ, every claim
    holds: the check passes and names the operation and the files."""
    repo, record = results_repo
    record["modes"]["portable"]["operations"]["linear_proj_forward"] = "other"
    record["cpu"] = {"vendor": "GenuineIntel", "model": "second"}
    (repo / reproduced.NUMERICS).write_text(json.dumps(record))
    (repo / "reports/claims.csv").write_text("id,status\na,pass\nb,pass\n")
    status, said = run_check(capsys)
    assert status == 0
    assert "computes otherwise than the committed results' machine: linear_proj_forward" in said
    assert "2 tracked files differ" in said and "every claim still holds" in said


def test_another_mode_names_the_mode_and_the_operations_it_computes_otherwise(results_repo, capsys):
    repo, record = results_repo
    fast = {"operations": {"linear_proj_forward": "other", "softmax_forward": "2"}, "training_steps": "3"}
    record["modes"]["fast"], record["in_use"] = fast, "fast"
    (repo / reproduced.NUMERICS).write_text(json.dumps(record))
    status, said = run_check(capsys)
    assert status == 0
    line = next(x for x in said.splitlines() if "otherwise than the committed results' machine" in x)
    assert line.endswith(": mode fast instead of portable, linear_proj_forward"), line


def test_other_numerics_and_a_failing_claim_fail(results_repo, capsys):
    repo, record = results_repo
    record["modes"]["portable"]["operations"]["softmax_forward"] = "other"
    (repo / reproduced.NUMERICS).write_text(json.dumps(record))
    (repo / "reports/claims.csv").write_text("id,status\na,fail\n")
    status, said = run_check(capsys)
    assert status == 1 and "a: fails and is not a known deviation" in said

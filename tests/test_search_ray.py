"""The length study's search on Ray: the same bytes as on the project's own process pool, and every
fault a cluster meets survived with nothing lost, on a cluster of a head and two worker nodes started
on this machine (ray.cluster_utils.Cluster). Ray starts once, for one test whose scenarios are
subtests: a worker node killed mid-row, the driver stopped mid-search, a row that diverges, and an
address where no cluster answers."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import PARAMS_YAML, laid_over, write_params_files

import pipeline
from pipeline.infra.ray_pool import ray_session, run_tasks
from pipeline.numerics.pin import pinned_environment
from pipeline.study.load import parse_params
from pipeline.study.search import run_search

ray_cluster = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.slow  # a Ray cluster of three nodes on this machine: about a minute

ROOT = Path(__file__).resolve().parents[1]
CODE = [Path(pipeline.__file__).parent]
SMALL = {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32, "max_len": 16}
STUDY = {  # rows that train in a few seconds each, long enough to be killed mid-row
    "study": {
        "model": SMALL,
        "train": {"steps": 200, "batch_size": 16, "warmup": 2, "seeds": [100], "device": "cpu"},
        "data": {"train_lengths": [1, 2, 3]},
        "search_seeds": {"screen": [0], "confirm": [10, 11]},
        "max_length": 5,
        "test_size": 8,
        "diagnosis_lengths": [3],
    }
}
ATTENTIONS = ("softmax", "none/sigmoid/sigmoid", "log_length", "sigmoid")
ROWS = [
    {"name": f"row{i}", "variant": {"positions": "bos", "attention": a}} for i, a in enumerate(ATTENTIONS)
]


def study_params():
    raw = laid_over(PARAMS_YAML, STUDY)
    raw["study"]["variants"] = {"base": {"positions": "bos", "attention": "softmax"}}
    raw["study"]["verdict"]["variants"] = ["base"]
    return raw


def marking(folder):
    """A `run` for run_search: Ray's tasks, each of which leaves a file named by its node as it
    starts, so that the test knows where a row is running."""

    def run(function, jobs, on_result):
        def marked(*args):
            import ray

            node = ray.get_runtime_context().get_node_id()
            (folder / f"{node}.{os.getpid()}.{time.monotonic_ns()}").touch()  # a file each start
            return function(*args)

        return run_tasks(marked, jobs, on_result)

    return run


def stage(tmp_path, *extra):
    """The search stage's command line, run in `tmp_path` (its params.yaml and rows.yaml)."""
    return [
        sys.executable,
        "-m",
        "pipeline.stages.search",
        "--rows",
        "rows.yaml",
        "--out",
        "search.json",
        *extra,
    ]


def stage_env():
    return {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": ""}


@pytest.fixture(scope="module")
def cluster():
    """A head that runs nothing and two worker nodes of one CPU each, dead nodes noticed in seconds."""
    health = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}
    nodes = ray_cluster.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "_system_config": health}
    )
    for _ in range(2):
        nodes.add_node(num_cpus=1)
    yield nodes
    nodes.shutdown()


def test_the_search_on_ray_keeps_its_bytes_and_survives_a_clusters_faults(cluster, tmp_path, subtests):
    params = parse_params(study_params())
    study, batch = params.study, params.evaluate.batch_size
    undisturbed = tmp_path / "pool.json"
    run_search(study, batch, ROWS, undisturbed)  # the project's process pool on this machine
    env = pinned_environment()

    with subtests.test("a row trained on Ray has the pool's bytes"):
        out = tmp_path / "ray.json"
        with ray_session(cluster.address, env=env, ship=CODE) as run:
            run_search(study, batch, ROWS, out, run=run)
        assert out.read_bytes() == undisturbed.read_bytes()

    with subtests.test("a worker node killed mid-row: the task runs again elsewhere, each row once"):
        out, marks = tmp_path / "killed.json", tmp_path / "marks"
        marks.mkdir()
        with ray_session(cluster.address, env=env, ship=CODE):
            search = threading.Thread(
                target=run_search, args=(study, batch, ROWS, out), kwargs={"run": marking(marks)}
            )
            search.start()
            while not any(marks.iterdir()):
                time.sleep(0.02)
            first = next(marks.iterdir()).name.split(".")[0]
            (node,) = [n for n in cluster.worker_nodes if n.node_id == first]
            cluster.remove_node(node, allow_graceful=False)
            search.join(timeout=300)
        assert not search.is_alive()
        assert len(list(marks.iterdir())) == len(ROWS) + 1  # one row started twice: on the dead node, again
        assert [r["name"] for r in json.loads(out.read_text())["rows"]] == [r["name"] for r in ROWS]
        assert out.read_bytes() == undisturbed.read_bytes()
        cluster.add_node(num_cpus=1)

    write_params_files(tmp_path, study_params())
    (tmp_path / "rows.yaml").write_text(yaml.safe_dump(ROWS, sort_keys=False))

    with subtests.test("the driver stopped mid-search: the next run trains only the missing rows"):
        out = tmp_path / "search.json"
        driver = subprocess.Popen(
            stage(tmp_path, "--address", cluster.address), cwd=tmp_path, env=stage_env(), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        while not out.exists():
            assert driver.poll() is None, driver.stdout.read()
            time.sleep(0.05)
        driver.send_signal(signal.SIGTERM)
        assert driver.wait(timeout=60) == 130, driver.stdout.read()
        kept = len(json.loads(out.read_text())["rows"])
        assert 1 <= kept < len(ROWS)
        again = subprocess.run(
            stage(tmp_path, "--address", cluster.address), cwd=tmp_path, env=stage_env(), text=True,
            capture_output=True, timeout=300,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert (
            f"search: {len(ROWS) - kept} rows to run" in again.stdout and f"{kept} recorded" in again.stdout
        )
        assert out.read_bytes() == undisturbed.read_bytes()

    with subtests.test("a row that diverges is recorded as failed and the search goes on"):
        diverging = {
            "name": "diverges",
            "variant": {"positions": "bos", "attention": "softmax", "train": {"lr": 1e6}},
        }
        out = tmp_path / "diverged.json"
        with ray_session(cluster.address, env=env, ship=CODE) as run:
            run_search(study, batch, [diverging, ROWS[0]], out, run=run)
        first, second = json.loads(out.read_text())["rows"]
        assert first["failed"].startswith("training diverged") and first["meets_bar"] is False
        assert "failed" not in second and second["accuracy"]

    with subtests.test("no address: the stage starts a Ray of its own, with the pool's bytes"):
        (tmp_path / "one.yaml").write_text(yaml.safe_dump(ROWS[:1], sort_keys=False))
        run_search(study, batch, ROWS[:1], tmp_path / "one_pool.json")
        own = subprocess.run(
            [*stage(tmp_path)[:3], "--rows", "one.yaml", "--out", "one_ray.json"], cwd=tmp_path,
            env=stage_env(), text=True, capture_output=True, timeout=300,
        )  # fmt: skip
        assert own.returncode == 0, own.stderr
        assert (tmp_path / "one_ray.json").read_bytes() == (tmp_path / "one_pool.json").read_bytes()
        assert json.loads((tmp_path / "runs/search.json").read_text())["spread"] == "a Ray on this machine"

    with subtests.test("no cluster at the address given: one line, nothing written"):
        (tmp_path / "search.json").unlink()
        refused = subprocess.run(
            stage(tmp_path, "--address", "127.0.0.1:9"), cwd=tmp_path, env=stage_env(), text=True,
            capture_output=True, timeout=120,
        )  # fmt: skip
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            "error: no Ray cluster answers at 127.0.0.1:9: start one with `ray start --head` there, or "
            "leave out --address (and RAY_ADDRESS) to run on a Ray of this machine"
        ]
        assert not (tmp_path / "search.json").exists()

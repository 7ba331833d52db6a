"""The length study's search on Ray: the same bytes as on the project's own process pool, and every
fault a cluster meets survived with nothing lost, on a cluster of a head and two worker nodes started
on this machine (ray.cluster_utils.Cluster). Ray starts once, for one test whose scenarios are
subtests: a worker node killed mid-row, the driver stopped mid-search, a row that diverges, and an
address where no cluster answers. Last, that cluster gone, the study guide's own cluster commands: a head
and a worker started with the `ray` command line, the token handed over as the guide says, a row
run through `--address`, and a wrong token refused in one line."""

import json
import os
import re
import signal
import socket
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
ATTENTIONS = ("softmax", "none/sigmoid/sigmoid", "log_length")
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


@pytest.fixture
def cluster():
    """A head that runs nothing and two worker nodes of one CPU each, dead nodes noticed in seconds;
    the test shuts it down before it starts the study guide's cluster (shutting down twice is harmless)."""
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

    cluster.shutdown()  # one Ray cluster at a time on this machine: the study guide's starts next
    with subtests.test("the study guide's cluster: a head, a worker, the token, a row through --address"):
        guide_cluster(tmp_path, undisturbed)


# ------------------------------------------------------------------ the study guide's cluster

BLOCK = re.compile(r"^ *```bash\n(.*?)^ *```", re.S | re.M)


def guide_cluster_commands():
    """The study guide's cluster block, each line's command without its comment, in order."""
    text = (ROOT / "study/README.md").read_text()
    block = next(b.group(1) for b in BLOCK.finditer(text) if "ray start --head" in b.group(1))
    return [line.partition("#")[0].strip() for line in block.splitlines() if line.strip()]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shown(commands, start, holding=""):
    """The guide's one command that starts with `start` (and holds `holding`)."""
    (found,) = [c for c in commands if c.startswith(start) and holding in c]
    return found


def guide_cluster(tmp_path, undisturbed):
    """The study guide's commands as a user copies them, on this machine: HEAD_IP the loopback, a free port
    for 6379, TOKEN what `ray get-auth-token --generate` printed. Each `ray start` also takes --block,
    so that the test stops the nodes it started and no other Ray on the machine (`ray stop` would
    stop every one), and the head no CPU, so that the row can only run on the worker that joined."""
    commands = guide_cluster_commands()
    port = free_port()
    address = f"127.0.0.1:{port}"
    home = tmp_path / "home"  # where the token is kept: not the user's ~/.ray
    home.mkdir()
    base = {**stage_env(), "HOME": str(home)}
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        base.pop(name, None)
    ray_bin = str(Path(sys.executable).parent / "ray")

    def ray_command(command, *extra):
        words = command.replace("6379", str(port)).replace("HEAD_IP", "127.0.0.1").split()
        return [ray_bin, *words[1:], *extra]

    made = subprocess.run(
        ray_command(shown(commands, "ray get-auth-token")),
        env=base,
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"[0-9a-f]{32,}", token), made.stdout
    exported = dict(word.split("=", 1) for word in shown(commands, "export ").split()[1:])
    joined = {**base, **{k: v.replace("TOKEN", token) for k, v in exported.items()}}
    nodes = []
    try:
        for command, cpus in (
            (shown(commands, "ray start --head"), 0),
            (shown(commands, "ray start --address"), 1),
        ):
            nodes.append(
                subprocess.Popen(
                    ray_command(command, "--node-ip-address=127.0.0.1", f"--num-cpus={cpus}", "--block"),
                    env=joined,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
            )
            wait_for_port(port, nodes[0])
        search = (
            shown(commands, "python -m pipeline.stages.search", "--address")
            .replace("HEAD_IP:6379", address)
            .split()
        )
        search = [sys.executable, *search[1:]]
        search[search.index("--rows") + 1], search[search.index("--out") + 1] = "rows.yaml", "cli.json"
        ran = subprocess.run(search, cwd=tmp_path, env=joined, text=True, capture_output=True, timeout=300)
        assert ran.returncode == 0, ran.stderr
        assert (tmp_path / "cli.json").read_bytes() == undisturbed.read_bytes()
        refused_line = (
            f"error: the Ray cluster at {address} refused this process's token: set RAY_AUTH_MODE=token "
            "and RAY_AUTH_TOKEN to the head's token (`ray get-auth-token` on the head prints it), on "
            "this machine and on every machine that joins"
        )
        elsewhere = {**joined, "HOME": str(tmp_path)}  # a machine without the head's token file
        for wrong in (
            {**elsewhere, "RAY_AUTH_TOKEN": "0" * 64},
            {k: v for k, v in elsewhere.items() if "AUTH" not in k},
        ):
            refused = subprocess.run(
                [*search[:-2], "--out", "refused.json", "--address", address], cwd=tmp_path, env=wrong,
                text=True, capture_output=True, timeout=120,
            )  # fmt: skip
            assert refused.returncode == 2, refused.stderr
            assert refused.stderr.strip().splitlines() == [refused_line]
            assert not (tmp_path / "refused.json").exists()
    finally:
        for node in reversed(nodes):
            node.terminate()
            node.wait(timeout=60)


def wait_for_port(port, head, seconds=60):
    """Until the head's port answers (its GCS is up)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert head.poll() is None, "the head stopped"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"the head's port {port} did not answer in {seconds} s")

"""Every command the README, the two guides (the study's and the code's) and the report show runs, in
the tiny clone, as a user would type it.

The test reads the pages, not a list of its own: each line of a ```bash block is a command. One that
starts with `dvc` or `python -m pipeline` runs in the clone and must exit 0 with no traceback; any
other, and any that cannot run here, carries the marker `not run by the tests: <why>` in its comment.
A command with neither fails. `dvc queue start` is waited for: every queued run must succeed.

The commands run in groups, each in its own copy of the reproduced clone, side by side: a command
that reads experiments runs after the ones it names (`dvc exp diff a b` after `dvc exp run -n a` and
`-n b`; one that names none, such as `dvc exp show`, after the experiment just before it), and
`dvc queue start` after the runs it was queued with. Every other command stands alone.
"""

import os
import re
import subprocess
import tempfile
import time

import pytest
from tiny_clone import ROOT, clone_env, run

pytestmark = pytest.mark.slow  # the tiny pipeline, then every experiment the README shows

PAGES = (
    "README.md",
    "study/README.md",
    "pipeline/README.md",
    "reports/README.md",
    "reports/APPENDIX.md",
    "reports/study/README.md",
    "reports/study/APPENDIX.md",
)
MARKER = re.compile(r"not run by the tests: \S+( \S+){2,}")  # a reason of three words or more
RUNNABLE = ("dvc ", "python -m pipeline.")
BLOCK = re.compile(r"^ *```bash\n(.*?)^ *```", re.S | re.M)


def shown_commands(page):
    """(line number, command, its comment) of every line of the page's ```bash blocks."""
    text = (ROOT / page).read_text()
    for block in BLOCK.finditer(text):
        first = text[: block.start(1)].count("\n") + 1
        for offset, line in enumerate(block.group(1).splitlines()):
            command, _, comment = line.partition("#")
            if command.strip() or comment.strip():
                yield first + offset, command.strip(), comment.strip()


def test_every_shown_command_runs_or_says_why_not():
    """The static half: each line is runnable here or marked, and unmarked lines are all runnable."""
    commands = [(page, *c) for page in PAGES for c in shown_commands(page)]
    assert any(cmd.startswith("dvc exp run") for _, _, cmd, _ in commands)
    for page, line, command, comment in commands:
        where = f"{page}:{line}: `{command or comment}`"
        assert command, f"{where}: a comment line in a command block; put it beside the command"
        if not MARKER.search(comment):
            assert command.startswith(RUNNABLE), f"{where} is neither run by the tests nor marked"


GUIDES = ("README.md", "study/README.md", "pipeline/README.md")  # the pages written by hand
TIMED = re.compile(r"\b\d[\d.,]*\s*(?:s|ms|µs|min|minutes?|seconds?|h|hours?)\b")


def test_the_readme_is_a_door_and_no_guide_types_a_timing_by_hand():
    """The README reads in five minutes (at most 250 lines), and no page written by hand carries a
    measured time: timings depend on the machine and churn a page, so they are printed by
    `python -m pipeline.tools.timings` and generated into the appendix from metrics/."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
    typed = [
        f"{page}:{number}: {line.strip()}"
        for page in GUIDES
        for number, line in enumerate((ROOT / page).read_text().splitlines(), 1)
        if TIMED.search(line)
    ]
    assert not typed, typed
    assert TIMED.search("took 209 s") and TIMED.search("about 1,330 s") and not TIMED.search("seeds 200-219")


QUEUE_RESULTS = ".dvc/tmp/exps/celery/result"  # where DVC's queue writes a file for each finished run


def wait_for_queue(repo, limit=600):
    """Until no queued or running experiment is left; then every one of them must have succeeded.
    Each look is a `dvc queue status` process (a second and a half of CPU): one is taken as soon as a
    queued run finishes (a new file among the queue's results, a cheap listing), and otherwise ever
    more rarely, so that the wait ends with the queue (within 30 s) whatever DVC writes where."""
    results, seen, status = repo / QUEUE_RESULTS, set(), "(not asked yet)"
    now = time.monotonic()
    deadline, pause, next_look = now + limit, 10.0, now + 10.0
    while time.monotonic() < deadline:
        finished = set(os.listdir(results)) if results.is_dir() else set()
        if finished - seen or time.monotonic() >= next_look:
            seen, status = finished, run(["dvc", "queue", "status"], repo).stdout
            if not re.search(r"\b(Queued|Running)\b", status):
                break
            pause = min(pause * 1.5, 30.0)
            next_look = time.monotonic() + pause
        time.sleep(0.25)
    else:
        raise AssertionError(f"the queue did not finish in {limit} s:\n{status}")
    assert "Failed" not in status and "Success" in status, status


def runnable_commands():
    """(page, line, command) of every command the tests run, in the pages' order."""
    return [
        (page, line, command)
        for page in PAGES
        for line, command, comment in shown_commands(page)
        if not MARKER.search(comment)
    ]


READS_EXPERIMENTS = ("dvc exp show", "dvc exp diff", "dvc plots diff")


def command_groups(commands):
    """The commands split into groups that run apart, each in the pages' order (see the docstring)."""
    group = list(range(len(commands)))  # each command's group, by the index of a member

    def root(i):
        while group[i] != i:
            i = group[i]
        return i

    made, queued, last_run = {}, [], None  # experiment name -> index; queued runs; the last exp run
    for i, (_, _, command) in enumerate(commands):
        words = command.split()
        named = [made[w] for w in words if w in made]
        if command.startswith("dvc exp run"):
            if "-n" in words:
                made[words[words.index("-n") + 1]] = i
            if "--queue" in words:
                queued.append(i)
            else:
                last_run = i
        joined = named
        if command.startswith(READS_EXPERIMENTS) and not named and last_run is not None:
            joined = [last_run]
        if command.startswith("dvc queue start"):
            joined, queued = queued, []
        for j in joined:
            group[root(j)] = root(i)
    groups = {}
    for i in range(len(commands)):
        groups.setdefault(root(i), []).append(commands[i])
    return list(groups.values())


def test_the_groups_keep_every_command_once_and_what_reads_an_experiment_after_it():
    shown = [
        "dvc exp run -n a -S x=1",
        "dvc exp run -n b -S y=1",
        "dvc exp run -n c -S z=1",
        "dvc exp show",
        "dvc exp diff a b",
        "dvc exp run --queue -n q -S w=1",
        "dvc queue start -j 1",
        "python -m pipeline.x",
    ]
    groups = [[c for _, _, c in g] for g in command_groups([("p", n, c) for n, c in enumerate(shown)])]
    assert sorted(c for g in groups for c in g) == sorted(shown)
    assert [shown[0], shown[1], shown[4]] in groups and [shown[2], shown[3]] in groups
    assert [shown[5], shown[6]] in groups and [shown[7]] in groups


def run_as_typed(command, repo):
    """(exit status, output) of a command line run by bash in the clone. The output goes through a
    file, not a pipe: `dvc queue start` leaves a worker behind that holds what it was given open
    until it has been idle for a while, and reading a pipe would wait for that worker."""
    with tempfile.TemporaryFile("w+") as output:
        result = subprocess.run(
            ["bash", "-c", command], cwd=repo, env=clone_env(repo), stdout=output, stderr=output, timeout=900
        )
        output.seek(0)
        return result.returncode, output.read()


GROUPS = command_groups(runnable_commands())


@pytest.mark.parametrize("group", GROUPS, ids=[f"{g[0][0]}:{g[0][1]}" for g in GROUPS])
def test_every_shown_command_runs_in_the_tiny_clone(group, reproduced_clone):
    repo, _ = reproduced_clone
    for page, line, command in group:
        returncode, output = run_as_typed(command, repo)
        assert returncode == 0 and "Traceback" not in output, f"{page}:{line}: {command}\n{output}"
        if command.startswith("dvc queue start"):
            wait_for_queue(repo)

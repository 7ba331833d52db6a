"""Every command the README and the report show runs, in the tiny clone, as a user would type it.

The test reads the pages, not a list of its own: each line of a ```bash block is a command. One that
starts with `dvc` or `python -m pipeline` runs in the clone and must exit 0 with no traceback; any
other, and any that cannot run here, carries the marker `not run by the tests: <why>` in its comment.
A command with neither fails. `dvc queue start` is waited for: every queued run must succeed.
"""

import re
import time

import pytest
from tiny_clone import ROOT, make_clone, run

pytestmark = pytest.mark.slow  # the tiny pipeline, then every experiment the README shows

PAGES = ("README.md", "reports/README.md", "reports/APPENDIX.md")
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


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    repo = make_clone(tmp_path_factory.mktemp("readme"))
    run(["dvc", "repro"], repo)
    run(["git", "add", "-A"], repo)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results"], repo)
    return repo


def wait_for_queue(repo, limit=600):
    """Until no queued or running experiment is left; then every one of them must have succeeded."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        status = run(["dvc", "queue", "status"], repo).stdout
        if not re.search(r"\b(Queued|Running)\b", status):
            break
        time.sleep(3)
    else:
        raise AssertionError(f"the queue did not finish in {limit} s:\n{status}")
    assert "Failed" not in status and "Success" in status, status


def test_every_shown_command_runs_in_the_tiny_clone(reproduced):
    ran = []
    for page in PAGES:
        for line, command, comment in shown_commands(page):
            if MARKER.search(comment):
                continue
            result = run(["bash", "-c", command], reproduced, check=False, timeout=900)
            output = result.stdout + result.stderr
            assert result.returncode == 0 and "Traceback" not in output, f"{page}:{line}: {command}\n{output}"
            if command.startswith("dvc queue start"):
                wait_for_queue(reproduced)
            ran.append(command)
    assert ran

"""Outputs written aside and moved into place whole, and the seeds' worker count."""

import os
import stat

import pytest

from pipeline.infra import files
from pipeline.infra import workers as worker_setup


def test_staged_folders_move_into_place_together_or_not_at_all(tmp_path):
    a, b = tmp_path / "models", tmp_path / "logs"
    files.write_dir(a, {"old.txt": "old"})
    with pytest.raises(RuntimeError):
        with files.staged(a, b) as (stage_a, stage_b):
            (stage_a / "new.txt").write_text("new")
            raise RuntimeError("a seed failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models"]  # no staging folder left, b not made
    assert [p.name for p in a.iterdir()] == ["old.txt"]
    with files.staged(a, b) as (stage_a, stage_b):
        mode = stat.S_IMODE(stage_a.stat().st_mode)
        (stage_a / "new.txt").write_text("new")
        (stage_b / "seed_0").write_text("log")
    assert [p.name for p in a.iterdir()] == ["new.txt"] and (b / "seed_0").read_text() == "log"
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o777 & ~umask  # not mkdtemp's 0700: a shared checkout's folders stay readable
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "models"]


@pytest.mark.parametrize("seeds, workers", [(1, 1), (3, 3), (4, 4), (5, 3), (8, 4), (10, 4), (12, 4)])
def test_seed_workers_fill_every_round_on_two_cores(monkeypatch, seeds, workers):
    """At most two processes per core, as few rounds as that allows, no round left with a lone seed:
    five seeds run 3 then 2 (2.5 seed-times on two cores), not 4 then 1 (3)."""
    monkeypatch.setattr(worker_setup.os, "cpu_count", lambda: 2)
    assert worker_setup.seed_workers([()] * seeds) == workers

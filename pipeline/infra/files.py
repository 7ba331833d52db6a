"""Atomic writes: every output appears whole (temporary file, then rename) or not at all."""

import io
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

_UMASK = os.umask(0)
os.umask(_UMASK)


def write_bytes(path, data: bytes):
    """Write `data` to `path` atomically: a crash leaves the old file or none, never half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs get the usual permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path, text: str):
    write_bytes(path, text.encode())


def write_json(path, obj):
    write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def npz_bytes(**arrays):
    """The arrays as a compressed .npz archive's bytes (np.savez_compressed)."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def write_npz(path, **arrays):
    write_bytes(path, npz_bytes(**arrays))


def write_torch(path, obj):
    # Saved through a buffer so the archive's inner name is fixed ("archive"), not the temp name:
    # the same checkpoint is then the same bytes, which DVC's content cache relies on.
    import torch  # here, not at the top: the torch-free stages (numerics) write files too

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    write_bytes(path, buffer.getvalue())


def replace_dir(staging: Path, final: Path):
    """Move a fully written staging directory into place, replacing any old one."""
    final = Path(final)
    if final.exists():
        shutil.rmtree(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staging, final)


def write_dir(final, contents: dict):
    """The directory `final` holding exactly `contents` ({file name: text, or an object written as
    JSON}), written aside and moved into place: the old directory or the whole new one, never a mix."""
    with staged(final) as (staging,):
        for name, content in contents.items():
            (write_text if isinstance(content, str) else write_json)(staging / name, content)


@contextmanager
def staged(*finals):
    """Directories written aside, one fresh sibling per folder of `finals` (yielded in their order),
    moved into place together when the block ends without error: each of `finals` then holds the
    old contents or the whole new ones, never a mix. Whatever is left of them is removed."""
    stagings = [staging_dir(final) for final in finals]
    try:
        yield stagings
        for staging, final in zip(stagings, finals, strict=True):
            replace_dir(staging, final)
    finally:
        for staging in stagings:
            shutil.rmtree(staging, ignore_errors=True)  # left only when something failed before the move


def staging_dir(final) -> Path:
    """A fresh, empty sibling directory to write into before `replace_dir`."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp"))
    staging.chmod(0o777 & ~_UMASK)  # mkdtemp makes 0700; outputs get the usual permissions
    return staging

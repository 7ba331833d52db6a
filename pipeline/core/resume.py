"""Opt-in resume for long runs (train.resume_every > 0).

DVC 3 has no checkpoints, and `persist: true` would disable its run-cache, so a long run keeps
its own periodic training state outside DVC's outputs (runs/resume/, git-ignored): weights,
Adam's moments, the losses so far and the random-number state. A run restarted with the same
parameters continues from the last saved step and ends with the same bytes as an uninterrupted
run; a state saved under other parameters is ignored. The state is removed once training ends.
"""

import hashlib
import json
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch

from pipeline.infra import files
from pipeline.infra.rules import as_dict

RESUME_DIR = Path("runs/resume")


def fingerprint(config, recipe, seed, rows):
    """What the training state depends on: model, recipe, data size and seed (not the device or
    how often progress is printed or saved)."""
    kept = {k: v for k, v in as_dict(recipe).items() if k not in ("device", "log_every", "resume_every")}
    # the optimiser's name: a state saved by another optimiser holds other moments
    what = {"model": as_dict(config), "train": kept, "rows": rows, "seed": seed}
    what["optimizer"] = "fused flat Adam"
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Resume:
    path: Path
    every: int
    fingerprint: str

    def save(self, step, flat, optimizer, losses):
        state = {
            "fingerprint": self.fingerprint,
            "step": step,
            "flat": flat.detach().cpu(),
            "optimizer": optimizer.state_dict(),
            "losses": list(losses),
            "rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        }
        files.write_torch(self.path, state)

    def load(self):
        """The saved state, or None when there is none or it belongs to other parameters."""
        try:
            state = torch.load(self.path, map_location="cpu", weights_only=True)
        except FileNotFoundError:
            return None
        except (RuntimeError, EOFError, OSError, pickle.UnpicklingError, zipfile.BadZipFile):
            print(f"resume: {self.path} is unreadable; starting from step 1")
            return None
        if state.get("fingerprint") != self.fingerprint:
            print(f"resume: {self.path} was saved under other parameters; starting from step 1")
            return None
        return state

    def clear(self):
        self.path.unlink(missing_ok=True)


def for_seed(config, recipe, seed, rows, directory=RESUME_DIR):
    """The seed's Resume when the recipe's resume_every is set, else None."""
    if recipe.resume_every <= 0:
        return None
    return Resume(
        Path(directory) / f"seed_{seed}.pt", recipe.resume_every, fingerprint(config, recipe, seed, rows)
    )

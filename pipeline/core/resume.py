"""Resume (train.resume_every > 0): DVC 3 has no checkpoints, and `persist: true` would disable its
run-cache, so a long run keeps its own periodic training state outside DVC's outputs (runs/resume/,
git-ignored): the seeds' stacked weights, Adam's moments, each seed's losses so far and its
generator's state. A run restarted with the same parameters continues from the last saved step and
ends with the same bytes as an uninterrupted run; a state saved under other parameters is ignored.
The state is removed once training ends.
"""

import hashlib
import json
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch

from pipeline.infra import files
from pipeline.params.rules import as_dict

RESUME_DIR = Path("runs/resume")


def fingerprint(config, recipe, seeds, rows):
    """What the training state depends on: model, recipe, data size and the seeds trained together
    (not the device or how often progress is printed or saved)."""
    kept = {k: v for k, v in as_dict(recipe).items() if k not in ("device", "log_every", "resume_every")}
    what = {"model": as_dict(config), "train": kept, "rows": rows, "seeds": list(seeds)}
    what["optimizer"] = "fused flat Adam, seeds together"  # a state of another layout holds other moments
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Resume:
    path: Path
    every: int
    fingerprint: str

    def save(self, step, adam, losses, generators):
        state = {
            "fingerprint": self.fingerprint,
            "step": step,
            "flat": adam.flat.detach().cpu(),
            "optimizer": {k: v.cpu() for k, v in adam.state_dict().items()},
            "losses": [list(seed_losses) for seed_losses in losses],
            "generators": [g.get_state() for g in generators],
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


def resume_for_seeds(config, recipe, seeds, rows, directory=RESUME_DIR):
    """The Resume of `seeds` trained together when the recipe's resume_every is set, else None."""
    if recipe.resume_every <= 0:
        return None
    name = "seeds_" + "_".join(map(str, seeds))
    return Resume(
        Path(directory) / f"{name}.pt", recipe.resume_every, fingerprint(config, recipe, seeds, rows)
    )

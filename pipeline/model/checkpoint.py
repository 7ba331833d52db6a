"""Checkpoints that carry their own model configuration, so evaluation never reads params.yaml."""

import pickle
import zipfile
from pathlib import Path

import torch

from pipeline.infra import files
from pipeline.infra.errors import ConfigError, DataError
from pipeline.model.transformer import Transformer
from pipeline.params.rules import as_dict, parse
from pipeline.tokens import VOCAB

FORMAT = 1


def checkpoint_path(models_dir, seed):
    return Path(models_dir) / f"seed_{seed}.pt"


def save_checkpoint(path, model: Transformer, **record):
    """Weights plus the configuration that rebuilds them, and whatever the run wants to record."""
    payload = {"format": FORMAT, "model": as_dict(model.config), "vocab": VOCAB, **record}
    payload["state_dict"] = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    files.write_torch(path, payload)


def paper_model(stored):
    """The class a stored configuration builds: the paper's Transformer."""
    return Transformer


def load_checkpoint(path, device="cpu", model_class=paper_model):
    """(model in eval mode, the checkpoint's record); a missing or corrupt file is a DataError.
    `model_class(stored configuration)`: the class that rebuilds it (another model's loader names
    its own, pipeline/study/model.py), whose `config_class` reads the configuration."""
    path = Path(path)
    try:
        payload = torch.load(path, map_location=device, weights_only=True)
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `dvc repro train` first") from None
    except (RuntimeError, EOFError, OSError, pickle.UnpicklingError, zipfile.BadZipFile) as err:
        raise DataError(f"{path} is corrupt or truncated ({type(err).__name__}): retrain it") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise DataError(f"{path} is not a checkpoint of this project (format {FORMAT})")
    cls = model_class(payload.get("model"))
    try:
        config = parse(cls.config_class, payload["model"], f"{path}: model")
        cls.check_config(f"{path}: model", config)
    except ConfigError as err:
        raise DataError(str(err)) from None
    if payload.get("vocab") != VOCAB:
        raise DataError(f"{path} has a vocabulary of {payload.get('vocab')} tokens, this task {VOCAB}")
    model = cls(config).to(device)
    try:
        model.load_state_dict(payload["state_dict"])
    except RuntimeError as err:
        first = str(err).splitlines()[1:2] or [str(err)]
        raise DataError(f"{path}: weights do not fit its configuration: {first[0].strip()}") from None
    model.eval()
    record = {k: v for k, v in payload.items() if k not in ("state_dict", "model")}
    return model, record


def check_fits(model: Transformer, lengths, path):
    """Refuse data the checkpoint cannot read: sequences longer than its positions."""
    longest = model.longest_source
    too_long = [n for n in lengths if n > longest]
    if too_long:
        raise DataError(
            f"{path} has max_len = {model.config.max_len} (sources up to {longest}), "
            f"but the test data has lengths {too_long}"
        )

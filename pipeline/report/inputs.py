"""What the report reads: the parameters the report stage hands it, and what the stages saved (JSON,
CSV and the training logs' TSV). It reads nothing else."""

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.infra.errors import DataError
from pipeline.params.model import ModelConfig
from pipeline.params.sections import DataParams, TrainParams


@dataclass(frozen=True)
class ReportParams:
    """What the report reads of params.yaml: the sections and values the report stage hands it."""

    data: DataParams
    model: ModelConfig
    train: TrainParams
    norm_count: int
    probe_depths: tuple


def read_json(path):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `dvc repro` to produce it") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{path} is not valid JSON (line {err.lineno}): regenerate it") from None


def read_rows(path, delimiter=","):
    """A CSV (or TSV) file as a list of {column: text}."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter=delimiter))


def read_numbers(path):
    """A CSV file of numbers only, as a list of {column: float}."""
    return [{k: float(v) for k, v in row.items()} for row in read_rows(path)]


def read_losses(log_dir, seeds):
    """Every seed's logged training loss, step by step (the loop's TSV: step, loss)."""
    logs = [Path(log_dir) / f"seed_{s}/plots/metrics/loss.tsv" for s in seeds]
    return [[float(row["loss"]) for row in read_rows(log, delimiter="\t")] for log in logs]


def loss_table(losses, seeds):
    """The training logs as a tidy table: seed, steps taken (1 to train.steps) and that step's loss."""
    rows = [
        (s, i + 1, loss)
        for s, seed_losses in zip(seeds, losses, strict=True)
        for i, loss in enumerate(seed_losses)
    ]
    return pd.DataFrame(rows, columns=["seed", "steps", "loss"])


def memory_tokens(example):
    """The tokens the example's memory rows stand for, one per column of its cross-attention: the
    input digits, with "BOS" first where the positions scheme opens the source with it."""
    inputs = [str(d) for d in example["input"]]
    columns = len(example["cross_attention"][0][0][0])  # [layer][head][output step][memory row]
    return ["BOS"] * (columns - len(inputs)) + inputs

"""Headline metrics and their detail. `metrics/<stage>.json` holds the few numbers a person compares
across experiments (what `dvc exp show` lists); `metrics/<stage>/summary.json` holds every number
the stage measured (each seed, each length), which the report reads."""

import re
from pathlib import Path

from pipeline.infra import files


def detail_dir(metrics_path):
    """metrics/<stage>.json -> metrics/<stage>: the folder of the stage's detail and plot tables."""
    return Path(metrics_path).with_suffix("")


def detail_path(metrics_path):
    """metrics/<stage>.json -> metrics/<stage>/summary.json"""
    return detail_dir(metrics_path) / "summary.json"


def headline(metrics, keys=(), pattern=None):
    """The entries of `metrics` named in `keys` (in that order) or matching `pattern` in full."""
    chosen = {k: metrics[k] for k in keys if k in metrics}
    if pattern:
        chosen |= {k: v for k, v in metrics.items() if re.fullmatch(pattern, k)}
    return chosen


def write(metrics_path, metrics, keys=(), pattern=None, detail=True):
    """The detail first, then the headline: the headline appearing means the stage is complete."""
    if detail:
        files.write_json(detail_path(metrics_path), metrics)
    files.write_json(metrics_path, headline(metrics, keys, pattern))

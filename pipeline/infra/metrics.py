"""Headline metrics and their detail. `metrics/<stage>.json` holds the few numbers a person compares
across experiments (what `dvc exp show` lists); `metrics/<stage>/` holds everything the stage
measured: tidy tables (pipeline/infra/results.py), and, for the architecture's and the probe's
single numbers, summary.json."""

from pathlib import Path

from pipeline.infra import files


def detail_dir(metrics_path):
    """metrics/<stage>.json -> metrics/<stage>: the folder of the stage's detail and plot tables."""
    return Path(metrics_path).with_suffix("")


def detail_path(metrics_path):
    """metrics/<stage>.json -> metrics/<stage>/summary.json"""
    return detail_dir(metrics_path) / "summary.json"


def headline(metrics, keys=()):
    """The entries of `metrics` named in `keys`, in that order."""
    return {k: metrics[k] for k in keys if k in metrics}


def write(metrics_path, metrics, keys=(), detail=True):
    """The detail first, then the headline: the headline appearing means the stage is complete."""
    if detail:
        files.write_json(detail_path(metrics_path), metrics)
    files.write_json(metrics_path, headline(metrics, keys))

"""The whole claims table: every claim in the report's order, and reports/claims.csv."""

import dataclasses

import pandas as pd

from pipeline.core.lesson import lesson_words
from pipeline.report.claims.architecture import architecture_claims
from pipeline.report.claims.evaluation import data_claims, evaluation_claims
from pipeline.report.claims.probes import probe_claims
from pipeline.report.claims.rules import COLUMNS, Claim
from pipeline.report.claims.training import norm_claims, training_claims


def all_claims(params, metrics, losses_by_seed) -> list[Claim]:
    """`metrics`: each stage's metrics by stage name, and "example" (metrics/evaluate/example.json);
    `losses_by_seed`: every seed's logged loss, step by step."""
    seeds = params.train.seeds
    m = metrics
    claims = [
        *architecture_claims(m["architecture"]),
        *training_claims(m["train"], seeds, losses_by_seed, params.train.label_smoothing),
        *evaluation_claims(
            m["evaluate"], seeds, params.data.test_size, max(params.data.train_lengths), m["example"]
        ),
        *data_claims(m["data"]),
        *probe_claims(m["probe"]),
        *norm_claims(m["norm"], seeds),
    ]
    words = lesson_words()
    return [dataclasses.replace(c, words=words.get(c.id, "")) for c in claims]


def claims_frame(claims) -> pd.DataFrame:
    return pd.DataFrame([[getattr(c, k) for k in COLUMNS] for c in claims], columns=list(COLUMNS))


def claims_csv(claims) -> str:
    return claims_frame(claims).to_csv(index=False, lineterminator="\n")

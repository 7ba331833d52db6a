"""Two of lesson 10's statements about why its model fails at other lengths, which need the length
study's models and test sets: «Hasta las más cortas fallan» (the lesson's checkpoints on the study's
test sets at every untrained length below the trained one) and «Y no es por la posición» (the frozen
search's model with no position vectors, trained on the lesson's length alone). Judged on the study's
page by the claims table's own rules (pipeline/report/claims.py), from claims.yaml beside this module;
the lesson's habit claims, which its sentence on the habits quotes, judged from the lesson's data."""

from pathlib import Path

from pipeline.report.claims import evaluate, load_claims, shorter_untrained
from pipeline.report.quantities import Measured

CLAIMS_PATH = Path(__file__).with_name("claims.yaml")
HABITS = ("l10-habit-starts_with_0", "l10-habit-ends_with_9")  # the lesson's, on its data's table


POSITIONLESS_ROW = "bos_fixed_confirm"  # the frozen search's row the claim «no es por la posición» reads


def positionless_row(search):
    """The search's row with no position vectors trained on the lesson's length alone, or None."""
    return next((r for r in search["rows"] if r["name"] == POSITIONLESS_ROW), None)


def positionless_failure(search, test_lengths, bar):
    """The search's model with no position vectors trained on the lesson's length alone: each seed's
    exact sequences at the lesson's other lengths (those the row did not train on), against the bar."""
    row = positionless_row(search)
    if row is None:
        raise KeyError(f"the search's row {POSITIONLESS_ROW}")
    lengths = [n for n in test_lengths if n not in row["recipe"]["train_lengths"]]
    by_length = {n: [row["accuracy"][str(s)][str(n)] for s in row["seeds"]] for n in lengths}
    return {"by_length": by_length, "bar": bar.accuracy}


def shorter_failure(per_seed, train_lengths, bar):
    """«Hasta las más cortas fallan»: the lesson's model (the study's `pipeline` rows) at every length
    from 2 up to the longest it trained on, less those it trained on, against the bar. One digit is
    left out: sorting it is copying it."""
    mine = per_seed[per_seed["variant"] == "pipeline"]
    lengths = shorter_untrained(train_lengths)
    by_length = {n: mine.loc[mine["length"] == n, "seq_acc"].tolist() for n in lengths}
    if not all(by_length.values()):
        raise KeyError("the study's accuracy of the lesson's model at every shorter length")
    return {"by_length": by_length, "bar": bar.accuracy}


def judged_claims(params, tables, search):
    """(the study's claims, judged; the lesson's habit claims, judged from its data stage's table).
    `params`: the lesson's data and train sections and the study's (StudyPagesParams); `tables`: the
    study's per_seed and the lesson's data/by_length; `search`: the frozen search's record."""
    bar = params.study.bar
    computed = {
        "q.positionless": lambda: positionless_failure(search, params.data.test_lengths, bar),
        "q.shorter": lambda: shorter_failure(tables["study/per_seed"], params.data.train_lengths, bar),
    }
    measured = Measured({}, tables, params.train.seeds, params.data.test_size, computed)
    habits = [e for e in load_claims() if e["id"] in HABITS]
    return evaluate(load_claims(CLAIMS_PATH), measured, params), evaluate(habits, measured, params)

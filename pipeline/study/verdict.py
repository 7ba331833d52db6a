"""The length study's verdict (stage `verdict`): the variants of study.verdict.variants, each seed
of each as its variant stage trained it, tested at lengths 1..study.verdict.max_length on the three
kinds of input of pipeline/study/verdict_sets.py, drawn from the verdict's own seed.

For each kind, every length is tested from 1 until the first at which the seeds miss the bar (their
mean below its accuracy, or one seed below its floor); beyond it, only the table's lengths
(study.verdict.table_lengths). A length passes only if every kind passes, so a variant's reach is
one less than the shortest first failure over the kinds.

Beside them, what training adds to the prior: the signed architecture set by hand, untrained
(pipeline/study/signed_handset.py), a row of its own that is never the verdict; and, for each trained
signed model at the table's lengths, its count decoded by a hand-set readout
(pipeline/study/readout.py).
"""

import statistics

import torch

from pipeline.core.decoding import accuracy_by_length, greedy_cached, sorted_tests
from pipeline.infra.errors import DataError
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import set_up_worker
from pipeline.model.checkpoint import checkpoint_path
from pipeline.params.rules import as_dict
from pipeline.study.bar import at_the_bar, bar_lengths
from pipeline.study.model import built_for, load_model
from pipeline.study.options import attention_kinds
from pipeline.study.readout import handset_readout
from pipeline.study.signed_handset import signed_handset_fits, signed_handset_model
from pipeline.study.verdict_rows import HANDSET, READOUT, TRAINED
from pipeline.study.verdict_sets import verdict_set


def reads_signed_count(config):
    return attention_kinds(config.attention)[2] == "signed"


def missing_checkpoints(folder, seeds):
    """The first of `seeds` whose checkpoint the variant stage has not written, or None."""
    return next((s for s in seeds if not checkpoint_path(folder, s).exists()), None)


def judge_kind(label, models, kind, verdict, batch_size, with_readout):
    """One kind of input for `models` ({seed: model}): each seed's exact sequences at every length
    until the first that misses the bar, then at the table's lengths, and with `with_readout` the
    hand-set readout's at the table's lengths. Returns (rows {decoder, seed, length, seq_acc}, the
    first failing length or None)."""
    rows, first_failing = [], None
    readable = min(m.longest_source for m in models.values())  # built for as far as they read
    for n in range(1, verdict.max_length + 1):
        in_table = n in verdict.table_lengths
        if n > readable:  # positions that end here: no length beyond is sorted
            if first_failing is None and n in bar_lengths(verdict.bar):
                first_failing = n
                print(f"verdict {label} {kind}: its positions read up to length {readable}", flush=True)
            break
        if first_failing is not None and not in_table:
            continue
        tests = sorted_tests({n: verdict_set(kind, n, verdict.test_size, verdict.seed)})
        decoders = {
            TRAINED: greedy_cached,
            **({READOUT: handset_readout} if with_readout and in_table else {}),
        }
        for seed, model in models.items():
            measured, _ = accuracy_by_length(model, tests, batch_size, decoders=decoders)
            rows += [
                {"decoder": r["decoder"], "seed": seed, "length": n, "seq_acc": r["seq_acc"]}
                for r in measured
            ]
        at_n = [r["seq_acc"] for r in rows if r["length"] == n and r["decoder"] == TRAINED]
        if first_failing is None and n in bar_lengths(verdict.bar) and not at_the_bar(at_n, verdict.bar):
            first_failing = n
            print(f"verdict {label} {kind}: length {n} first misses the bar ({describe(at_n)})", flush=True)
        elif in_table:
            print(f"verdict {label} {kind}: length {n}: {describe(at_n)}", flush=True)
    return rows, first_failing


def describe(accuracies):
    return f"mean {100 * statistics.fmean(accuracies):.1f} %, lowest seed {100 * min(accuracies):.1f} %"


def judge_job(label, kind, config, folder, seeds, verdict, batch_size):
    """Worker: one variant (or the hand-set row, `folder` None) on one kind of input."""
    set_up_worker("cpu")
    if folder is None:
        models = {HANDSET: signed_handset_model(config)}
    else:
        models = {str(s): load_model(checkpoint_path(folder, s))[0] for s in seeds}
    models = {s: built_for(m, verdict.max_length) for s, m in models.items()}
    with_readout = folder is not None and reads_signed_count(config)
    with torch.no_grad():
        return judge_kind(label, models, kind, verdict, batch_size, with_readout)


def verdict_jobs(study, variants_dir):
    """(label, kind, config, checkpoints folder, seeds, ...) for each verdict variant and kind, and
    for the hand-set signed count where a verdict variant has that architecture."""
    verdict, jobs = study.verdict, []
    for name in verdict.variants:
        config, recipe, _ = study.recipes[name]
        folder = f"{variants_dir}/{name}"
        missing = missing_checkpoints(folder, recipe.seeds)
        if missing is not None:
            raise DataError(
                f"{checkpoint_path(folder, missing)} not found: run `dvc repro variant@{name}` first"
            )
        jobs += [(name, kind, config, folder, list(recipe.seeds)) for kind in verdict.kinds]
    # the hand-set row where a judged variant's architecture is the construction's (not at every width)
    signed = [study.recipes[n][0] for n in verdict.variants if signed_handset_fits(study.recipes[n][0])]
    if signed:
        jobs += [(HANDSET, kind, signed[0], None, []) for kind in verdict.kinds]
    return jobs


def run_verdict(study, variants_dir, batch_size, workers=None):
    """Every verdict job, as many processes as cores: (the verdict's record, its rows per seed)."""
    jobs = verdict_jobs(study, variants_dir)
    results = run_jobs(judge_job, [(*job, study.verdict, batch_size) for job in jobs], workers)
    rows, first_failing = [], {}
    for (label, kind, *_), (kind_rows, first) in zip(jobs, results, strict=True):
        rows += [{"variant": label, "kind": kind, **row} for row in kind_rows]
        first_failing.setdefault(label, {})[kind] = first
    seeds = {label: list(recipe_seeds) for label, _, _, _, recipe_seeds in jobs}
    record = {
        "bar": as_dict(study.verdict.bar),
        "kinds": list(study.verdict.kinds),
        "max_length": study.verdict.max_length,
        "test_size": study.verdict.test_size,
        "seed": study.verdict.seed,
        "table_lengths": list(study.verdict.table_lengths),
        "variants": {
            label: standing(label, seeds[label], first_failing[label], rows, study.verdict)
            for label in first_failing
        },
    }
    return record, rows


def standing(label, seeds, first_failing, rows, verdict):
    """One row of the verdict: its reach (every kind at the bar up to it), the kind that fails first,
    whether it meets the bar (and is one the verdict may judge), and at the table's lengths each
    kind's mean and lowest seed, as trained and (signed models) by the hand-set readout."""
    failing = {k: n for k, n in first_failing.items() if n is not None}
    first = min(failing.values(), default=None)
    reach = verdict.bar.lengths[1] if first is None else first - 1
    table = {}
    for decoder in (TRAINED, READOUT):
        at = {}
        for kind in first_failing:
            for n in verdict.table_lengths:
                values = [
                    r["seq_acc"]
                    for r in rows
                    if (r["variant"], r["kind"], r["decoder"], r["length"]) == (label, kind, decoder, n)
                ]
                if values:
                    at.setdefault(kind, {})[str(n)] = {
                        "mean": statistics.fmean(values),
                        "lowest": min(values),
                    }
        if at:
            table[decoder] = at
    judged = label != HANDSET and len(seeds) >= verdict.bar.min_seeds
    return {
        "seeds": seeds,
        "trained": label != HANDSET,
        "first_failing": first_failing,
        "fails_first_on": sorted(k for k, n in failing.items() if n == first),
        "reach": reach,
        "meets_bar": judged and first is None,
        "judged": judged,
        "table": table,
    }

"""The length study's verdict (stage `verdict`): the variants of study.verdict.variants, each seed
of each as its variant stage trained it, tested at lengths 1..study.verdict.max_length on the three
kinds of input of pipeline/study/verdict_sets.py, drawn from the verdict's own seed.

For each kind, every length is tested from 1 until the first at which the seeds miss the bar (their
mean below its accuracy, or one seed below its floor); beyond it, only the table's lengths
(study.verdict.table_lengths). A length passes only if every kind passes, so a variant's reach is
one less than the shortest first failure over the kinds.

Each row is exact when every teacher-forced argmax is right, which is exactly when greedy decoding
sorts it (pipeline/study/forced.py): one forward a row instead of one a token.

Beside them, what training adds to the prior: the signed architecture set by hand, untrained
(pipeline/study/signed_handset.py), a row of its own that is never the verdict; for each trained
signed model at the table's lengths, its count decoded by a hand-set readout
(pipeline/study/readout.py); each judged recipe beside its controls (pipeline/study/controls.py);
and, where a model's step has a finite state, a certificate for every length
(pipeline/study/certificate.py).
"""

import statistics

import torch

from pipeline.core.decoding import accuracy_by_length, sorted_tests
from pipeline.infra.errors import DataError
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import set_up_worker
from pipeline.model.checkpoint import checkpoint_path
from pipeline.params.rules import as_dict
from pipeline.study.bar import at_the_bar, bar_lengths
from pipeline.study.certificate import LONG_LENGTHS, certify, has_finite_state
from pipeline.study.controls import (
    CONTROL_INITS,
    control_job,
    control_jobs,
    controls_record,
    coverage_job,
    coverage_jobs,
)
from pipeline.study.forced import forced_greedy
from pipeline.study.model import built_for, load_model
from pipeline.study.options import attention_kinds
from pipeline.study.readout import handset_readout_forced
from pipeline.study.signed_handset import signed_handset_fits, signed_handset_model
from pipeline.study.verdict_rows import HANDSET, READOUT, TRAINED
from pipeline.study.verdict_sets import verdict_set

CERTIFIED_TOGETHER = 4  # seeds a certificate job holds: short jobs that fill the cores at the end


def reads_signed_count(config):
    return attention_kinds(config.attention)[2] == "signed"


def missing_checkpoints(folder, seeds):
    """The first of `seeds` whose checkpoint the variant stage has not written, or None."""
    return next((s for s in seeds if not checkpoint_path(folder, s).exists()), None)


def judge_kind(label, models, kind, verdict, batch_size, with_readout, only=None):
    """One kind of input for `models` ({seed: model}): each seed's exact sequences at every length
    until the first that misses the bar, then at the table's lengths (`only`: at those lengths
    alone), and with `with_readout` the hand-set readout's at the table's lengths. Returns
    (rows {decoder, seed, length, seq_acc}, the first failing length or None)."""
    rows, first_failing = [], None
    readable = min(m.longest_source for m in models.values())  # built for as far as they read
    for n in range(1, verdict.max_length + 1):
        in_table = n in verdict.table_lengths
        if only is not None and n not in only:
            continue
        if n > readable:  # positions that end here: no length beyond is sorted
            if first_failing is None and n in bar_lengths(verdict.bar):
                first_failing = n
                print(f"verdict {label} {kind}: its positions read up to length {readable}", flush=True)
            break
        if first_failing is not None and not in_table:
            continue
        tests = sorted_tests({n: verdict_set(kind, n, verdict.test_size, verdict.seed)})
        decoders = {
            TRAINED: forced_greedy,
            **({READOUT: handset_readout_forced} if with_readout and in_table else {}),
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


def judge_job(label, kind, config, folder, seeds, only, verdict, batch_size):
    """Worker: one variant (or the hand-set row, `folder` None) on one kind of input."""
    set_up_worker("cpu")
    if folder is None:
        models = {HANDSET: signed_handset_model(config)}
    else:
        models = {str(s): load_model(checkpoint_path(folder, s))[0] for s in seeds}
    models = {s: built_for(m, verdict.max_length) for s, m in models.items()}
    with_readout = folder is not None and reads_signed_count(config)
    with torch.no_grad():
        return judge_kind(label, models, kind, verdict, batch_size, with_readout, only)


def certify_job(label, config, folder, seeds, verdict):
    """Worker: the certificate of each of `seeds` of one variant (or of the hand-set model, `folder`
    None): [(seed, certificate)]."""
    set_up_worker("cpu")
    models = (
        {HANDSET: signed_handset_model(config)}
        if folder is None
        else {str(s): load_model(checkpoint_path(folder, s))[0] for s in seeds}
    )
    done = []
    for seed, model in models.items():
        done.append((seed, certify(built_for(model, max(LONG_LENGTHS)), verdict.kinds, verdict.seed)))
        row = done[-1][1]
        print(
            f"verdict {label} seed {seed}: {row['wrong_states']} of {row['states']} states wrong, smallest "
            f"margin {row['smallest_margin']:.2f}, long inputs within {row['largest_distance']:.1e}",
            flush=True,
        )
    return done


def certificate_jobs(study, variants_dir):
    """(variant, config, folder, seeds) for each verdict variant whose step has a finite state, a few
    seeds a job, and for the hand-set model of that architecture (folder None)."""
    jobs = []
    for name in study.verdict.variants:
        config, recipe, _ = study.recipes[name]
        if has_finite_state(config):
            seeds = list(recipe.seeds)
            jobs += [
                (name, config, f"{variants_dir}/{name}", seeds[i : i + CERTIFIED_TOGETHER])
                for i in range(0, len(seeds), CERTIFIED_TOGETHER)
            ]
            if signed_handset_fits(config):
                jobs.append((name, config, None, []))
    return jobs


def verdict_jobs(study, variants_dir, sampled_every_length=()):
    """(label, kind, config, checkpoints folder, seeds, the only lengths sampled or None) for each
    verdict variant and kind, and for the hand-set signed count where a verdict variant has that
    architecture. A variant whose step has a finite state is sampled at the table's longest length
    alone, a check of its certificate, which speaks for every length, unless it is named in
    `sampled_every_length`; the hand-set row at the table's lengths (and uniform digits at every
    length the study ranks by)."""
    verdict, jobs = study.verdict, []
    for name in verdict.variants:
        config, recipe, _ = study.recipes[name]
        folder = f"{variants_dir}/{name}"
        missing = missing_checkpoints(folder, recipe.seeds)
        if missing is not None:
            raise DataError(
                f"{checkpoint_path(folder, missing)} not found: run `dvc repro variant@{name}` first"
            )
        certified = has_finite_state(config) and name not in sampled_every_length
        only = (max(verdict.table_lengths),) if certified else None
        jobs += [(name, kind, config, folder, list(recipe.seeds), only) for kind in verdict.kinds]
    # the hand-set row where a judged variant's architecture is the construction's (not at every width)
    signed = [study.recipes[n][0] for n in verdict.variants if signed_handset_fits(study.recipes[n][0])]
    if signed:
        # at the table's lengths, and on uniform digits at every length the study ranks by, which the
        # ladder figure draws: the controls set it beside the trained models at their lengths
        ranked = (*range(1, study.max_length + 1), *verdict.table_lengths)  # the ladder's, on uniform
        jobs += [
            (
                HANDSET,
                kind,
                signed[0],
                None,
                [],
                ranked if kind == "uniform" else tuple(verdict.table_lengths),
            )
            for kind in verdict.kinds
        ]
    return jobs


def run_job(function, *args):
    """Worker: one job of any kind, so that every kind shares one pool of processes."""
    return function(*args)


def run_verdict(study, variants_dir, batch_size, workers=None):
    """Every verdict job, as many processes as cores: (the verdict's record, its rows per seed, the
    controls' rows, the certificates' rows). A variant with a seed its certificate does not cover is
    then sampled at every length, as any other."""
    certified = certificate_jobs(study, variants_dir)
    judged = verdict_jobs(study, variants_dir)
    controlled = control_jobs(study, variants_dir, batch_size)
    # the longest first (the sampled verdicts, then the controls), the certificates' short jobs last,
    # so that the cores finish together
    covered = coverage_jobs(study)
    results = run_jobs(
        run_job,
        [(judge_job, *job, study.verdict, batch_size) for job in judged]
        + [(control_job, *job) for job in controlled]
        + [(certify_job, *job, study.verdict) for job in certified]
        + [(coverage_job, *job) for job in covered.values()],
        workers,
    )
    done_judged = results[: len(judged)]
    controls = [row for rows in results[len(judged) : len(judged) + len(controlled)] for row in rows]
    done_certified = results[len(judged) + len(controlled) : len(results) - len(covered)]
    coverage = dict(zip(covered, results[len(results) - len(covered) :], strict=True))
    certificates = [
        {"variant": name, "weights": "trained" if folder else "handset", "seed": seed, **row}
        for (name, _, folder, _), done in zip(certified, done_certified, strict=True)
        for seed, row in done
    ]
    uncovered = sorted(
        {r["variant"] for r in certificates if r["weights"] == "trained" and not r["certified"]}
    )
    if uncovered:  # sampled at every length after all
        print(
            f"verdict: {', '.join(uncovered)} not certified for every seed: sampled at every length",
            flush=True,
        )
        again = [job for job in verdict_jobs(study, variants_dir, uncovered) if job[0] in uncovered]
        redone = run_jobs(run_job, [(judge_job, *job, study.verdict, batch_size) for job in again], workers)
        kept = [(job, done) for job, done in zip(judged, done_judged, strict=True) if job[0] not in uncovered]
        judged, done_judged = [j for j, _ in kept] + again, [d for _, d in kept] + redone
    rows, first_failing = [], {}
    for (label, kind, *_), (kind_rows, first) in zip(judged, done_judged, strict=True):
        rows += [{"variant": label, "kind": kind, **row} for row in kind_rows]
        first_failing.setdefault(label, {})[kind] = first
    seeds = {label: list(recipe_seeds) for label, _, _, _, recipe_seeds, _ in judged}
    by_certificate = certificates_record(certificates)
    record = {
        "bar": as_dict(study.verdict.bar),
        "kinds": list(study.verdict.kinds),
        "max_length": study.verdict.max_length,
        "test_size": study.verdict.test_size,
        "seed": study.verdict.seed,
        "table_lengths": list(study.verdict.table_lengths),
        "variants": {
            label: standing(
                label, seeds[label], first_failing[label], rows, study.verdict, by_certificate.get(label)
            )
            for label in first_failing
        },
        "certificates": by_certificate,
        "controls": controls_record(controls),
        "control_seeds": {
            name: list(study.recipes[name][1].seeds[:CONTROL_INITS]) for name in study.verdict.variants
        },
        "coverage": coverage,
    }
    return record, rows, controls, certificates


def certificates_record(certificates):
    """{variant: {weights: whether every seed is certified, how many are, the smallest margin and the
    largest distance over them}}."""
    record = {}
    for row in certificates:
        record.setdefault(row["variant"], {}).setdefault(row["weights"], []).append(row)
    return {
        variant: {
            weights: {
                "seeds": len(rows),
                "certified": sum(r["certified"] for r in rows),
                "every_seed_certified": all(r["certified"] for r in rows),
                "states": rows[0]["states"],
                "smallest_margin": min(r["smallest_margin"] for r in rows),
                "largest_distance": max(r["largest_distance"] for r in rows),
                "long_lengths": rows[0]["long_lengths"],
            }
            for weights, rows in by_weights.items()
        }
        for variant, by_weights in record.items()
    }


def standing(label, seeds, first_failing, rows, verdict, certificate=None):
    """One row of the verdict: its reach (every kind at the bar up to it), the kind that fails first,
    whether it meets the bar (and is one the verdict may judge), and at the table's lengths each
    kind's mean and lowest seed, as trained and (signed models) by the hand-set readout. Where every
    seed is certified (`certificate`, certificates_record's), the reach is the certificate's: every
    length, which the bar's longest stands for; the lengths sampled still count against it."""
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
        # where the reach comes from: a certificate, every length sampled, or (the hand-set row) the
        # lengths sampled alone, which say nothing of the lengths between them
        "reach_from": (
            "certificate"
            if certified_everywhere(certificate)
            else "lengths_sampled"
            if label == HANDSET
            else "sampled"
        ),
        "table": table,
    }


def certified_everywhere(certificate):
    return bool(certificate) and certificate.get("trained", {}).get("every_seed_certified", False)

"""What training adds, beside its controls: each recipe the verdict judges, as three sets of weights
of the same architecture, on the verdict's own sequences (pipeline/study/verdict_sets.py):

    untrained   the starting weights of the recipe's first CONTROL_INITS seeds, as training drew them
    handset     the construction of pipeline/study/signed_handset.py (signed counts) or
                pipeline/study/counting_sort.py (sums), where the architecture has one
    trained     the same seeds as their variant stage trained them: each seed before and after
                (the verdict's table holds every seed)

each decoded by its own layers and, where the cross-attention is a count the hand-set readout can
read (pipeline/study/readout.py), by that readout too: a readout that sorts the untrained model as
well as the trained one says the count is the architecture's, not training's. Beside them, the
training rows' coverage of the states a finite-state step can be in (pipeline/study/certificate.py).
"""

import statistics

import numpy as np
import torch

from pipeline.core.decoding import accuracy_by_length, sorted_tests
from pipeline.infra.errors import ConfigError
from pipeline.infra.workers import set_up_worker
from pipeline.model.checkpoint import checkpoint_path
from pipeline.study.certificate import coverage, has_finite_state
from pipeline.study.counting_sort import counting_sort_model
from pipeline.study.forced import forced_greedy
from pipeline.study.model import built_for, load_model
from pipeline.study.options import attention_kinds
from pipeline.study.params import check_handset_fits
from pipeline.study.readout import handset_readout_forced
from pipeline.study.sets import training_set
from pipeline.study.signed_handset import signed_handset_fits, signed_handset_model
from pipeline.study.variant import STARTS
from pipeline.study.verdict_rows import READOUT, TRAINED
from pipeline.study.verdict_sets import verdict_set
from pipeline.tokens import DIGITS

CONTROL_INITS = 3  # seeds a recipe's controls read: their starting weights, and the same seeds trained
WEIGHTS = ("untrained", "handset", "trained")
READABLE = ("signed", "signed_owed")  # cross-attentions whose count the hand-set readout solves for


def control_lengths(data, verdict):
    """Inside training (half its longest length, and the longest), just past it and far past it (the
    verdict's table's first and last lengths)."""
    longest, table = max(data.train_lengths), verdict.table_lengths
    return sorted({longest // 2, longest, min(table), max(table)})


def sums_handset_fits(config):
    try:
        check_handset_fits(config)
    except ConfigError:
        return False
    return True


def handset_of(config):
    """The architecture of `config` set by hand, or None where no construction fits it."""
    if signed_handset_fits(config):
        return signed_handset_model(config)
    if not sums_handset_fits(config):
        return None
    with torch.random.fork_rng():
        return counting_sort_model(config)


def untrained_models(config, recipe):
    """{seed: the model that seed's training started from} for the recipe's first CONTROL_INITS."""
    models = {}
    with torch.random.fork_rng():
        for seed in recipe.seeds[:CONTROL_INITS]:
            torch.manual_seed(seed)  # as the training loop builds each seed's model
            models[str(seed)] = STARTS[recipe.init](config).eval()
    return models


def control_job(name, weights, config, recipe, folder, verdict, lengths, batch_size):
    """Worker: one recipe's models of one kind of `weights` at `lengths` on every kind of input:
    rows {recipe, weights, seed, kind, length, decoder, seq_acc}."""
    set_up_worker("cpu")
    if weights == "untrained":
        models = untrained_models(config, recipe)
    elif weights == "handset":
        models = {"handset": handset_of(config)}
    else:
        models = {str(s): load_model(checkpoint_path(folder, s))[0] for s in recipe.seeds[:CONTROL_INITS]}
    decoders = {TRAINED: forced_greedy}
    if attention_kinds(config.attention)[2] in READABLE and weights != "handset":  # by hand already
        decoders[READOUT] = handset_readout_forced
    rows = []
    with torch.no_grad():
        for seed, model in models.items():
            model = built_for(model, max(lengths))
            for kind in verdict.kinds:
                tests = sorted_tests(
                    {n: verdict_set(kind, n, verdict.test_size, verdict.seed) for n in lengths}
                )
                measured, _ = accuracy_by_length(model, tests, batch_size, decoders=decoders)
                rows += [
                    {
                        "recipe": name,
                        "weights": weights,
                        "seed": seed,
                        "kind": kind,
                        "length": r["length"],
                        "decoder": r["decoder"],
                        "seq_acc": r["seq_acc"],
                    }
                    for r in measured
                ]
    means = {
        d: statistics.fmean(r["seq_acc"] for r in rows if r["decoder"] == d and r["length"] == max(lengths))
        for d in decoders
    }
    shown = ", ".join(f"{d} {100 * v:.1f} %" for d, v in means.items())
    print(f"verdict controls {name} {weights}: at length {max(lengths)}, {shown}", flush=True)
    return rows


def control_jobs(study, variants_dir, batch_size):
    """(control_job's arguments) for each judged recipe and each kind of weights it has."""
    jobs = []
    for name in study.verdict.variants:
        config, recipe, data = study.recipes[name]
        lengths = control_lengths(data, study.verdict)
        for weights in WEIGHTS:
            if weights == "handset" and not (signed_handset_fits(config) or sums_handset_fits(config)):
                continue
            folder = f"{variants_dir}/{name}"
            jobs.append((name, weights, config, recipe, folder, study.verdict, lengths, batch_size))
    return jobs


def coverage_job(data, steps, batch_size, seed):
    """Worker: how many of a finite-state step's states one recipe's training rows visit (the rows as
    its variant stage draws them), and, at each length, how many of the possible inputs they hold:
    which lengths lie inside the training data whole."""
    rows = training_set(data.train_lengths, steps * batch_size, seed, data.repeats, data.long_counts)
    lengths = sorted(set(rows["lengths"].tolist()))
    sources = {n: rows["source"][rows["lengths"] == n][:, :n] for n in lengths}
    inputs = {str(n): [len(np.unique(sources[n], axis=0)), DIGITS**n] for n in lengths}
    return coverage({n: rows["target"][rows["lengths"] == n][:, :n] for n in lengths}) | {"inputs": inputs}


def coverage_jobs(study):
    """{recipe: coverage_job's arguments} for each judged recipe whose step has a finite state: the
    states are the step's only there."""
    jobs = {}
    for name in study.verdict.variants:
        config, recipe, data = study.recipes[name]
        if has_finite_state(config):
            jobs[name] = (data, recipe.steps, recipe.batch_size, study.seed)
    return jobs


def controls_record(rows):
    """{recipe: {weights: {decoder: {length: {mean, lowest}}}}}: over every kind and seed of the
    weights (the lowest one seed's on one kind)."""
    record = {}
    for r in rows:
        at = record.setdefault(r["recipe"], {}).setdefault(r["weights"], {}).setdefault(r["decoder"], {})
        at.setdefault(str(r["length"]), []).append(r["seq_acc"])
    return {
        recipe: {
            weights: {
                decoder: {n: {"mean": statistics.fmean(v), "lowest": min(v)} for n, v in by_length.items()}
                for decoder, by_length in by_decoder.items()
            }
            for weights, by_decoder in by_weights.items()
        }
        for recipe, by_weights in record.items()
    }

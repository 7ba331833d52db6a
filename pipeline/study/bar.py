"""The bar and how the study's variants stand against it, and which of the search's rows the study
takes: a variant's standing (how far from the bar's first length it sorts at the bar, its worst
accuracy on the bar's lengths, its lowest seed); the rows retrained on the confirmation seeds
(study.search_seeds.confirm), the best of them by its worst seed, and the study variant that trains
that row's recipe; the seeds the study holds out. Torch-free: the search, the study, the report and
the tests read it."""

import dataclasses
import statistics

from pipeline.params.rules import as_dict
from pipeline.study.options import uses_sigmoid_bias
from pipeline.study.params import StudyParams, StudyTrainParams

# ------------------------------------------------------------------------------------ standing


def bar_lengths(bar):
    low, high = bar.lengths
    return range(low, high + 1)


def at_the_bar(accuracies, bar):
    """Whether one length is sorted at the bar: the mean over seeds at least the bar's accuracy and no
    seed below its floor."""
    return statistics.fmean(accuracies) >= bar.accuracy and min(accuracies) >= bar.seed_floor


def reach(seq_acc, bar):
    """The longest L with every length from the bar's first to L at the bar, from `seq_acc` ({length:
    exact sequences, one per seed}); one less than the bar's first length where that one is not."""
    longest = bar_lengths(bar).start - 1
    while longest + 1 in seq_acc and at_the_bar(seq_acc[longest + 1], bar):
        longest += 1
    return longest


def row_reach(row, bar):
    """`reach` of one of the search's rows, from its accuracy ({seed: {length: ...}}, keys as text):
    recomputed, so a row recorded under an earlier rule reads as the study's variants do."""
    by_seed = row.get("accuracy") or {}
    if not by_seed:
        return row["reach"]  # a failed row: it sorts nothing
    lengths = set.intersection(*(set(by_length) for by_length in by_seed.values()))
    return reach({int(n): [by_seed[s][n] for s in by_seed] for n in lengths}, bar)


def standing(row):
    """The key to rank by, from a variant's row of the study's bar table: whether it meets the bar (a
    variant on fewer seeds than the bar asks for does not, however well they sort), the lengths it
    sorts at the bar, then its worst accuracy on the bar's lengths."""
    return bool(row["meets_bar"]), row["bar_up_to_length"], row["bar_min_seq_acc"]


def best_variant(by_variant, variants):
    """The best of `variants`, from {variant: its row of the bar table}."""
    return max(variants, key=lambda v: standing(by_variant[v]))


def bar_standing(seq_acc, seeds, bar):
    """One variant against the bar (study.bar), from `seq_acc` ({length: exact sequences, one per
    seed} at the lengths it was tested on) and its number of seeds: the worst of the bar's lengths,
    the lowest seed there, whether it clears the bar, how far it sorts at the bar, and the mean beyond."""
    means = {n: statistics.fmean(values) for n, values in sorted(seq_acc.items())}
    within = bar_lengths(bar)
    worst = min((n for n in means if n in within), key=means.get)
    floor = min((a for n in means if n in within for a in seq_acc[n]), default=0.0)  # any one seed's
    tested_enough = set(within) <= set(means) and seeds >= bar.min_seeds
    meets = tested_enough and means[worst] >= bar.accuracy and floor >= bar.seed_floor
    beyond = [means[n] for n in means if n > within.stop - 1]
    return {
        "bar_min_seq_acc": means[worst],
        "bar_worst_length": worst,
        "bar_min_seed_seq_acc": floor,
        "meets_bar": meets,
        "bar_up_to_length": reach(seq_acc, bar),
        "mean_seq_acc_beyond_bar": statistics.fmean(beyond) if beyond else None,
    }


# ------------------------------------------------------------------------- the search's choice


# what a recipe leaves out where it is off (at its declared default): the recipe recorded before the
# option existed
OFF = {
    f.name: f.default for f in dataclasses.fields(StudyTrainParams) if f.default is not dataclasses.MISSING
}


def recipe_of(study: StudyParams, name):
    """What a row or a study variant trains: everything that decides its result (the sigmoid's bias
    only where some attention is a sigmoid, the count hint only where it is on; not the seeds, which
    each seed's result stands for)."""
    config, recipe, data = study.recipes[name]
    model = as_dict(config)
    if not uses_sigmoid_bias(model["attention"]):
        del model["sigmoid_bias"]
    return {
        "model": model,
        "train": {k: v for k, v in as_dict(recipe).items() if k != "seeds" and OFF.get(k, "on") != v},
        "train_lengths": list(data.train_lengths),
        "repeats": data.repeats,
        **({"long_counts": data.long_counts} if data.long_counts else {}),  # where on: as recorded before
        "test": {"max_length": study.max_length, "test_size": study.test_size, "seed": study.seed},
    }


def study_seeds(study: StudyParams):
    """Every seed the study's variants train (study.train.seeds and any a variant names for itself)."""
    return {s for _, recipe, _ in study.recipes.values() for s in recipe.seeds}


def held_out(study: StudyParams):
    """Whether the study's seeds are held out: none of them is one of the search's seeds."""
    return not study_seeds(study) & {*study.search_seeds.screen, *study.search_seeds.confirm}


def confirmed(rows, seeds):
    """The search's rows trained on exactly the confirmation `seeds`, none of them failed."""
    return [r for r in rows if r["seeds"] == list(seeds) and not r.get("failed")]


def search_rank(row):
    """How the search ranks a row, a screen or a confirmation: first how far it sorts all three kinds
    of input at the bar (a row tested on uniform digits alone ranks below every row tested on the
    three: the stricter test decides once a row has taken it); among equals, its worst seed at the
    bar's lengths, how far it sorts uniform digits at the bar, then its mean at 40."""
    return row.get("kinds_reach", -1), row["min_seed"], row["reach"], row["acc_40"] or 0.0


def best_confirmed(rows, seeds):
    """The confirmed row that ranks highest (search_rank; the first of equals), or None."""
    found = confirmed(rows, seeds)
    return max(found, key=search_rank) if found else None


def as_trained(recipe):
    """A row's recipe less the kinds it was also tested on (search.row_recipe), which a study
    variant's recipe does not name: the verdict tests every variant on them."""
    test = {k: v for k, v in recipe["test"].items() if k != "kinds"}
    return {**recipe, "test": test}


def without_steps(recipe):
    return {**recipe, "train": {k: v for k, v in recipe["train"].items() if k != "steps"}}


def chosen_variant(study: StudyParams, rows):
    """(the best confirmed row, the name of the study variant that trains its recipe or None): the
    same recipe, or the same but for its steps, which the study may cut where its loss curve is flat
    (confirmation says so)."""
    best = best_confirmed(rows, study.search_seeds.confirm)
    if best is None:
        return None, None
    wanted = as_trained(best["recipe"])
    same = [v for v in study.variants if recipe_of(study, v) == wanted]
    steps_apart = [v for v in study.variants if without_steps(recipe_of(study, v)) == without_steps(wanted)]
    return best, next(iter(same + steps_apart), None)


def confirmation(study: StudyParams, rows):
    """What the report says of the choice: the best confirmed row, the study variant that trains it
    (None where none does) with its steps and the row's, the confirmation seeds, the study's seeds
    and whether they are held out."""
    row, variant = chosen_variant(study, rows)
    seeds = {"seeds": list(study.search_seeds.confirm), "held": sorted(study_seeds(study))}
    steps = {
        "steps": study.recipes[variant][1].steps if variant else None,
        "row_steps": row["recipe"]["train"]["steps"] if row else None,
    }
    return {"row": row, "variant": variant, **seeds, **steps, "held_out": held_out(study)}

"""Which of the search's rows the study takes, and on which seeds it judges it: the seeds the study
holds out, the rows retrained on the confirmation seeds (study.search_seeds.confirm), the best of
them by its worst seed on the bar's lengths, and the study variant that trains that row's recipe.
Torch-free: the search, the study, the report and the tests read it."""

from pipeline.core.params import Params
from pipeline.core.variants import variant_data, variant_recipe
from pipeline.infra.rules import as_dict
from pipeline.model.options import uses_sigmoid_bias

OFF = ("count_hint", 0.0)  # a recipe without the hint is the recipe recorded before it existed


def recipe_of(params: Params, name):
    """What a row or a study variant trains: everything that decides its result (the sigmoid's bias
    only where some attention is a sigmoid, the count hint only where it is on; not the seeds, which
    each seed's result stands for)."""
    config, recipe, lengths = variant_recipe(params, name)
    model = as_dict(config)
    if not uses_sigmoid_bias(model["attention"]):
        del model["sigmoid_bias"]
    s = params.study
    return {
        "model": model,
        "train": {k: v for k, v in as_dict(recipe).items() if k != "seeds" and (k, v) != OFF},
        "train_lengths": list(lengths),
        "repeats": variant_data(params, name).repeats,
        "test": {"max_length": s.max_length, "test_size": s.test_size, "seed": s.seed},
    }


def study_seeds(params: Params):
    """Every seed the study's variants train (study.train.seeds and any a variant names for itself)."""
    return {s for name in params.study.variants for s in variant_recipe(params, name)[1].seeds}


def held_out(params: Params):
    """Whether the study's seeds are held out: none of them is one of the search's seeds."""
    return not study_seeds(params) & {*params.study.search_seeds.screen, *params.study.search_seeds.confirm}


def confirmed(rows, seeds):
    """The search's rows trained on exactly the confirmation `seeds`, none of them failed."""
    return [r for r in rows if r["seeds"] == list(seeds) and not r.get("failed")]


def best_confirmed(rows, seeds):
    """The confirmed row whose worst seed at the bar's lengths is highest (the first of equals), or None."""
    found = confirmed(rows, seeds)
    return max(found, key=lambda r: r["min_seed"]) if found else None


def chosen_variant(params: Params, rows):
    """(the best confirmed row, the name of the study variant that trains its recipe or None)."""
    best = best_confirmed(rows, params.study.search_seeds.confirm)
    if best is None:
        return None, None
    same = [v for v in params.study.variants if recipe_of(params, v) == best["recipe"]]
    return best, (same[0] if same else None)


def confirmation(params: Params, rows):
    """What the report says of the choice: the best confirmed row, the study variant that trains it
    (None where none does), the confirmation seeds, the study's seeds and whether they are held out."""
    row, variant = chosen_variant(params, rows)
    seeds = {"seeds": list(params.study.search_seeds.confirm), "held": sorted(study_seeds(params))}
    return {"row": row, "variant": variant, **seeds, "held_out": held_out(params)}

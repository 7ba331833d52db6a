"""What a study variant trains with, and the rules its values must keep beside the study's: the
study.model, study.train and study.data sections with the variant's positions, attention and own
values laid over them (pipeline.core.params parses the sections)."""

import dataclasses

from pipeline.infra.errors import ConfigError
from pipeline.infra.rules import as_dict
from pipeline.model.config import ModelConfig, check_config, longest_source
from pipeline.model.options import check_handset_fits


def variant_recipe(params, name):
    """What variant `name` trains with: (model config, recipe, training lengths): the study's own
    model, recipe and data with the variant's positions, attention and own values."""
    s, v = params.study, params.study.variants[name]
    config = ModelConfig(
        **{**as_dict(s.model), **v.model, "positions": v.positions, "attention": v.attention}
    )
    return config, dataclasses.replace(s.train, **v.train), variant_data(params, name).train_lengths


def variant_data(params, name):
    """How variant `name`'s training rows are drawn: study.data with its own values."""
    return dataclasses.replace(params.study.data, **params.study.variants[name].data)


def check_seed_sets(seeds):
    shared = sorted(set(seeds.screen) & set(seeds.confirm))
    if shared:
        raise ConfigError(
            f"study.search_seeds: seed {shared[0]} is in both screen and confirm: a confirmation needs "
            "seeds the screen did not choose by"
        )


def check_study(p):
    """The study's rules across values: the search's seed sets apart, each variant's model fits its
    lengths and its recipe its batches."""
    check_seed_sets(p.study.search_seeds)
    for name in p.study.variants:
        config, recipe, lengths = variant_recipe(p, name)
        key = f"study.variants.{name}"
        check_config(key, config, lengths)
        if max(lengths) > longest_source(config):
            raise ConfigError(
                f"{key} trains on length {max(lengths)}, beyond its max_len = {config.max_len}"
                + (" less the BOS that opens the source" if longest_source(config) < config.max_len else "")
            )
        if recipe.init == "handset":
            check_handset_fits(config, f"{key}: train.init")
        if recipe.batches == "by_length" and recipe.steps < len(lengths):
            raise ConfigError(
                f"{key}: train.steps = {recipe.steps} is too few for train.batches = by_length: each of "
                f"the {len(lengths)} training lengths needs a batch of its own (steps >= {len(lengths)}), "
                "or use mixed"
            )

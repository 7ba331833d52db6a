"""What the measures train and decode on: the training recipe at other step counts, synthetic rows."""

from dataclasses import replace

import numpy as np

from pipeline.core.data import random_sources, sorted_targets
from pipeline.core.params import Params


def synthetic_data(rows, length, seed=0):
    """Training rows as the data stage draws them (uniform digits, sorted targets), all one length."""
    source, lengths = random_sources(np.random.default_rng([seed, 9]), rows, [length])
    return {"source": source, "target": sorted_targets(source, lengths), "lengths": lengths}


def with_steps(params: Params, steps) -> Params:
    return replace(params, train=replace(params.train, steps=steps))


def training_rows(params: Params, steps):
    """Enough rows for `steps` steps of the recipe's batch size, at the first training length."""
    return synthetic_data(steps * params.train.batch_size, params.data.train_lengths[0])

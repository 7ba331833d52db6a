"""One variant of the length study (stage `variant@<name>`), trained and tested.

`python -m pipeline.stages.variant <name> --out metrics/variants/<name>.json --models
metrics/variants/<name>` trains one model per seed of the variant's recipe (the seeds together, as
many processes as cores: pipeline/core/loop.py) and the study's own model,
recipe and data (study.model, study.train, study.data) with the variant's positions, attention and
own values; tests each at every length 1..`study.max_length` its positions allow on the study's
shared test sets (pipeline.study.sets); and diagnoses it at `study.diagnosis_lengths`. Each seed's
model is kept as a checkpoint that carries its configuration (`<models>/seed_<s>.pt`, which
`python -m pipeline.tools.sort --checkpoint` reads). One stage per variant, so DVC caches each on its
own: adding a variant to `study.variants` trains that variant only.
"""

import dataclasses
import statistics
import time

import torch
from torch import nn

from pipeline.core.batching import batch_indices
from pipeline.core.loop import train
from pipeline.core.loss import training_loss
from pipeline.core.seed_axis import seed_groups
from pipeline.core.train import save_trained
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import seed_processes, set_up_worker
from pipeline.study.counting_sort import counting_sort_model
from pipeline.study.diagnosis import VARIANT_DIAGNOSIS, diagnose, gate_biases, length_accuracy
from pipeline.study.model import StudyTransformer
from pipeline.study.positions import Randomized
from pipeline.study.sets import training_set
from pipeline.tokens import IGNORE

PROGRESS_EVERY = 300  # steps between a variant's progress lines
CURVE_EVERY = 100  # steps a point of a variant's loss curve averages: how many steps its recipe needs


def start_from_counting(config):
    """The hand-set counting sort as a starting point: a constant of 10 (exact to about 16 copies of
    a digit) rather than 1,000, so that Adam's first steps do not tip every gate at once, and logits
    5 apart, near what label smoothing rewards, rather than 100."""
    return counting_sort_model(config, const=10.0, readout=5.0)


def start_from_soft_counting(config):
    """The hand-set counting sort softened: as start_from_counting, and gates sigmoid(+-4) (0.982
    and 0.018) rather than sigmoid(+-200), still exact (the two counts' leaks cancel, pipeline/study/
    counting_sort.py), and a slope training can move. Does the recipe keep an exact solution it
    starts from?"""
    return counting_sort_model(config, const=10.0, readout=5.0, gate=4.0)


STARTS = {
    "random": StudyTransformer,
    "handset": start_from_counting,
    "handset_soft": start_from_soft_counting,
}


# ------------------------------------------------------------------------------- the count hint
# An auxiliary target trained beside the sort (task hinting, Awasthi and Gupta, 2023), pointed at
# what the diagnosis finds the model miscounting. At each decoder position the model has just read
# the last digit it wrote; it must write that digit again exactly while copies of it remain. The hint
# is a linear head on the decoder's last states that regresses that number, the copies of the digit
# just written still to come; its squared error, times the hint's weight (study.train.count_hint),
# joins the sort's loss. A count read off linearly is one a longer input can make larger. The head
# serves training only: the model kept is the sort's.


def copies_to_come(tgt_in, target):
    """(B, T): at position t, how many of target[t:] equal tgt_in[t], the digit written last
    (0 after BOS, which is never a target); padded target positions count none."""
    T = target.shape[1]
    same = (target[:, None, :] == tgt_in[:, :, None]) & (target != IGNORE)[:, None, :]  # (B, t, j)
    ahead = torch.ones(T, T, dtype=torch.bool, device=target.device).triu()  # j >= t
    return (same & ahead).sum(-1).to(torch.float32)


class CountHint(nn.Module):
    """The sort's model with the hint's head beside it, trained as one: the model is registered
    first, so that its weights lead the optimiser's buffer as they do without the hint, and the head
    is drawn after it."""

    def __init__(self, model, weight):
        super().__init__()
        self.model = model
        self.head, self.weight = nn.Linear(model.config.d_model, 1), weight


def hinted_loss(hinted: CountHint, batch, label_smoothing):
    """The sort's smoothed loss plus weight x the mean squared error of the count, over the
    positions the sort's loss counts."""
    model = hinted.model
    memory = model.encode(batch.src, batch.src_mask)
    states = model.decode_states(batch.tgt_in, memory, batch.src_mask)  # (B, T, d_model)
    sort = training_loss(model.logits(states), batch.target, label_smoothing)
    counted = (batch.target != IGNORE).to(states.dtype)  # a product, not a selection: seeds train together
    # the head's one output as a product and a sum rather than a matrix product with one column,
    # whose kernel for one seed differs from its kernel for several
    count = (states * hinted.head.weight[0]).sum(-1) + hinted.head.bias[0]
    error = count - copies_to_come(batch.tgt_in, batch.target)
    return sort + hinted.weight * (error.square() * counted).sum() / counted.sum()


def train_variant(config, recipe, data, seeds, device, on_step=None):
    """`seeds` of a variant, trained together with the study's own choices: their first weights
    (random, or the counting sort), their batches (one length each, the lengths in one order for
    every seed, or mixed) and the count hint; returns the sort's models and each one's every step's
    loss."""
    build = STARTS[recipe.init]
    orders = None
    if recipe.batches == "by_length":
        rows = len(data["source"])
        orders = [batch_indices(rows, recipe.batch_size, recipe.steps, s, data["lengths"]) for s in seeds]
    if not recipe.count_hint:
        return train(config, recipe, seeds, data, device, on_step, build_model=build, orders=orders)
    hinted, losses = train(
        config,
        recipe,
        seeds,
        data,
        device,
        on_step,
        build_model=lambda c: CountHint(build(c), recipe.count_hint),
        orders=orders,
        loss_of=hinted_loss,
    )
    return [h.model for h in hinted], losses


# ------------------------------------------------------------------------------------ a variant


def train_and_test(
    config,
    recipe,
    data_params,
    variant,
    seeds,
    tests,
    data_seed,
    diagnosis_lengths,
    batch_size,
    models=None,
    kinds=None,
):
    """Worker: train `seeds` of one variant together, then test each at every length and diagnose
    it; with `models`, a folder, their checkpoints are written there; with `kinds` ({kind: {length:
    sources}}), each is also tested on each kind of input. One result a seed."""
    device = set_up_worker(recipe.device)
    size = recipe.steps * recipe.batch_size
    data = training_set(
        data_params.train_lengths, size, data_seed, data_params.repeats, data_params.long_counts
    )
    name = f"study {variant} seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"

    def on_step(step, losses, lr):
        if step % PROGRESS_EVERY == 0 or step == recipe.steps:
            shown = "  ".join(f"{v:.3f}" for v in losses)
            print(f"{name}  step {step:5d}  loss {shown}  lr {lr:.1e}", flush=True)

    start = time.perf_counter()
    trained, losses = train_variant(config, recipe, data, seeds, device, on_step)
    seconds = time.perf_counter() - start
    results = []
    for seed, model, seed_losses in zip(seeds, trained, losses, strict=True):
        model.eval().cpu()
        if models is not None:
            save_trained(
                models,
                model,
                seed,
                recipe,
                data_params.train_lengths,
                repeats=data_params.repeats,
                variant=variant,
                **({"long_counts": data_params.long_counts} if data_params.long_counts else {}),
            )
        result = {
            "seconds": seconds,
            "loss_last100_mean": statistics.fmean(seed_losses[-100:]),
            "loss_curve": loss_curve(seed_losses),
        }
        result |= tested(model, tests, diagnosis_lengths, batch_size)
        if kinds is not None:
            result["kinds"] = {kind: length_accuracy(model, sets, batch_size) for kind, sets in kinds.items()}
        results.append(result)
    return results


def loss_curve(losses):
    """The training loss, each point the mean over CURVE_EVERY steps (the last over those left)."""
    return [
        round(statistics.fmean(losses[i : i + CURVE_EVERY]), 6) for i in range(0, len(losses), CURVE_EVERY)
    ]


def tested(model, tests, diagnosis_lengths, batch_size):
    """A trained model's accuracy at every length of `tests`, its diagnosis at `diagnosis_lengths`
    and its gates' biases."""
    diagnosis = {
        str(n): {k: v for k, v in diagnose(model, tests[n]).items() if k in VARIANT_DIAGNOSIS}
        for n in diagnosis_lengths
        if n <= model.longest_source
    }
    result = {
        "accuracy": length_accuracy(model, tests, batch_size),
        "diagnosis": diagnosis,
        "gate_biases": gate_biases(model),
    }
    if isinstance(model.positions, Randomized):  # also as tested before, at positions 0, 1, 2, ...
        result["accuracy_plain_positions"] = length_accuracy(at_plain_positions(model), tests, batch_size)
    return result


def at_plain_positions(model):
    """The same weights reading the paper's sinusoids at 0, 1, 2, ...: what randomized positions
    change by drawing at test time too."""
    with torch.random.fork_rng():  # building a model draws its initial weights
        plain = StudyTransformer(dataclasses.replace(model.config, positions="sinusoidal"))
    plain.load_state_dict(model.state_dict())
    return plain.train(model.training)


def with_seeds(rows_by_seed):
    """One table of every seed's accuracy rows ({seed: rows}), the seed a column of its own."""
    return [{"seed": seed, **row} for seed, rows in rows_by_seed.items() for row in rows]


def description(config, recipe, data):
    """What a variant's record says it trained with (`variant_recipe`'s three parts), checked when
    the study gathers it."""
    return {
        "positions": config.positions,
        "attention": config.attention,
        "train_lengths": list(data.train_lengths),
        "steps": recipe.steps,
        "seeds": list(recipe.seeds),
    }


def run_variant(
    variant, config, recipe, data, tests, data_seed, diagnosis_lengths, batch_size, models_dir, workers=None
):
    """The variant's record (its recipe; its accuracy, one row a seed and length; per seed its
    diagnosis) and each seed's training time, kept apart so that the record is the same bytes on
    every run. The seeds train together, split between as many processes as cores, and each is
    tested in its process; its checkpoint goes to `models_dir` (the stage writes the folder aside
    and moves it into place)."""
    seeds = list(recipe.seeds)
    shared = (tests, data_seed, diagnosis_lengths, batch_size, models_dir)
    groups = seed_groups(seeds, workers or seed_processes(recipe.device))
    jobs = [(config, recipe, data, variant, group, *shared) for group in groups]
    done = [result for results in run_jobs(train_and_test, jobs, len(jobs)) for result in results]
    results = dict(zip(seeds, done, strict=True))
    record = {
        "variant": variant,
        **description(config, recipe, data),
        "loss_last100_mean": {str(s): r["loss_last100_mean"] for s, r in results.items()},
        "loss_curve": {"every": CURVE_EVERY, **{str(s): r["loss_curve"] for s, r in results.items()}},
        "accuracy": with_seeds({s: r["accuracy"] for s, r in results.items()}),
        "diagnosis": {str(s): r["diagnosis"] for s, r in results.items()},
        "gate_biases": {str(s): r["gate_biases"] for s, r in results.items()},
    }
    if all("accuracy_plain_positions" in r for r in results.values()):
        record["accuracy_plain_positions"] = with_seeds(
            {s: r["accuracy_plain_positions"] for s, r in results.items()}
        )
    return record, {str(s): round(r["seconds"], 1) for s, r in results.items()}

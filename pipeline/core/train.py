"""The train stage's work (lesson 10, part 3): every seed of train.seeds trained with the paper's
recipe, the seeds together in as many processes as cores (pipeline/core/loop.py); each seed's
checkpoint, step log and loss summary. An opt-in resume (train.resume_every, pipeline/core/
resume.py) continues an interrupted run to the same bytes.
"""

import json
import statistics
import time

import torch
from tqdm import tqdm

from pipeline.core.data import load_npz
from pipeline.core.loop import train
from pipeline.core.recipe import loss_floor
from pipeline.core.resume import resume_for_seeds
from pipeline.core.seed_axis import seed_groups
from pipeline.infra import files
from pipeline.infra.outputs import spread
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import seed_processes, set_up_worker
from pipeline.model.checkpoint import checkpoint_path, save_checkpoint
from pipeline.params.rules import as_dict
from pipeline.params.sections import TrainParams
from pipeline.tokens import VOCAB


def loss_summary(losses, log_every):
    """The loss at every `log_every` steps (one batch, as the lesson prints) and the last 100's mean."""
    summary = {f"loss_step_{s}": losses[s - 1] for s in range(log_every, len(losses) + 1, log_every)}
    summary["loss_final"] = losses[-1]
    summary["loss_last100_mean"] = statistics.fmean(losses[-100:])
    return summary


# ---------------------------------------------------------------------------- the train stage


def write_step_log(folder, losses, lrs):
    """Each step's loss and learning rate in dvclive's layout (plots/metrics/<name>.tsv and the last
    values in metrics.json), which `dvc plots` reads: written once when training ends, since writing
    it every step cost as much as the step itself."""
    for name, values in (("loss", losses), ("lr", lrs)):
        rows = "".join(f"{step}\t{value!r}\n" for step, value in enumerate(values))
        files.write_text(folder / "plots" / "metrics" / f"{name}.tsv", f"step\t{name}\n{rows}")
    last = {"loss": losses[-1], "lr": lrs[-1], "step": len(losses) - 1}
    files.write_text(folder / "metrics.json", json.dumps(last, indent=4) + "\n")


def train_group(config, recipe: TrainParams, train_lengths, seeds, position, data_path, models, log):
    """Worker: train `seeds` together, write their checkpoints into `models` and step logs into `log`;
    returns each seed's summary."""
    device = set_up_worker(recipe.device)
    data = load_npz(data_path, ["source", "target", "lengths"])
    name = f"seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}"
    bar = tqdm(total=recipe.steps, desc=name, position=position, disable=None, leave=True)
    start, lrs = time.perf_counter(), []

    def on_step(step, losses, lr):
        lrs.append(lr)
        bar.update()
        if step % recipe.log_every == 0 or step == recipe.steps:
            shown = "  ".join(f"{v:.3f}" for v in losses)
            bar.set_postfix(loss=shown)
            tqdm.write(f"{name}  step {step:5d}  loss {shown}  lr {lr:.1e}")

    saved = resume_for_seeds(config, recipe, seeds, len(data["source"]))
    trained, losses = train(config, recipe, seeds, data, device, on_step, resume=saved)
    bar.close()
    seconds = time.perf_counter() - start
    runs = []
    for seed, model, seed_losses in zip(seeds, trained, losses, strict=True):
        write_step_log(log / f"seed_{seed}", seed_losses, lrs)
        save_trained(models, model, seed, recipe, train_lengths)
        summary = loss_summary(seed_losses, recipe.log_every)
        runs.append({"seed": seed, "seconds": seconds, "device": device_name(device), **summary})
    if saved:
        saved.clear()  # the checkpoints in staging now hold the result
    return runs


def save_trained(models, model, seed, recipe, train_lengths, **record):
    """A trained seed's checkpoint in the folder `models`: its weights and configuration, its seed and
    recipe, the lengths it trained on, and whatever else the caller records."""
    save_checkpoint(
        checkpoint_path(models, seed),
        model,
        seed=seed,
        steps=recipe.steps,
        train=as_dict(recipe),
        train_lengths=list(train_lengths),
        **record,
    )


def device_name(device):
    """What trained: "cpu", or "cuda" and the GPU's model, which the report names (a CPU's model would
    make the report's bytes differ between machines that compute alike)."""
    return f"cuda ({torch.cuda.get_device_name()})" if device != "cpu" else "cpu"


def train_seeds(config, recipe: TrainParams, train_lengths, data_path, models, log, processes=None):
    """Every seed of `recipe`, trained together in as many processes as cores (each on one thread,
    the seeds split between them): checkpoints into the folder `models`, step logs into `log`;
    returns each seed's summary, in the order of the seeds."""
    groups = seed_groups(recipe.seeds, processes or seed_processes(recipe.device))
    jobs = [
        (config, recipe, train_lengths, group, i, data_path, models, log) for i, group in enumerate(groups)
    ]
    return [run for runs in run_jobs(train_group, jobs, len(jobs)) for run in runs]


def loss_headline(runs, label_smoothing):
    """The final loss over seeds (mean and spread), the floor label smoothing sets, and the gap."""
    floor, _, _ = loss_floor(label_smoothing, VOCAB)
    final, final_std = spread(r["loss_final"] for r in runs)
    return {
        "loss_final": final,
        "loss_final_std": final_std,
        "loss_floor": floor,
        "loss_gap_to_floor": final - floor,
    }

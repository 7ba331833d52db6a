"""The training loop (lesson 10, part 3): the paper's recipe on one model, one seed; its opt-in
resume; and the train stage's work, every seed of train.seeds side by side.

train_model is the project's one training loop: the train stage, the pre-norm comparison, the study
variants, the speed benchmark and the tests all train through it. Each seed trains on one thread
in its own process (the stages' choice), so a seed's bytes do not depend on what runs beside it.

Resume (train.resume_every > 0): DVC 3 has no checkpoints, and `persist: true` would disable its
run-cache, so a long run keeps its own periodic training state outside DVC's outputs (runs/resume/,
git-ignored): weights, Adam's moments, the losses so far and the random-number state. A run
restarted with the same parameters continues from the last saved step and ends with the same bytes
as an uninterrupted run; a state saved under other parameters is ignored. The state is removed once
training ends.
"""

import hashlib
import json
import math
import pickle
import statistics
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from pipeline.core.batching import batch_indices, make_batch
from pipeline.core.data import load_npz
from pipeline.core.loss import smoothed_loss
from pipeline.core.recipe import learning_rate, loss_floor
from pipeline.infra import files
from pipeline.infra.errors import TrainingDiverged
from pipeline.infra.outputs import spread
from pipeline.infra.workers import run_jobs, seed_workers, set_up_worker
from pipeline.model.checkpoint import checkpoint_path, save_checkpoint
from pipeline.model.transformer import Transformer
from pipeline.params.model import ModelConfig
from pipeline.params.rules import as_dict
from pipeline.params.sections import RecipeParams, TrainParams
from pipeline.tokens import VOCAB


def check_loss(loss, step, lr, first_loss):
    """Stop at the first NaN or infinite loss, or a run-away to twice the untrained model's loss,
    naming the step and the likely cause."""
    if not math.isfinite(loss) or loss > 2 * first_loss:
        raise TrainingDiverged(
            f"training diverged at step {step}: loss {loss:.4g} (learning rate {lr:.2e}); "
            "the likely cause is a learning rate too high for this model (train.lr, train.warmup)"
        )


class FlatAdam:
    """The pipeline's optimiser: Adam (torch.optim.Adam's update) over all parameters laid end to end
    in one buffer, in ATen's fused kernel.

    Adam is elementwise, so one update of the whole buffer gives the same bits as the per-parameter
    update: each parameter and its gradient become a view into `flat` and `flat.grad` (backward adds
    into them). The fused kernel is the one `torch.optim.Adam(fused=True)` calls (a test holds the
    two bit-equal). It takes its square root with the vector unit's own instruction, which is
    correctly rounded, so every x86-64 CPU computes the update alike; torch.sqrt of a float32 tensor
    goes through MKL's vector math instead, whose last bit follows MKL's branch and the CPU's vendor.
    Called directly, without torch.optim, because the Optimizer class imports torch._dynamo (1.7 s a
    process).
    """

    def __init__(self, model, recipe: RecipeParams):
        self.weights = list(model.parameters())
        sizes = [w.numel() for w in self.weights]
        self.flat = torch.nn.Parameter(torch.cat([w.detach().flatten() for w in self.weights]))
        self.flat.grad = torch.zeros_like(self.flat)
        parts = zip(self.weights, self.flat.data.split(sizes), self.flat.grad.split(sizes), strict=True)
        for w, part, part_grad in parts:
            w.data, w.grad = part.view_as(w), part_grad.view_as(w)
        self.betas, self.eps = tuple(recipe.betas), recipe.eps
        # Adam's moments and its step count (a float32 tensor, as torch.optim.Adam(fused=True) keeps it)
        self.moments = {"exp_avg": torch.zeros_like(self.flat), "exp_avg_sq": torch.zeros_like(self.flat)}
        self.count = torch.zeros((), dtype=torch.float32, device=self.flat.device)

    def zero_grad(self):
        self.flat.grad.zero_()  # the parameters' gradients are views into it: keep the buffer

    def step(self, lr):
        """One Adam update of every weight at learning rate `lr` (no weight decay, no amsgrad)."""
        self.count += 1
        torch._fused_adam_(
            [self.flat.data],
            [self.flat.grad],
            [self.moments["exp_avg"]],
            [self.moments["exp_avg_sq"]],
            [],
            [self.count],
            amsgrad=False,
            lr=lr,
            beta1=self.betas[0],
            beta2=self.betas[1],
            weight_decay=0.0,
            eps=self.eps,
            maximize=False,
        )

    def state_dict(self):
        return {**self.moments, "step": self.count}

    def load_state_dict(self, state):
        for name, moment in self.moments.items():
            moment.copy_(state[name])
        self.count.copy_(state["step"])

    def release(self):
        """Each parameter owns its storage again, as a freshly built model's does."""
        for w in self.weights:
            w.data, w.grad = w.data.clone(), None


def batch_loss(model, batch, label_smoothing):
    """One batch's loss: the sort's label-smoothed cross-entropy (section 5.4)."""
    logits = model(batch.src, batch.tgt_in, batch.src_mask)  # (B, T, vocab)
    return smoothed_loss(logits, batch.target, label_smoothing)


def restore(resume, adam: FlatAdam, seed, recipe: RecipeParams, on_step):
    """Continue from the saved state, if any: weights, Adam's moments and the random-number state.
    The replayed steps reach `on_step` again, so logs come out whole. Returns the losses so far."""
    state = resume.load() if resume else None
    if not state:
        return []
    adam.flat.data.copy_(state["flat"])
    adam.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    if state["cuda_rng"]:
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    print(f"seed {seed}: resuming from step {state['step']} ({resume.path})")
    for step, value in enumerate(state["losses"], start=1):
        if on_step:
            on_step(step, value, learning_rate(step, recipe.lr, recipe.warmup))
    return state["losses"]


def train_model(
    config: ModelConfig,
    recipe: RecipeParams,
    seed,
    data,
    device="cpu",
    on_step=None,
    resume=None,
    *,
    build_model=Transformer,
    optimizer=FlatAdam,
    order=None,
    loss_of=batch_loss,
):
    """Train one model of `config` with `recipe`; returns it and every step's loss. `on_step(step,
    loss, lr)` observes. `build_model(config)` makes the model and `optimizer(model, recipe)` its
    optimiser, an object with zero_grad(), step(lr) and release() (the speed benchmark passes
    torch.nn.Transformer of our shape and torch.optim.Adam over each parameter); `loss_of(model, batch,
    label_smoothing)` is a batch's loss. `order`: the rows of every step (default: a seeded
    permutation per pass, pipeline.core.batching.batch_indices); the length study passes its own
    (one length a batch) and its own model and loss (its count hint).

    With a `resume` (Resume, below) the state is saved every `resume.every` steps and continued
    from: the same bytes as an uninterrupted run.
    """
    if resume and (build_model is not Transformer or optimizer is not FlatAdam or loss_of is not batch_loss):
        # a saved state is keyed by the parameters alone, and holds the flat buffer's Adam moments
        raise ValueError("only the pipeline's own training (Transformer, flat Adam) saves and resumes")
    torch.manual_seed(seed)  # initial weights and dropout masks
    model = build_model(config).to(device).train()
    adam = optimizer(model, recipe)
    losses = restore(resume, adam, seed, recipe, on_step)
    done = len(losses)
    if order is None:
        order = batch_indices(len(data["source"]), recipe.batch_size, recipe.steps, seed)
    for step, rows in enumerate(order, start=1):
        if step <= done:
            continue  # trained before the interruption; the batch order itself is replayed
        # 1. the batch: decoder input = BOS + target shifted right (teacher forcing)
        batch = make_batch(data["source"][rows], data["target"][rows], data["lengths"][rows], device)
        # 2. the learning rate for this step: a pure function of the step (equation 3)
        lr = learning_rate(step, recipe.lr, recipe.warmup)
        # 3. forward and label-smoothed loss
        loss = loss_of(model, batch, recipe.label_smoothing)
        value = loss.item()
        check_loss(value, step, lr, losses[0] if losses else value)
        # 4. backward and update
        adam.zero_grad()
        loss.backward()
        adam.step(lr)
        losses.append(value)
        # 5. observe, and save the state now and then when resuming is on
        if on_step:
            on_step(step, value, lr)
        if resume and step % resume.every == 0 and step < recipe.steps:
            resume.save(step, adam.flat, adam, losses)
    adam.release()
    return model, losses


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


def train_one_seed(config, recipe: TrainParams, train_lengths, seed, position, data_path, models, log):
    """Worker: train seed `seed`, write its checkpoint into `models` and its step log into `log`."""
    device = set_up_worker(recipe.device)
    data = load_npz(data_path, ["source", "target", "lengths"])
    bar = tqdm(total=recipe.steps, desc=f"seed {seed}", position=position, disable=None, leave=True)
    start, lrs = time.perf_counter(), []

    def on_step(step, loss, lr):
        lrs.append(lr)
        bar.update()
        if step % recipe.log_every == 0 or step == recipe.steps:
            bar.set_postfix(loss=f"{loss:.3f}")
            tqdm.write(f"seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}")

    saved = resume_for_seed(config, recipe, seed, len(data["source"]))
    model, losses = train_model(config, recipe, seed, data, device, on_step, saved)
    write_step_log(log / f"seed_{seed}", losses, lrs)
    bar.close()
    seconds = time.perf_counter() - start
    save_trained(models, model, seed, recipe, train_lengths)
    if saved:
        saved.clear()  # the checkpoint in staging now holds the result
    return {"seed": seed, "seconds": seconds, **loss_summary(losses, recipe.log_every)}


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


def train_seeds(config, recipe: TrainParams, train_lengths, data_path, models, log, workers=None):
    """Every seed of `recipe` side by side, each in a worker process on one thread: checkpoints into
    the folder `models`, step logs into `log`; returns each seed's summary."""
    jobs = [
        (config, recipe, train_lengths, seed, i, data_path, models, log)
        for i, seed in enumerate(recipe.seeds)
    ]
    return run_jobs(train_one_seed, jobs, workers or seed_workers(jobs))


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


# ------------------------------------------------------------------------------------- resume

RESUME_DIR = Path("runs/resume")


def fingerprint(config, recipe, seed, rows):
    """What the training state depends on: model, recipe, data size and seed (not the device or
    how often progress is printed or saved)."""
    kept = {k: v for k, v in as_dict(recipe).items() if k not in ("device", "log_every", "resume_every")}
    # the optimiser's name: a state saved by another optimiser holds other moments
    what = {"model": as_dict(config), "train": kept, "rows": rows, "seed": seed}
    what["optimizer"] = "fused flat Adam"
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Resume:
    path: Path
    every: int
    fingerprint: str

    def save(self, step, flat, optimizer, losses):
        state = {
            "fingerprint": self.fingerprint,
            "step": step,
            "flat": flat.detach().cpu(),
            "optimizer": optimizer.state_dict(),
            "losses": list(losses),
            "rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        }
        files.write_torch(self.path, state)

    def load(self):
        """The saved state, or None when there is none or it belongs to other parameters."""
        try:
            state = torch.load(self.path, map_location="cpu", weights_only=True)
        except FileNotFoundError:
            return None
        except (RuntimeError, EOFError, OSError, pickle.UnpicklingError, zipfile.BadZipFile):
            print(f"resume: {self.path} is unreadable; starting from step 1")
            return None
        if state.get("fingerprint") != self.fingerprint:
            print(f"resume: {self.path} was saved under other parameters; starting from step 1")
            return None
        return state

    def clear(self):
        self.path.unlink(missing_ok=True)


def resume_for_seed(config, recipe, seed, rows, directory=RESUME_DIR):
    """The seed's Resume when the recipe's resume_every is set, else None."""
    if recipe.resume_every <= 0:
        return None
    return Resume(
        Path(directory) / f"seed_{seed}.pt", recipe.resume_every, fingerprint(config, recipe, seed, rows)
    )

"""Stage `train`: one model per entry of train.seeds, with the paper's recipe (lesson 10, part 3).

Each seed trains in its own process on one thread, so the seeds run side by side on a multi-core
machine and every seed's bytes are the same whatever the machine's core count. Outputs are written
to staging directories and moved into place only when every seed has finished.

train_model is the project's one training loop: the study variants, the speed benchmark and the tests
train through it too.
"""

import math
import shutil
import statistics
import time
from pathlib import Path

import torch
from tqdm import tqdm

from pipeline.core.batching import batch_indices, make_batch
from pipeline.core.data import TRAIN_PATH, load_npz
from pipeline.core.recipe import learning_rate, loss_floor, smoothed_loss
from pipeline.core.tokens import VOCAB
from pipeline.infra import files
from pipeline.infra.checkpoint import checkpoint_path, save_checkpoint
from pipeline.infra.errors import ConfigError, TrainingDiverged
from pipeline.infra.metrics import write as write_metrics
from pipeline.infra.params import Params, TrainParams, as_dict
from pipeline.infra.pool import run_jobs, seed_workers
from pipeline.infra.resume import for_seed as resume_for_seed
from pipeline.infra.stats import across_seeds
from pipeline.model.transformer import Transformer

MODELS_DIR, LOGS_DIR, METRICS_PATH = Path("models"), Path("metrics/train"), "metrics/train.json"
HEADLINE = ("loss_final", "loss_final_std", "loss_floor", "loss_gap_to_floor")


def resolve_device(name):
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device = 'cuda' but no CUDA device is available: use auto or cpu")
    return name


def check_loss(loss, step, lr, first_loss):
    """Stop at the first NaN or infinite loss, or a run-away to twice the untrained model's loss,
    naming the step and the likely cause."""
    if not math.isfinite(loss) or loss > 2 * first_loss:
        raise TrainingDiverged(
            f"training diverged at step {step}: loss {loss:.4g} (learning rate {lr:.2e}); "
            "the likely cause is a learning rate too high for this model (train.lr, train.warmup)"
        )


class FlatAdam:
    """The pipeline's optimiser: torch.optim.Adam over all parameters laid end to end in one buffer.

    Adam is elementwise, so one update of the whole buffer gives the same bits as the per-parameter
    update, in a dozen ops instead of a dozen per parameter: each parameter and its gradient become a
    view into `flat` and `flat.grad` (backward adds into them).
    """

    def __init__(self, model, tp: TrainParams, foreach=False):
        self.weights = list(model.parameters())
        sizes = [w.numel() for w in self.weights]
        self.flat = torch.nn.Parameter(torch.cat([w.detach().flatten() for w in self.weights]))
        self.flat.grad = torch.zeros_like(self.flat)
        parts = zip(self.weights, self.flat.data.split(sizes), self.flat.grad.split(sizes), strict=True)
        for w, part, part_grad in parts:
            w.data, w.grad = part.view_as(w), part_grad.view_as(w)
        self.optimizer = torch.optim.Adam([self.flat], lr=tp.lr, betas=tp.betas, eps=tp.eps, foreach=foreach)

    def zero_grad(self):
        self.flat.grad.zero_()  # the parameters' gradients are views into it: keep the buffer

    def release(self):
        """Each parameter owns its storage again, as a freshly built model's does."""
        for w in self.weights:
            w.data, w.grad = w.data.clone(), None


class ParameterAdam:
    """torch.optim.Adam over each parameter, as a user writes it: the speed benchmark's comparison."""

    def __init__(self, model, tp: TrainParams, foreach=False):
        self.weights = list(model.parameters())
        self.optimizer = torch.optim.Adam(self.weights, lr=tp.lr, betas=tp.betas, eps=tp.eps, foreach=foreach)

    def zero_grad(self):
        self.optimizer.zero_grad(set_to_none=True)

    def release(self):
        pass  # each parameter owned its storage throughout


def restore(resume, adam: FlatAdam, seed, tp: TrainParams, on_step):
    """Continue from the saved state, if any: weights, Adam's moments and the random-number state.
    The replayed steps reach `on_step` again, so logs come out whole. Returns the losses so far."""
    state = resume.load() if resume else None
    if not state:
        return []
    adam.flat.data.copy_(state["flat"])
    adam.optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    if state["cuda_rng"]:
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    print(f"seed {seed}: resuming from step {state['step']} ({resume.path})")
    for step, value in enumerate(state["losses"], start=1):
        if on_step:
            on_step(step, value, learning_rate(step, tp.lr, tp.warmup))
    return state["losses"]


def train_model(
    params: Params,
    seed,
    data,
    device="cpu",
    on_step=None,
    resume=None,
    *,
    build_model=Transformer,
    flat_adam=True,
    foreach=False,
    batches="mixed",
):
    """Train one model; returns it and the loss of every step. `on_step(step, loss, lr)` observes.

    The one training loop of the project: the train stage, the study variants, the speed benchmark
    and the tests all train through it. `build_model(params.model)` makes the model (the benchmark
    passes torch.nn.Transformer of our shape); `flat_adam=False` updates each parameter on its own,
    with `foreach` as torch.optim.Adam takes it (both only for the benchmark's comparison).
    `batches="by_length"` gives every batch rows of one length (pipeline.core.batching): on mixed
    lengths no step pays for padding, 1.20-1.27x faster a step at the lesson's size (the benchmark
    measures it); the study's variants train so (study.train.batches).

    With a `resume` (pipeline.infra.resume.Resume) the training state is saved every `resume.every`
    steps, and a saved state is continued from: the result is the same bytes as an uninterrupted run.
    """
    if resume and (build_model is not Transformer or not flat_adam):
        # a saved state is keyed by the parameters alone, and holds the flat buffer's Adam moments
        raise ValueError("only the pipeline's own training (Transformer, flat Adam) saves and resumes")
    torch.manual_seed(seed)  # initial weights and dropout masks
    tp = params.train
    model = build_model(params.model).to(device).train()
    adam = (FlatAdam if flat_adam else ParameterAdam)(model, tp, foreach)
    losses = restore(resume, adam, seed, tp, on_step)
    done = len(losses)
    by_length = data["lengths"] if batches == "by_length" else None
    order = batch_indices(len(data["source"]), tp.batch_size, tp.steps, seed, by_length)
    for step, rows in enumerate(order, start=1):
        if step <= done:
            continue  # trained before the interruption; the batch order itself is replayed
        # 1. the batch: decoder input = BOS + target shifted right (teacher forcing)
        batch = make_batch(data["source"][rows], data["target"][rows], data["lengths"][rows], device)
        # 2. the learning rate for this step: a pure function of the step (equation 3)
        lr = learning_rate(step, tp.lr, tp.warmup)
        for group in adam.optimizer.param_groups:
            group["lr"] = lr
        # 3. forward and label-smoothed loss
        logits = model(batch.src, batch.tgt_in, batch.src_mask)  # (B, T, vocab)
        loss = smoothed_loss(logits, batch.target, tp.label_smoothing)
        value = loss.item()
        check_loss(value, step, lr, losses[0] if losses else value)
        # 4. backward and update
        adam.zero_grad()
        loss.backward()
        adam.optimizer.step()
        losses.append(value)
        # 5. observe, and save the state now and then when resuming is on
        if on_step:
            on_step(step, value, lr)
        if resume and step % resume.every == 0 and step < tp.steps:
            resume.save(step, adam.flat, adam.optimizer, losses)
    adam.release()
    return model, losses


def loss_summary(losses, log_every):
    """The loss at every `log_every` steps (one batch, as the lesson prints) and the last 100's mean."""
    summary = {f"loss_step_{s}": losses[s - 1] for s in range(log_every, len(losses) + 1, log_every)}
    summary["loss_final"] = losses[-1]
    summary["loss_last100_mean"] = statistics.fmean(losses[-100:])
    return summary


def train_one_seed(params: Params, seed, position, staging: dict):
    """Worker: train seed `seed`, write its checkpoint and dvclive log under `staging`."""
    from dvclive import Live  # imported in the worker: dvclive is slow to import

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    device = resolve_device(params.train.device)
    data = load_npz(TRAIN_PATH, ["source", "target", "lengths"])
    tp = params.train
    bar = tqdm(total=tp.steps, desc=f"seed {seed}", position=position, disable=None, leave=True)
    start = time.perf_counter()
    with Live(str(staging["log"] / f"seed_{seed}"), dvcyaml=False, save_dvc_exp=False, report=None) as live:

        def on_step(step, loss, lr):
            live.log_metric("loss", loss)
            live.log_metric("lr", lr)
            live.next_step()
            bar.update()
            if step % tp.log_every == 0 or step == tp.steps:
                bar.set_postfix(loss=f"{loss:.3f}")
                tqdm.write(f"seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}")

        saved = resume_for_seed(params, seed, len(data["source"]))
        model, losses = train_model(params, seed, data, device, on_step, saved)
    bar.close()
    seconds = time.perf_counter() - start
    save_checkpoint(
        checkpoint_path(staging["models"], seed),
        model,
        seed=seed,
        steps=tp.steps,
        train=as_dict(tp),
        train_lengths=list(params.data.train_lengths),
    )
    if saved:
        saved.clear()  # the checkpoint in staging now holds the result
    return {"seed": seed, "seconds": seconds, **loss_summary(losses, tp.log_every)}


def train_all(params: Params, workers=None):
    """Train every seed, then move all outputs into place at once: all of them or none."""
    staging = {"models": files.staging_dir(MODELS_DIR), "log": files.staging_dir(LOGS_DIR)}
    jobs = [(params, seed, i, staging) for i, seed in enumerate(params.train.seeds)]
    try:
        runs = run_jobs(train_one_seed, jobs, workers or seed_workers(jobs))
        floor, _, _ = loss_floor(params.train.label_smoothing, VOCAB)
        keys = [k for k in runs[0] if k.startswith("loss")]
        metrics = {"loss_floor": floor, **across_seeds({r["seed"]: r for r in runs}, keys)}
        metrics["loss_gap_to_floor"] = metrics["loss_final"] - floor
        files.replace_dir(staging["models"], MODELS_DIR)
        files.replace_dir(staging["log"], LOGS_DIR)
        write_metrics(METRICS_PATH, metrics, HEADLINE)  # the detail in LOGS_DIR/summary.json
    finally:
        for path in staging.values():
            shutil.rmtree(path, ignore_errors=True)
    return metrics, runs

"""The training loop (lesson 10, part 3): the paper's recipe on one model, one seed.

train_model is the project's one training loop: the train stage, the pre-norm comparison, the study
variants, the speed benchmark and the tests all train through it. Each seed trains on one thread
in its own process (the stages' choice), so a seed's bytes do not depend on what runs beside it.
"""

import math
import statistics

import torch
from torch import nn

from pipeline.core.batching import batch_indices, make_batch
from pipeline.core.loss import CountHint, smoothed_loss
from pipeline.core.params import Recipe
from pipeline.core.recipe import learning_rate
from pipeline.infra.errors import TrainingDiverged
from pipeline.model.config import ModelConfig
from pipeline.model.transformer import Transformer


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

    def __init__(self, model, recipe: Recipe):
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


def batch_loss(model, batch, label_smoothing, hint=None):
    """One batch's loss: the sort's smoothed cross-entropy, or with a CountHint, the hint's loss."""
    if hint:
        return hint.loss(model, batch, label_smoothing)
    logits = model(batch.src, batch.tgt_in, batch.src_mask)  # (B, T, vocab)
    return smoothed_loss(logits, batch.target, label_smoothing)


def restore(resume, adam: FlatAdam, seed, recipe: Recipe, on_step):
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
    recipe: Recipe,
    seed,
    data,
    device="cpu",
    on_step=None,
    resume=None,
    *,
    build_model=Transformer,
    optimizer=FlatAdam,
    batches="mixed",
    count_hint=0.0,
):
    """Train one model of `config` with `recipe`; returns it and every step's loss. `on_step(step,
    loss, lr)` observes. `build_model(config)` makes the model and `optimizer(model, recipe)` its
    optimiser, an object with zero_grad(), step(lr) and release() (the speed benchmark passes
    torch.nn.Transformer of our shape and torch.optim.Adam over each parameter).
    `batches="by_length"`: each batch one length (pipeline.core.batching), so no step pays for padding,
    1.20-1.27x a step at the lesson's size (study.train.batches); `count_hint` > 0 also trains the
    study's count hint at that weight (pipeline.core.loss).

    With a `resume` (pipeline.core.resume.Resume) the state is saved every `resume.every` steps and
    continued from: the same bytes as an uninterrupted run.
    """
    if resume and (build_model is not Transformer or optimizer is not FlatAdam):
        # a saved state is keyed by the parameters alone, and holds the flat buffer's Adam moments
        raise ValueError("only the pipeline's own training (Transformer, flat Adam) saves and resumes")
    torch.manual_seed(seed)  # initial weights and dropout masks
    model = build_model(config).to(device).train()
    hint = CountHint(config.d_model, count_hint).to(device) if count_hint else None  # drawn after the model
    adam = optimizer(nn.ModuleList([model, hint]) if hint else model, recipe)
    losses = restore(resume, adam, seed, recipe, on_step)
    done = len(losses)
    by_length = data["lengths"] if batches == "by_length" else None
    order = batch_indices(len(data["source"]), recipe.batch_size, recipe.steps, seed, by_length)
    for step, rows in enumerate(order, start=1):
        if step <= done:
            continue  # trained before the interruption; the batch order itself is replayed
        # 1. the batch: decoder input = BOS + target shifted right (teacher forcing)
        batch = make_batch(data["source"][rows], data["target"][rows], data["lengths"][rows], device)
        # 2. the learning rate for this step: a pure function of the step (equation 3)
        lr = learning_rate(step, recipe.lr, recipe.warmup)
        # 3. forward and label-smoothed loss (with the count hint's share when it trains)
        loss = batch_loss(model, batch, recipe.label_smoothing, hint)
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

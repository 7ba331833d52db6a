"""The training loop (lesson 10, part 3): the paper's recipe on one model, one seed.

train_model is the readable one-model loop, the reference: the lesson's own loop gives its bytes
(tests/test_lesson_code.py); the speed benchmark and the numerics tools train through it. The
stages train the same recipe with seeds together, one batched model a process (pipeline/core/
together.py), whose step equals this loop's seed by seed up to the rounding of other kernels
(tests/test_together.py). FlatAdam, the divergence check and the batch loss serve both.
"""

import math

import torch

from pipeline.core.batching import batch_indices, make_batch
from pipeline.core.loss import smoothed_loss
from pipeline.core.recipe import recipe_rate
from pipeline.infra.errors import TrainingDiverged
from pipeline.model.transformer import Transformer
from pipeline.params.model import ModelConfig
from pipeline.params.sections import RecipeParams

RUNNING_WINDOW = 100  # steps: a loss is judged against the mean of this many before it
FAR_ABOVE = 4.0  # times that running level: a run-away, not one batch harder than the others


def check_loss(loss, step, lr, earlier, warmup):
    """Stop at the first NaN or infinite loss, or, once the warm-up and a full window are behind,
    at a loss FAR_ABOVE times the mean of the RUNNING_WINDOW losses before it (`earlier`: this
    run's losses so far), naming the step and the likely cause.

    Never against the first loss: with one length a batch, a first batch of length 1 has a loss far
    below a later batch of length 10, and early steps of a fresh model swing widely while the
    learning rate warms up. Near the label-smoothed floor (about 0.5 nats) four times the running
    level is a model back at guessing, which no healthy run visits after its warm-up.
    """
    if not math.isfinite(loss):
        reason = f"loss {loss}"
    elif step > max(warmup, RUNNING_WINDOW) and loss > FAR_ABOVE * (level := running_level(earlier)):
        reason = f"loss {loss:.4g}, {loss / level:.1f} times its running level {level:.4g}"
    else:
        return
    raise TrainingDiverged(
        f"training diverged at step {step}: {reason} (learning rate {lr:.2e}); "
        "the likely cause is a learning rate too high for this model (train.lr, train.warmup)"
    )


def running_level(losses):
    """The mean of the last RUNNING_WINDOW losses."""
    recent = losses[-RUNNING_WINDOW:]
    return math.fsum(recent) / len(recent)


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
        # decoupled weight decay (AdamW), which only the study's recipes may set; 0 keeps Adam's kernel
        self.weight_decay = getattr(recipe, "weight_decay", 0.0)
        # Adam's moments and its step count (a float32 tensor, as torch.optim.Adam(fused=True) keeps it)
        self.moments = {"exp_avg": torch.zeros_like(self.flat), "exp_avg_sq": torch.zeros_like(self.flat)}
        self.count = torch.zeros((), dtype=torch.float32, device=self.flat.device)

    def zero_grad(self):
        self.flat.grad.zero_()  # the parameters' gradients are views into it: keep the buffer

    def step(self, lr):
        """One Adam update of every weight at learning rate `lr` (no amsgrad); with a weight decay,
        AdamW's (each weight first shrunk by lr x weight_decay)."""
        self.count += 1
        update = torch._fused_adamw_ if self.weight_decay else torch._fused_adam_
        update(
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
            weight_decay=self.weight_decay,
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


def train_model(
    config: ModelConfig,
    recipe: RecipeParams,
    seed,
    data,
    device="cpu",
    on_step=None,
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
    """
    torch.manual_seed(seed)  # initial weights and dropout masks
    model = build_model(config).to(device).train()
    adam = optimizer(model, recipe)
    losses = []
    if order is None:
        order = batch_indices(len(data["source"]), recipe.batch_size, recipe.steps, seed)
    for step, rows in enumerate(order, start=1):
        # 1. the batch: decoder input = BOS + target shifted right (teacher forcing)
        batch = make_batch(data["source"][rows], data["target"][rows], data["lengths"][rows], device)
        # 2. the learning rate for this step: a pure function of the step (equation 3)
        lr = recipe_rate(step, recipe)
        # 3. forward and label-smoothed loss
        loss = loss_of(model, batch, recipe.label_smoothing)
        value = loss.item()
        check_loss(value, step, lr, losses, recipe.warmup)
        # 4. backward and update
        adam.zero_grad()
        loss.backward()
        adam.step(lr)
        losses.append(value)
        # 5. observe
        if on_step:
            on_step(step, value, lr)
    adam.release()
    return model, losses

"""The training loop (lesson 10, part 3): the paper's recipe, one model a seed, every seed of a group
at once along a seed axis (pipeline/core/seed_axis.py); one seed is the group of one. Every stage
that trains, the speed benchmark and the numerics tools train through `train`.

Each seed keeps what is its own: its initial weights, its rows of every step, its dropout masks and
random positions, its optimiser state and its losses, so a seed ends with the same bytes alone or
beside others (tests/test_together.py). The lesson's own loop is the reference a test holds this one
to (tests/test_lesson_code.py). Where each part of the recipe is written: the optimiser here
(build_optimizer), the loss in pipeline/core/loss.py, the schedule in pipeline/core/recipe.py.
"""

import math

import torch

from pipeline.core.batching import batch_indices
from pipeline.core.loss import training_loss
from pipeline.core.recipe import recipe_rate
from pipeline.core.seed_axis import SeedStack, stacked_batch
from pipeline.infra.errors import TrainingDiverged
from pipeline.model import draws
from pipeline.model.transformer import Transformer
from pipeline.params.model import ModelConfig
from pipeline.params.sections import RecipeParams

# ------------------------------------------------------------------------------ the optimiser
# Built in one place from the recipe, `build_optimizer`: changing the optimiser is an edit here alone.
# Its contract with seeds trained together: every seed's weights lie in one flat buffer, updated in
# one call, so the update must be elementwise, each weight's step reading only its own gradient and
# state. Adam and AdamW are; a clip by the global gradient norm, LAMB's per-tensor trust ratio or a
# decay by group are not, and would let the seeds mix without any error (tests/
# test_optimizer_contract.py refuses such an update).


def build_optimizer(weights, recipe: RecipeParams):
    """The recipe's optimiser over `weights` (an iterable of parameters): Adam with the paper's betas
    and epsilon (section 5.3), AdamW's decoupled weight decay where the recipe sets one (0 is Adam).
    The learning rate comes at each step (pipeline/core/recipe.py's schedule)."""
    return FlatAdam(weights, recipe.betas, recipe.eps, recipe.weight_decay)


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

    def __init__(self, weights, betas, eps, weight_decay):
        self.weights = list(weights)
        sizes = [w.numel() for w in self.weights]
        self.flat = torch.nn.Parameter(torch.cat([w.detach().flatten() for w in self.weights]))
        self.flat.grad = torch.zeros_like(self.flat)
        parts = zip(self.weights, self.flat.data.split(sizes), self.flat.grad.split(sizes), strict=True)
        for w, part, part_grad in parts:
            w.data, w.grad = part.view_as(w), part_grad.view_as(w)
        self.betas, self.eps, self.weight_decay = tuple(betas), eps, weight_decay
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


# ------------------------------------------------------------------------------ the loop

# On a GPU the step's losses are read back every READ_EVERY steps rather than every step: reading a
# value waits for the device, where the step is otherwise queued while the last one computes. A
# run that diverges is then stopped up to this many steps late, with the same message.
READ_EVERY = 100
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


def batch_loss(model, batch, label_smoothing):
    """One batch's loss: the sort's label-smoothed cross-entropy (section 5.4)."""
    logits = model(batch.src, batch.tgt_in, batch.src_mask)  # (B, T, vocab)
    return training_loss(logits, batch.target, label_smoothing)


def train(
    config: ModelConfig,
    recipe: RecipeParams,
    seeds,
    data,
    device="cpu",
    on_step=None,
    *,
    build_model=Transformer,
    orders=None,
    loss_of=batch_loss,
    resume=None,
    optimizer=build_optimizer,
):
    """Train one model of `config` with `recipe` per seed of `seeds`, all at once; returns the models
    (in the order of `seeds`) and each one's every step's loss. `on_step(step, losses, lr)` observes
    (losses: one float per seed). `orders`: each seed's rows of every step (default: a seeded
    permutation per pass, pipeline.core.batching.batch_indices; the length study passes one length a
    batch). `build_model(config)` makes a seed's model (default: the paper's Transformer) and
    `loss_of(model, batch, label_smoothing)` a batch's loss (default: the sort's); the length study
    passes its own starts and its count hint. `optimizer(weights, recipe)`: the speed benchmark's
    comparisons only. With a `resume` (pipeline.core.resume.Resume) the state is saved every
    `resume.every` steps and continued from: the same bytes as an uninterrupted run."""
    stack = SeedStack(build_model, config, seeds, device)
    adam = optimizer(stack.parameters(), recipe)
    losses = restore(resume, adam, stack, recipe, on_step)
    done = len(losses[0])
    if orders is None:
        orders = [batch_indices(len(data["source"]), recipe.batch_size, recipe.steps, s) for s in seeds]
        width = data["source"].shape[1]
    else:
        width = None
    kinds = {}  # per batch width and padding: the batched loss and the numbers a step draws
    pending = []  # (step, lr, each seed's loss) not yet read back from the device
    read_every = 1 if torch.device(device).type == "cpu" else READ_EVERY
    for step, rows_by_seed in enumerate(zip(*orders, strict=True), start=1):
        if step <= done:
            continue  # trained before the interruption; the batch order itself is replayed
        batch = stacked_batch(data, rows_by_seed, width, device)
        kind = (batch[0].shape[-1], batch[3] is None)
        if kind not in kinds:
            size = stack.numbers_drawn(loss_of, recipe.label_smoothing, batch)
            kinds[kind] = stack.batched_loss(loss_of, recipe.label_smoothing, batch[3] is not None), size
        batched_loss, size = kinds[kind]
        lr = recipe_rate(step, recipe)
        numbers = draws.step_numbers(stack.generators, size, device)
        loss = batched_loss(stack.weights, numbers, *batch)  # (S,)
        adam.zero_grad()
        loss.sum().backward()  # a seed's weights hold only its own term of the sum
        adam.step(lr)
        pending.append((step, lr, loss.detach()))
        saving = resume and step % resume.every == 0 and step < recipe.steps
        if len(pending) == read_every or step == recipe.steps or saving:
            read_losses(pending, losses, on_step, recipe.warmup)
        if saving:
            resume.save(step, adam, losses, stack.generators)
    adam.release()
    return stack.unstacked(), losses


def read_losses(pending, losses, on_step, warmup):
    """The pending steps' losses read back at once (one synchronisation on a GPU), checked, kept in
    `losses` (one list a seed) and shown to `on_step`; `pending` is emptied."""
    values = torch.stack([loss for _, _, loss in pending]).tolist()
    for (step, lr, _), step_values in zip(pending, values, strict=True):
        for seed_losses, value in zip(losses, step_values, strict=True):
            check_loss(value, step, lr, seed_losses, warmup)
            seed_losses.append(value)
        if on_step:
            on_step(step, step_values, lr)
    pending.clear()


def restore(resume, adam: FlatAdam, stack: SeedStack, recipe: RecipeParams, on_step):
    """Continue from the saved state, if any: weights, Adam's moments and each seed's generator. The
    replayed steps reach `on_step` again, so logs come out whole. Returns each seed's losses so far."""
    state = resume.load() if resume else None
    if not state:
        return [[] for _ in stack.seeds]
    adam.flat.data.copy_(state["flat"])
    adam.load_state_dict(state["optimizer"])
    for generator, saved in zip(stack.generators, state["generators"], strict=True):
        generator.set_state(saved)
    print(f"seeds {', '.join(map(str, stack.seeds))}: resuming from step {state['step']} ({resume.path})")
    for step, values in enumerate(zip(*state["losses"], strict=True), start=1):
        if on_step:
            on_step(step, list(values), recipe_rate(step, recipe))
    return [list(seed_losses) for seed_losses in state["losses"]]

"""The seed axis: several seeds of one recipe as one batched model, which the training loop
(pipeline/core/loop.py) steps, and trained models decoded as one.

Every weight has a leading seed axis. The one model's code runs unchanged under torch.func.vmap over
the stacked weights (functional_call), so every position and attention scheme and every loss that
the one model has, the batch has. A step is one dispatch of each operation for all seeds, where one
process per seed paid Python's and the dispatcher's cost once per seed. One seed alone is its model,
called directly: vmap's own cost a step (README, "Seeds trained together") buys nothing there. Its
training pass takes vmap's steps on a seed axis of one (pipeline/model/transformer.py, pipeline/core/
loss.py's training_loss), so that a seed's bytes are the same alone or beside others, and do not
depend on how many seeds a machine's cores put in a group.

Each seed keeps everything that is its own: its initial weights (built under torch.manual_seed(seed),
as the lesson builds its model), its rows of every step (its own `order`), its dropout masks and random
positions (drawn from its own generator, pipeline/model/draws.py), its Adam state (its slice of one
flat buffer: Adam is elementwise) and its losses. Every operation of a step computes each seed's
slice with the same kernel at the same shapes whatever the companions, so a seed trained alone or
beside others ends with the same bytes (tests/test_together.py holds it).

Every seed of a step reads a batch of the same width: the longest stored row when batches mix
lengths, the batch's own length when each batch holds one length, as the study's does; its lengths
then come in one order for every seed (pipeline.core.batching.batch_indices).
"""

import math

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, vmap

from pipeline.core.batching import Batch, decoder_input
from pipeline.model import draws
from pipeline.model.transformer import padding_mask
from pipeline.tokens import IGNORE


class _Loss(nn.Module):
    """One seed's loss of one batch, as a module call, so that functional_call can swap in the
    seed's weights: `loss_of(model, batch, label_smoothing)`."""

    def __init__(self, model, loss_of, label_smoothing):
        super().__init__()
        self.model, self.loss_of, self.label_smoothing = model, loss_of, label_smoothing

    def forward(self, src, tgt_in, target, src_mask, lengths):
        return self.loss_of(self.model, Batch(src, tgt_in, target, src_mask, lengths), self.label_smoothing)


def first_seeds_batch(batch):
    """The Batch of the first seed of (src, tgt_in, target, src_mask, lengths), each with its seed
    axis (src_mask None where there is none)."""
    return Batch(*(None if x is None else x[0] for x in batch))


class SeedStack:
    """The models of `seeds`, each built by `build_model(config)` under torch.manual_seed(seed), their
    weights stacked on a leading seed axis (`weights`, name -> (S, *shape)); each seed's generator
    holds the state torch's generator held after building it, as a lone model's dropout draws from.
    One seed's weights are its model's own (name -> shape), which its step calls directly."""

    def __init__(self, build_model, config, seeds, device="cpu"):
        self.seeds, self.models, self.generators = list(seeds), [], []
        self.lone = len(self.seeds) == 1  # one seed steps its model directly, without vmap
        for seed in self.seeds:
            torch.manual_seed(seed)  # initial weights, then the seed's own draws
            self.models.append(build_model(config).to(device).train())
            generator = torch.Generator(device=device)
            if device == "cpu":
                generator.set_state(torch.get_rng_state())
            else:  # a lone model's draws on the GPU come from the device's generator, seeded alike
                generator.manual_seed(seed)
            self.generators.append(generator)
        named = [dict(m.named_parameters()) for m in self.models]
        self.weights = (
            named[0]
            if self.lone
            else {name: nn.Parameter(torch.stack([n[name].detach() for n in named])) for name in named[0]}
        )

    def parameters(self):
        return iter(self.weights.values())

    def batched_loss(self, loss_of, label_smoothing, masked):
        """(weights, numbers, src, tgt_in, target, src_mask, lengths) -> each seed's loss (S,), every
        input with its seed axis first (`masked`: whether src_mask is a tensor or None); `numbers`
        are each seed's random numbers for the step (pipeline.model.draws)."""
        if self.lone:
            return self.lone_loss(loss_of, label_smoothing)
        module = _Loss(self.models[0], loss_of, label_smoothing)

        def one_seed(weights, numbers, *batch):
            named = {f"model.{name}": w for name, w in weights.items()}
            with draws.from_block(numbers):
                return functional_call(module, named, batch)

        return vmap(one_seed, in_dims=(0, 0, 0, 0, 0, 0 if masked else None, 0))

    def lone_loss(self, loss_of, label_smoothing):
        """batched_loss's function for one seed: its model called on its batch, without vmap."""
        model = self.models[0]

        def lone(_weights, numbers, *batch):
            with draws.from_block(numbers[0]):
                return loss_of(model, first_seeds_batch(batch), label_smoothing)[None]

        return lone

    def numbers_drawn(self, loss_of, label_smoothing, batch):
        """How many random numbers one seed's step draws on `batch` (src, tgt_in, target, src_mask,
        lengths, each with its seed axis): one step of the first model, its draws counted."""
        with torch.no_grad(), draws.counting() as count:
            loss_of(self.models[0], first_seeds_batch(batch), label_smoothing)
        return count.used

    def unstacked(self):
        """Each seed's model holding its trained weights, in its own storage (once the optimiser has
        let them go: a lone seed's model holds them already)."""
        if self.lone:
            return self.models
        for i, model in enumerate(self.models):
            for name, w in model.named_parameters():
                w.data = self.weights[name].data[i].clone()
        return self.models


def stacked_batch(data, rows_by_seed, width, device):
    """The seeds' batches (S, B, T) from their rows, each trimmed to `width` (None: the batches' one
    length, which every seed's batch then shares), with one padding mask for all or none."""
    lengths = np.stack([np.asarray(data["lengths"][rows]) for rows in rows_by_seed])  # (S, B)
    if width is None:
        width = int(lengths.max())
        if int(lengths.min()) != width:
            raise ValueError("seeds trained together read batches of one length at each step")
    src = np.stack([np.asarray(data["source"][rows])[:, :width] for rows in rows_by_seed])
    tgt = np.stack([np.asarray(data["target"][rows])[:, :width] for rows in rows_by_seed])
    src, tgt = (torch.as_tensor(a, dtype=torch.long, device=device) for a in (src, tgt))
    has_padding = bool((lengths < width).any())  # on the host: no wait for a GPU
    lengths = torch.as_tensor(lengths, dtype=torch.long, device=device)
    padded = torch.arange(width, device=device) >= lengths[..., None]  # (S, B, T)
    mask = padding_mask(lengths.flatten(), width).unflatten(0, lengths.shape) if has_padding else None
    tgt_in = decoder_input(tgt.flatten(0, 1)).unflatten(0, tgt.shape[:2])
    return src, tgt_in, tgt.masked_fill(padded, IGNORE), mask, lengths


# Seeds a group from which training them together pays on a CPU: vmap's fixed cost a step is about
# what one seed's step costs alone (README, "Seeds trained together").
TOGETHER_FROM = 3


def seed_groups(seeds, processes, together_from=TOGETHER_FROM):
    """`seeds` split into at most `processes` groups as even as can be, in order: each group one
    process that trains its seeds together. Where the groups would hold fewer than `together_from`
    seeds each, every seed is a group of its own instead, their processes sharing the cores: a seed
    ends with the same bytes either way, and alone it pays no vmap."""
    seeds = list(seeds)
    if processes > 1 and len(seeds) < together_from * processes:
        return [[seed] for seed in seeds]
    count = max(1, min(processes, len(seeds)))
    size = math.ceil(len(seeds) / count)
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


class ModelsTogether:
    """Trained models of one configuration decoded as one (the evaluate stage's seeds):
    `decoder(decode)` turns a one-model decoder `decode(model, src) -> tokens (B, T)` into one that
    gives every model's tokens (S, B, T).

    On a GPU the models decode at once, one batched model under vmap (`batched`): one launch of each
    operation for all. On a CPU they decode one after another: at the evaluation's 1,000 rows a
    batch the operations are large enough that dispatch costs little, and a batched product costs
    more than its models' products one by one (measured on the lesson's checkpoints: 1.18x slower
    greedy, 1.26x beam search, 1.40x teacher forcing for five together). Both give the same tokens
    (tests/test_together.py)."""

    def __init__(self, models, batched=None):
        self.models = list(models)
        device = next(self.models[0].parameters()).device
        self.batched = device.type != "cpu" if batched is None else batched
        named = [dict(m.named_parameters()) for m in self.models]
        self.weights = {name: torch.stack([n[name].detach() for n in named]) for name in named[0]}

    def decoder(self, decode):
        if not self.batched:
            return lambda _models, src: self.one_by_one(decode, src)
        module = _Decode(self.models[0], decode)

        def one_model(weights, src):
            return functional_call(module, {f"model.{name}": w for name, w in weights.items()}, (src,))

        # randomness "same": a scheme that draws at test time draws for every model what each would
        # draw alone, from the generator the test seeds by its length (seed_test_draws)
        batched = vmap(one_model, in_dims=(0, None), randomness="same")
        return lambda _models, src: batched(self.weights, src)

    def one_by_one(self, decode, src):
        """Each model's tokens, each decoded from the generator's state at the call, as alone: a
        scheme that draws at test time draws the same for each (and as much, so the generator ends
        where each model alone leaves it)."""
        start, tokens = torch.get_rng_state(), []
        for model in self.models:
            torch.set_rng_state(start)
            tokens.append(decode(model, src))
        return torch.stack(tokens)


class _Decode(nn.Module):
    """A one-model decoder as a module call, so that functional_call can swap in a model's weights."""

    def __init__(self, model, decode):
        super().__init__()
        self.model, self.decode = model, decode

    def forward(self, src):
        return self.decode(self.model, src)

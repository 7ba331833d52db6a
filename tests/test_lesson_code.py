"""The lesson's own code against the project's: the same model, schedule, training and decoding, bit for bit.

The classes and functions below are transcribed from lesson 10, "Implementarlo entero"
(/work/shared/seeds/002_2821ac794a08d866.txt): MultiHead, ffn, CapaEncoder, CapaDecoder, Transformer,
the training loop and greedy, with the lesson's Spanish names, laid out one statement a line as ruff
formats them. The lesson does not print four helpers it uses; they are filled in here:
  - V and BOS: 11 tokens, BOS = 10 (the digits are 0-9; "once filas, una por token");
  - pe(n, d): the paper's standard sinusoids (section 3.5), PE(pos, 2i) = sin(pos / 10000^(2i/d)),
    PE(pos, 2i+1) = cos(...), the rate computed as exp(-log(10000) 2i / d);
  - forma(s, warmup): the shape the README glossary gives (seeds/README.md), equation (3) scaled to
    peak at 1, min(s / warmup, sqrt(warmup / s));
  - datos(n): a batch x, y, y_in (digits, their sorted copy, BOS + y shifted right); here it serves
    the rows the project's batch order picks, so that both loops see the same batches.
The project's model differs from the lesson's in one deliberate place: its dropout draws the mask as
uniform numbers against p rather than with nn.Dropout's bernoulli_ (the same distribution, from a
kernel that computes alike on every CPU, and faster). The tests that compare train mode give the
lesson's model the project's dropout (with_our_dropout); everything else is the lesson's as printed.
"""

import dataclasses
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import LambdaLR
from torch.overrides import TorchFunctionMode

from pipeline.core.batching import batch_indices
from pipeline.core.data import random_sources, sorted_targets
from pipeline.core.decoding import greedy_cached
from pipeline.core.loss import training_loss
from pipeline.core.recipe import learning_rate
from pipeline.model.transformer import (
    DecoderLayer,
    Dropout,
    EncoderLayer,
    count_parameters,
    seed_axis_product,
)
from pipeline.model.transformer import Transformer as OurTransformer
from pipeline.params.lesson import MODEL, RECIPE
from pipeline.report.claims import load_claims
from pipeline.tokens import BOS as OUR_BOS
from pipeline.tokens import VOCAB
from tests.conftest import trained_alone

# --- the lesson's helpers it does not print ---------------------------------------------------

V, BOS = 11, 10


def pe(n, d):
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2) / d)
    p = torch.zeros(n, d)
    p[:, 0::2], p[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
    return p


def forma(s, warmup):
    return min(s / warmup, math.sqrt(warmup / s))


# --- lesson 10, part 1: attention and layers --------------------------------------------------


class MultiHead(nn.Module):
    def __init__(s, d, h):
        super().__init__()
        s.h, s.dk = h, d // h
        s.wq, s.wk, s.wv, s.wo = (nn.Linear(d, d) for _ in range(4))

    def forward(s, xq, xkv, prohibido=None):  # prohibido: True = no mirar
        B, Tq, Tk = xq.shape[0], xq.shape[1], xkv.shape[1]
        q = s.wq(xq).view(B, Tq, s.h, s.dk).transpose(1, 2)  # [B, h, Tq, dk]
        k = s.wk(xkv).view(B, Tk, s.h, s.dk).transpose(1, 2)
        v = s.wv(xkv).view(B, Tk, s.h, s.dk).transpose(1, 2)
        S = q @ k.transpose(-2, -1) / s.dk**0.5  # [B, h, Tq, Tk]
        if prohibido is not None:
            S = S.masked_fill(prohibido, float("-inf"))
        out = S.softmax(-1) @ v  # [B, h, Tq, dk]
        return s.wo(out.transpose(1, 2).reshape(B, Tq, -1))


def ffn(d, d_ff):
    return nn.Sequential(nn.Linear(d, d_ff), nn.ReLU(), nn.Linear(d_ff, d))


class CapaEncoder(nn.Module):
    def __init__(s, d, h, d_ff, p):
        super().__init__()
        s.att, s.ffn = MultiHead(d, h), ffn(d, d_ff)
        s.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(2))
        s.drop = nn.Dropout(p)

    def forward(s, x):  # post-norm, como el paper
        x = s.ln[0](x + s.drop(s.att(x, x)))
        return s.ln[1](x + s.drop(s.ffn(x)))


class CapaDecoder(nn.Module):
    def __init__(s, d, h, d_ff, p):
        super().__init__()
        s.att, s.cruzada, s.ffn = MultiHead(d, h), MultiHead(d, h), ffn(d, d_ff)
        s.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(3))
        s.drop = nn.Dropout(p)

    def forward(s, y, memoria, causal):
        y = s.ln[0](y + s.drop(s.att(y, y, causal)))  # self, con máscara
        y = s.ln[1](y + s.drop(s.cruzada(y, memoria)))  # cross-attention
        return s.ln[2](y + s.drop(s.ffn(y)))


# --- lesson 10, part 2: the model -------------------------------------------------------------


class Transformer(nn.Module):
    def __init__(s, d=32, h=4, N=2, d_ff=128, p=0.1):
        super().__init__()
        s.d, s.emb = d, nn.Embedding(V, d)  # una sola matriz
        s.register_buffer("pe", pe(64, d))  # senos del episodio 4
        s.enc = nn.ModuleList(CapaEncoder(d, h, d_ff, p) for _ in range(N))
        s.dec = nn.ModuleList(CapaDecoder(d, h, d_ff, p) for _ in range(N))
        s.drop = nn.Dropout(p)

    def entrada(s, t):  # embedding · √d + posición
        return s.drop(s.emb(t) * math.sqrt(s.d) + s.pe[: t.shape[1]])

    def codificar(s, x):
        m = s.entrada(x)
        for capa in s.enc:
            m = capa(m)
        return m  # la memoria

    def decodificar(s, y_in, memoria):
        T = y_in.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        y = s.entrada(y_in)
        for capa in s.dec:
            y = capa(y, memoria, causal)
        return y @ s.emb.weight.T  # logits: la misma matriz

    def forward(s, x, y_in):
        return s.decodificar(y_in, s.codificar(x))


# --- lesson 10, part 3: the loop (one step; the lesson runs it for paso in range(1, 1201)) ------


def paso_de_entrenamiento(m, opt, sch, datos):
    x, y, y_in = datos(64)  # ordenar 10 dígitos
    logits = m(x, y_in)  # [64, 10, 11]
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sch.step()
    return loss


# --- lesson 10, part 4: greedy decoding -------------------------------------------------------


@torch.no_grad()
def greedy(modelo, x):
    memoria = modelo.codificar(x)  # el encoder corre una vez
    y = torch.full((x.shape[0], 1), BOS)
    for _ in range(x.shape[1]):
        logits = modelo.decodificar(y, memoria)[:, -1]  # solo el último
        logits[:, BOS] = float("-inf")  # BOS nunca es salida
        y = torch.cat([y, logits.argmax(-1, keepdim=True)], dim=1)
    return y[:, 1:]  # sin el BOS


# --- the lesson's names and the project's -----------------------------------------------------

RENAMES = [  # lesson parameter name -> ours
    (r"^emb\.", "embedding."),
    (r"^enc\.", "encoder."),
    (r"^dec\.", "decoder."),
    (r"\.att\.", ".attn."),
    (r"\.cruzada\.", ".cross."),
    (r"\.ln\.(\d+)\.", r".sub.\1.ln."),
]
STEPS = 12  # training steps compared


def our_name(name):
    for pattern, replacement in RENAMES:
        name = re.sub(pattern, replacement, name)
    return name


def lesson_copy(ours):
    """The lesson's Transformer holding `ours`'s weights, in the same train/eval mode."""
    state = ours.state_dict()
    m = Transformer()
    m.load_state_dict({n: t if n == "pe" else state[our_name(n)] for n, t in m.state_dict().items()})
    return m.train(ours.training)


def with_our_dropout(m):
    """The lesson's model with each nn.Dropout replaced by the project's Dropout of the same p."""
    for parent in list(m.modules()):
        for name, child in parent.named_children():
            if isinstance(child, nn.Dropout):
                setattr(parent, name, Dropout(child.p))
    return m


def same_weights(m, ours):
    """Every lesson parameter equals its counterpart in `ours`, both lists in the same order."""
    mine, theirs = list(m.named_parameters()), list(ours.named_parameters())
    assert [our_name(n) for n, _ in mine] == [n for n, _ in theirs]
    return all(torch.equal(a, b) for (_, a), (_, b) in zip(mine, theirs, strict=True))


def sorting_data(rows, seed=0):
    """Rows of 10 random digits and their sorted copies, as the project stores a training set."""
    source, lengths = random_sources(np.random.default_rng(seed), rows, [10])
    return {"source": source, "target": sorted_targets(source, lengths), "lengths": lengths}


def sorting_batch(rows=64, length=10, seed=0):
    x = torch.randint(0, 10, (rows, length), generator=torch.Generator().manual_seed(seed))
    y = x.sort(1).values
    return x, y, torch.cat([torch.full((rows, 1), BOS), y[:, :-1]], 1)


@pytest.fixture(scope="module")
def training_data():
    return sorting_data(64 * STEPS)


@pytest.fixture(scope="module")
def project_run(training_data):
    """The project's model after STEPS steps of the training loop (seed 0), and its losses."""
    return trained_alone(MODEL, dataclasses.replace(RECIPE, steps=STEPS), 0, training_data)


@pytest.fixture(scope="module")
def writer():
    """The project's model after 60 quick steps (lr 0.005, warmup 10), in eval mode: unlike a random or
    12-step model, which writes one repeated digit, it writes varied outputs (under a second)."""
    recipe = dataclasses.replace(RECIPE, steps=60, lr=0.005, warmup=10)
    return trained_alone(MODEL, recipe, 0, sorting_data(64 * 60, seed=1))[0].eval()


# --- the tests --------------------------------------------------------------------------------


def test_same_parameters_and_initial_weights_under_the_same_seed():
    """The lesson's model and ours at the lesson's size have 59,744 parameters and start bit-for-bit
    equal."""
    assert (V, BOS) == (VOCAB, OUR_BOS)
    torch.manual_seed(0)
    m = Transformer()
    torch.manual_seed(0)
    ours = OurTransformer(MODEL)
    stated = {c["id"]: c["expected"] for c in load_claims()}  # the numbers the lesson states
    assert count_parameters(m) == count_parameters(ours) == stated["l10-params"]
    assert m.emb.weight.numel() == ours.embedding.weight.numel() == stated["l10-emb-params"]
    layers = (CapaEncoder(32, 4, 128, 0.1), EncoderLayer(32, 4, 128, 0.1))
    assert {count_parameters(capa) for capa in layers} == {stated["l10-enc-params"]}
    layers = (CapaDecoder(32, 4, 128, 0.1), DecoderLayer(32, 4, 128, 0.1))
    assert {count_parameters(capa) for capa in layers} == {stated["l10-dec-params"]}
    state, ours_state = m.state_dict(), ours.state_dict()
    assert {our_name(n) for n in state if n != "pe"} == set(ours_state)
    assert all(torch.equal(t, ours_state[our_name(n)]) for n, t in state.items() if n != "pe")
    assert same_weights(m, ours)
    assert torch.equal(m.pe, ours.positions.pe)
    torch.manual_seed(1)
    assert not same_weights(Transformer(), ours)  # another seed: other weights


def test_same_logits_in_eval_mode_and_in_train_mode_under_the_same_dropout_seed():
    """Same weights give identical logits in eval mode, and in train mode with the same dropout seed
    (the lesson's model given the project's dropout, its operations in the steps the training loop
    takes on a seed axis)."""
    torch.manual_seed(0)
    m = with_our_dropout(Transformer())
    torch.manual_seed(0)
    ours = OurTransformer(MODEL)
    x, _, y_in = sorting_batch()
    with torch.no_grad():
        evaluated = m.eval()(x, y_in)
        assert torch.equal(evaluated, ours.eval()(x, y_in))
        m.train(), ours.train()
        torch.manual_seed(7)
        with InTheSeedAxisSteps(m.emb):  # in training ours computes in the seed axis's steps
            dropped = m(x, y_in)
        torch.manual_seed(7)
        assert torch.equal(dropped, ours(x, y_in))
        assert not torch.equal(dropped, evaluated)  # dropout did act
        torch.manual_seed(8)
        assert not torch.equal(dropped, ours(x, y_in))  # and other masks give other logits


def test_lesson_schedule_is_the_recipes_learning_rate_at_every_step():
    """LambdaLR(opt, forma(s + 1, warmup=100)) sets recipe.learning_rate at each of the 1,200 steps."""
    tp = RECIPE  # the lesson's recipe: the constants its loop writes
    assert (tp.steps, tp.batch_size, tp.lr, tp.betas, tp.eps) == (1200, 64, 2e-3, (0.9, 0.98), 1e-9)
    assert (tp.warmup, tp.label_smoothing) == (100, 0.1)
    w = nn.Parameter(torch.zeros(1))
    opt = torch.optim.Adam([w], lr=2e-3, betas=(0.9, 0.98), eps=1e-9)
    sch = LambdaLR(opt, lambda s: forma(s + 1, warmup=100))  # ecuación (3)
    used = []
    for _paso in range(1, 1201):
        used.append(opt.param_groups[0]["lr"])
        opt.step()
        sch.step()
    assert used == [learning_rate(paso, tp.lr, tp.warmup) for paso in range(1, tp.steps + 1)]
    assert max(used) == used[99] == 2e-3  # the peak at step 100


LAYER_NORM_ARGS = ("input", "normalized_shape", "weight", "bias", "eps")  # as nn.LayerNorm passes them


class InTheSeedAxisSteps(TorchFunctionMode):
    """The lesson's code unchanged, four of its operations computed in the steps the training loop
    takes on a seed axis (pipeline/model/transformer.py, pipeline/core/loss.py): its linear layers and
    its tied logits h E^T as one batched product, its LayerNorm's scale and shift after the fused
    normalisation, and its cross-entropy as training_loss. Nothing else of the lesson changes."""

    def __init__(self, embedding):
        super().__init__()
        self.embedding = embedding

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.linear:
            return seed_axis_product(args[0], args[1].t(), args[2] if len(args) > 2 else kwargs.get("bias"))
        if func is F.layer_norm:
            x, shape, weight, bias, eps = {
                **dict(zip(LAYER_NORM_ARGS, args, strict=False)),
                **kwargs,
            }.values()
            return F.layer_norm(x, shape, None, None, eps) * weight + bias
        if func is F.cross_entropy:
            return training_loss(args[0][None], args[1][None], kwargs["label_smoothing"])
        if func in (torch.Tensor.matmul, torch.matmul) and args[1].is_set_to(self.embedding.weight.T):
            return seed_axis_product(args[0], args[1])
        return func(*args, **kwargs)


def lessons_batches(training_data):
    """The lesson's datos(n), reading the rows of the project's batch order (seed 0)."""
    filas = batch_indices(len(training_data["source"]), 64, STEPS, 0)

    def datos(n):
        rows = next(filas)
        assert len(rows) == n
        x = torch.as_tensor(training_data["source"][rows], dtype=torch.long)
        y = torch.as_tensor(training_data["target"][rows], dtype=torch.long)
        return x, y, torch.cat([torch.full((n, 1), BOS), y[:, :-1]], dim=1)

    return datos


def lessons_model_and_optimiser():
    """The lesson's model under the loop's seed 0 (its initial weights, then its dropout masks), with
    the project's dropout, and the lesson's Adam and schedule with the one change the pipeline makes:
    the fused kernel, whose square root every CPU rounds alike (pipeline.core.loop.FlatAdam)."""
    torch.manual_seed(0)
    m = with_our_dropout(Transformer(d=32, h=4, N=2, d_ff=128, p=0.1)).train()
    opt = torch.optim.Adam(m.parameters(), lr=2e-3, betas=(0.9, 0.98), eps=1e-9, fused=True)
    return m, opt, LambdaLR(opt, lambda s: forma(s + 1, warmup=100))  # ecuación (3)


def test_lesson_loop_and_the_training_loop_give_the_same_losses_and_weights(training_data, project_run):
    """STEPS steps of the lesson's loop, its operations in the seed axis's steps, and of the training
    loop on the same batches: the same losses and the same weights, bit for bit. So the loop draws
    the lesson's initial weights, batches, dropout masks, schedule and update; only the rounding of
    four operations differs from the lesson's literal code (the next test bounds it)."""
    ours, losses = project_run
    m, opt, sch = lessons_model_and_optimiser()
    datos = lessons_batches(training_data)
    with InTheSeedAxisSteps(m.emb):
        pérdidas = [paso_de_entrenamiento(m, opt, sch, datos).item() for _paso in range(1, STEPS + 1)]
    assert len(losses) == STEPS
    assert pérdidas == losses
    assert losses[-1] < losses[0]
    assert same_weights(m, ours)
    torch.manual_seed(0)
    assert not same_weights(Transformer(), ours)  # the weights did move from where they started


def test_lesson_step_and_the_training_loops_step_agree_within_float32_rounding(training_data):
    """The first step of the lesson's literal code and of the training loop (one seed), from the same
    weights, batch and dropout masks: the loss and every weight's gradient agree up to float32
    rounding in another order. The rule: a sum of n terms computed in two orders differs by at most
    n u times the sum of the terms' magnitudes (u = 2^-24); the longest sums are a weight's gradient
    over every row of the batch (n = B T = 640), and a gradient crosses at most 12 sublayers (2 encoder
    layers of 2, 2 decoder layers of 3, the embedding and the logits), so each weight's gradient agrees
    within 12 x 640 u of the whole gradient's norm (of the whole: a gradient whose terms cancel to 0,
    as the keys' bias under softmax, has no accuracy of its own), and the loss within 640 u of itself."""
    m, _, _ = lessons_model_and_optimiser()
    x, y, y_in = lessons_batches(training_data)(64)
    lessons = F.cross_entropy(m(x, y_in).flatten(0, 1), y.flatten(), label_smoothing=0.1)
    lessons.backward()
    built, grads = [], {}

    def build(config):
        built.append(OurTransformer(config))
        return built[-1]

    def keep_gradients(*_):  # after the step's update, before the next step zeroes them
        grads.update({n: w.grad.clone() for n, w in built[0].named_parameters()})

    _, loss = trained_alone(
        MODEL,
        dataclasses.replace(RECIPE, steps=1),
        0,
        training_data,
        on_step=keep_gradients,
        build_model=build,
    )
    u = 2.0**-24
    assert abs(lessons.item() - loss[0]) <= 640 * u * lessons.item()
    whole = torch.cat([w.grad.flatten() for w in m.parameters()]).norm()
    for (name, w), ours_name in zip(m.named_parameters(), grads, strict=True):
        assert (grads[ours_name] - w.grad).norm() <= 12 * 640 * u * whole, name


@pytest.mark.parametrize("largo", [6, 10, 14])
def test_lesson_greedy_equals_greedy_cached(writer, largo):
    """The lesson's greedy (the decoder re-run each step) writes what greedy_cached writes, 200 rows."""
    m = lesson_copy(writer)
    assert not m.training
    x = torch.randint(0, 10, (200, largo), generator=torch.Generator().manual_seed(largo))
    pred = greedy(m, x)
    assert pred.shape == (200, largo)
    assert torch.equal(pred, greedy_cached(writer, x))
    assert (pred != pred[:, :1]).any(1).float().mean() > 0.5  # most rows are not one repeated token

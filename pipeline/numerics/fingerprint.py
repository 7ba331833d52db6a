"""The numerics fingerprint: a hash of what each kind of operation the training uses computes on
this machine, at the lesson's shapes, forward and backward.

Two machines whose fingerprints agree compute every operation here to the same bits, so the same
code and parameters give them the same results; where one entry differs, the name says which
operation rounds differently (the matrix products of MKL, a vectorised kernel of ATen, a random
draw). Inputs come from NumPy's seeded generator, never from torch, so that each entry depends on
its own operation alone. The entries follow the training step in order: embedding, dropout,
attention, LayerNorm, feed-forward, loss, backward, Adam; the batched forms that seeds trained
together compute; then NumPy's own arithmetic, and a short training run end to end, one model and
seeds together.
The record made of them (one process a mode, compared and kept) is pipeline/numerics/record.py.
"""

import dataclasses
import hashlib

import numpy as np
import torch
import torch.nn.functional as F

from pipeline.core.loop import build_optimizer, train
from pipeline.core.loss import smoothed_loss
from pipeline.model.positions import sinusoidal_positions
from pipeline.params import lesson

# The lesson's training step: batch 64 of 10 digits, d_model 32, 4 heads, d_ff 128, 11 tokens.
BATCH, LENGTH, D_MODEL, HEADS, D_FF, VOCAB = 64, 10, 32, 4, 128, 11
ROWS, D_K = BATCH * LENGTH, D_MODEL // HEADS
DROPOUT = 0.1
TRAINING_STEPS = 3


def digest(*tensors):
    """The first 16 hex digits of the SHA-256 of the tensors' bytes."""
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


class Inputs:
    """Seeded float32 tensors from NumPy: the same bits on every machine."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def normal(self, *shape, grad=False):
        t = torch.from_numpy(self.rng.standard_normal(shape, dtype=np.float32))
        return t.requires_grad_(grad)

    def tokens(self, *shape, high=VOCAB):
        return torch.from_numpy(self.rng.integers(0, high, shape))


def backward(output, *inputs, rng: Inputs):
    """The gradients of `inputs` for a fixed upstream gradient of `output`'s shape: backward from
    sum(output x upstream), whose gradient at `output` is `upstream` bit for bit (1 x u = u). An
    explicit upstream gradient would do the same and import torch's symbolic shapes (1 s a process)."""
    upstream = rng.normal(*output.shape)
    return torch.autograd.grad((output * upstream).sum(), inputs)


def linear_entries(rng):
    """nn.Linear forward and backward at the three shapes of the model: the projections (32 -> 32)
    and the FFN (32 -> 128 -> 32); the weight gradient reduces over all batch x length rows."""
    out = {}
    for name, (d_in, d_out) in {
        "proj": (D_MODEL, D_MODEL),
        "ffn_up": (D_MODEL, D_FF),
        "ffn_down": (D_FF, D_MODEL),
    }.items():
        x, w, b = (
            rng.normal(ROWS, d_in, grad=True),
            rng.normal(d_out, d_in, grad=True),
            rng.normal(d_out, grad=True),
        )
        y = F.linear(x, w, b)
        gx, gw, gb = backward(y, x, w, b, rng=rng)
        out |= {
            f"linear_{name}_forward": digest(y),
            f"linear_{name}_grad_input": digest(gx),
            f"linear_{name}_grad_weight": digest(gw),
            f"linear_{name}_grad_bias": digest(gb),
        }
    return out


def attention_entries(rng):
    """Batched attention products Q K^T and weights V with their gradients, and the weights
    themselves: softmax (the paper's) and sigmoid (the length study's)."""
    q, k, v = (rng.normal(BATCH, HEADS, LENGTH, D_K, grad=True) for _ in range(3))
    scores = q @ k.transpose(-2, -1)  # (B, h, T, T)
    gq, gk = backward(scores, q, k, rng=rng)
    s = rng.normal(BATCH, HEADS, LENGTH, LENGTH, grad=True)
    weights = s.softmax(-1)
    (gs,) = backward(weights, s, rng=rng)
    gates = torch.sigmoid(s)
    (gg,) = backward(gates, s, rng=rng)
    w = rng.normal(BATCH, HEADS, LENGTH, LENGTH, grad=True)
    mixed = w @ v  # (B, h, T, d_k)
    gw, gv = backward(mixed, w, v, rng=rng)
    return {
        "attention_scores_forward": digest(scores),
        "attention_scores_backward": digest(gq, gk),
        "softmax_forward": digest(weights),
        "softmax_backward": digest(gs),
        "sigmoid_forward": digest(gates),
        "sigmoid_backward": digest(gg),
        "attention_values_forward": digest(mixed),
        "attention_values_backward": digest(gw, gv),
    }


def layer_entries(rng):
    """LayerNorm, ReLU, the label-smoothed loss (log-softmax inside) and the embedding's backward."""
    x, g, b = (
        rng.normal(BATCH, LENGTH, D_MODEL, grad=True),
        rng.normal(D_MODEL, grad=True),
        rng.normal(D_MODEL, grad=True),
    )
    y = F.layer_norm(x, (D_MODEL,), g, b)
    gx, gg, gb = backward(y, x, g, b, rng=rng)
    h = rng.normal(ROWS, D_FF, grad=True)
    r = F.relu(h)
    (gh,) = backward(r, h, rng=rng)
    logits, target = rng.normal(BATCH, LENGTH, VOCAB, grad=True), rng.tokens(BATCH, LENGTH, high=VOCAB - 1)
    loss = smoothed_loss(logits, target, 0.1)
    (gl,) = torch.autograd.grad(loss, logits)
    table, tokens = rng.normal(VOCAB, D_MODEL, grad=True), rng.tokens(BATCH, LENGTH)
    embedded = F.embedding(tokens, table)
    (ge,) = backward(embedded, table, rng=rng)
    return {
        "layernorm_forward": digest(y),
        "layernorm_backward": digest(gx, gg, gb),
        "relu_backward": digest(r, gh),
        "loss_forward": digest(loss),
        "loss_backward": digest(gl),
        "embedding_backward": digest(ge),
        "sinusoids": digest(sinusoidal_positions(64, D_MODEL)),
    }


SEEDS_TOGETHER = 5  # the train stage's ten seeds on two cores: five a process


def batched_entries(rng):
    """The operations whose one-model form differs when seeds train together (pipeline/core/
    seed_axis.py, torch.func.vmap over weights with a leading seed axis): the three linear shapes as
    batched products, LayerNorm with each seed's gain and bias, and the embedding's backward, for
    five seeds at the lesson's shapes."""
    S, out = SEEDS_TOGETHER, {}
    for name, (d_in, d_out) in {"proj": (D_MODEL, D_MODEL), "ffn_up": (D_MODEL, D_FF)}.items():
        x, w, b = (
            rng.normal(S, ROWS, d_in, grad=True),
            rng.normal(S, d_out, d_in, grad=True),
            rng.normal(S, d_out, grad=True),
        )
        y = torch.func.vmap(F.linear)(x, w, b)
        out[f"seeds_linear_{name}"] = digest(y, *backward(y, x, w, b, rng=rng))
    x, g, b = (
        rng.normal(S, BATCH, LENGTH, D_MODEL, grad=True),
        rng.normal(S, D_MODEL, grad=True),
        rng.normal(S, D_MODEL, grad=True),
    )
    y = torch.func.vmap(lambda x, g, b: F.layer_norm(x, (D_MODEL,), g, b))(x, g, b)
    out["seeds_layernorm"] = digest(y, *backward(y, x, g, b, rng=rng))
    table, tokens = rng.normal(S, VOCAB, D_MODEL, grad=True), rng.tokens(S, BATCH, LENGTH)
    embedded = torch.func.vmap(F.embedding)(tokens, table)
    out["seeds_embedding"] = digest(embedded, *backward(embedded, table, rng=rng))
    return out


def dropout_entries():
    """The masks of one dropout call, from torch's generator seeded alike: nn.Dropout's (bernoulli_)
    and the model's own (uniform draws against the keep probability)."""
    shape = (BATCH, LENGTH, D_MODEL)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        bernoulli = torch.empty(shape).bernoulli_(1 - DROPOUT)
        torch.manual_seed(0)
        uniform = torch.rand(shape)
    return {"dropout_bernoulli": digest(bernoulli), "uniform_draws": digest(uniform)}


def adam_entry(rng):
    """Two updates of the pipeline's own Adam (pipeline.core.loop.FlatAdam) over a buffer the size
    of the lesson's model (59,744 weights), so that both moments are non-zero."""
    weights = torch.nn.ParameterList([rng.normal(59_744)])
    adam = build_optimizer(weights.parameters(), lesson.RECIPE)
    for _ in range(2):
        adam.flat.grad.copy_(rng.normal(59_744))
        adam.step(2e-3)
    return {"adam_update": digest(adam.flat.data)}


def training_entry():
    """A few steps of the pipeline's own training on the lesson's model and recipe, end to end: the
    one seed alone, and two seeds together."""
    rng = np.random.default_rng(0)
    rows = BATCH * TRAINING_STEPS
    source = rng.integers(0, 10, (rows, LENGTH)).astype(np.int8)
    data = {"source": source, "target": np.sort(source, axis=1), "lengths": np.full(rows, LENGTH, np.int16)}
    recipe = dataclasses.replace(lesson.RECIPE, steps=TRAINING_STEPS)
    with torch.random.fork_rng(devices=[]):
        (model,), (losses,) = train(lesson.MODEL, recipe, [0], data)
        models, together = train(lesson.MODEL, recipe, [0, 1], data)
    weights = [*model.parameters(), *(p for m in models for p in m.parameters())]
    return {"training_steps": digest(*weights, torch.tensor(losses), torch.tensor(together))}


def numpy_entries():
    """NumPy's own arithmetic, which the probes and the length study's diagnosis compute with: the
    lesson's residual stack of 12 feed-forward layers (OpenBLAS's matrix products) in float64 and
    float32, least-squares lines of 2 to 60 points (LAPACK, as np.polyfit), and NumPy's vectorised
    exp and log. One product alone can agree where twelve in a row do not."""
    g = np.random.default_rng(0)
    x = g.standard_normal((8, 16))
    layers = [(0.15 * g.standard_normal((16, 32)), 0.15 * g.standard_normal((32, 16))) for _ in range(12)]
    out = {}
    for dtype in (np.float64, np.float32):
        h = x.astype(dtype)
        for w1, w2 in layers:
            h = h + np.maximum(0.0, h @ w1.astype(dtype)) @ w2.astype(dtype)
        out[f"numpy_matmul_{np.dtype(dtype).name}"] = digest(torch.from_numpy(h))
    values = g.standard_normal(4096)
    fits = [np.polyfit(np.arange(n, dtype=float), values[:n], 1) for n in range(2, 61)]
    out["numpy_least_squares"] = digest(torch.from_numpy(np.stack(fits)))
    out["numpy_exp_log"] = digest(
        torch.from_numpy(np.exp(values)), torch.from_numpy(np.log1p(np.abs(values)))
    )
    return out


def operation_entries():
    """The machine's part, {operation: hash}, in the order of a training step: each operation alone,
    on inputs that do not depend on torch, so that only the machine and torch can change them."""
    torch.set_num_threads(1)  # as every stage computes
    rng = Inputs(0)
    return {
        **linear_entries(rng),
        **attention_entries(rng),
        **layer_entries(rng),
        **dropout_entries(),
        **adam_entry(rng),
        **batched_entries(rng),  # after Adam's: each entry's inputs come after those before it
        **numpy_entries(),
    }


def fingerprint():
    """Every entry: the operations, then a short training run of the pipeline's own model and loop
    (which the code changes too, not the machine alone)."""
    return {**operation_entries(), **training_entry()}

"""The numerics fingerprint: a hash of what each kind of operation the training uses computes on
this machine, at the lesson's shapes, forward and backward.

Two machines whose fingerprints agree compute every operation here to the same bits, so the same
code and parameters give them the same results; where one entry differs, the name says which
operation rounds differently (the matrix products of MKL, a vectorised kernel of ATen, a random
draw). Inputs come from NumPy's seeded generator, never from torch, so that each entry depends on
its own operation alone. The entries follow the training step in order: embedding, dropout,
attention, LayerNorm, feed-forward, loss, backward, Adam; then a short training run end to end.
"""

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from pipeline.core import lesson
from pipeline.core.recipe import smoothed_loss
from pipeline.core.training import train_model
from pipeline.infra import numerics
from pipeline.infra.errors import DataError, PipelineError
from pipeline.model.positions import sinusoidal_positions

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
    """The gradients of `inputs` for a fixed upstream gradient of `output`'s shape."""
    return torch.autograd.grad(output, inputs, rng.normal(*output.shape))


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
    """One torch.optim.Adam update of a flat buffer the size of the lesson's model (59,744 weights),
    after a first step so that both moments are non-zero."""
    weights = torch.nn.Parameter(rng.normal(59_744))
    adam = torch.optim.Adam([weights], lr=2e-3, betas=(0.9, 0.98), eps=1e-9, foreach=False)
    for _ in range(2):
        weights.grad = rng.normal(59_744)
        adam.step()
    return {"adam_update": digest(weights.data)}


def training_entry():
    """A few steps of the pipeline's own training loop on the lesson's model and recipe, end to end."""
    rng = np.random.default_rng(0)
    rows = BATCH * TRAINING_STEPS
    source = rng.integers(0, 10, (rows, LENGTH)).astype(np.int8)
    data = {"source": source, "target": np.sort(source, axis=1), "lengths": np.full(rows, LENGTH, np.int16)}
    recipe = dataclasses.replace(lesson.RECIPE, steps=TRAINING_STEPS)
    with torch.random.fork_rng(devices=[]):
        model, losses = train_model(lesson.MODEL, recipe, 0, data)
    return {"training_steps": digest(*model.parameters(), torch.tensor(losses))}


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
    }


def fingerprint():
    """Every entry: the operations, then a short training run of the pipeline's own model and loop
    (which the code changes too, not the machine alone)."""
    return {**operation_entries(), **training_entry()}


def differing(ours, theirs):
    """The entries whose hashes differ (or that only one side has), in ours' order."""
    names = list(ours) + [k for k in theirs if k not in ours]
    return [k for k in names if ours.get(k) != theirs.get(k)]


# ------------------------------------------------------------------------------------- the record

# One fresh process per mode: MKL reads its branch once, at its first call.
CHILD = (
    "import pipeline, json; from pipeline.probes.fingerprint import entries_of_this_process as e; print(e())"
)


def combined(entries):
    """One short id for a mode's operations: equal ids, equal entries."""
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()[:12]


def entries_of_this_process():
    """This process's entries and capability as JSON (the child of `measure`)."""
    return json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "entries": fingerprint()})


def mode_entries(record, mode):
    """Every entry of one mode of a record: its operations, then the training run's."""
    measured = record["modes"][mode]
    return {**measured["operations"], "training_steps": measured["training_steps"]}


def measure_mode(mode):
    env = {**os.environ, numerics.MODE_ENV: mode}
    env.pop(numerics.UNPINNED_ENV, None)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    if out.returncode:
        raise PipelineError(f"the fingerprint of mode {mode} failed: {out.stderr.strip().splitlines()[-1]}")
    measured = json.loads(out.stdout.splitlines()[-1])
    operations = dict(measured["entries"])
    training = operations.pop("training_steps")
    return {
        "settings": numerics.MODES[mode],
        "capability": measured["capability"],
        "fingerprint": combined(operations),  # the machine's: the operations alone
        "operations": operations,
        "training_steps": training,  # the code's too: the model and the loop
    }


def measure():
    """This machine's record: its CPU, the mode this process runs with, and every mode's entries
    (the modes measured side by side, one process each)."""
    with ThreadPoolExecutor(len(numerics.MODES)) as pool:
        modes = dict(zip(numerics.MODES, pool.map(measure_mode, numerics.MODES), strict=True))
    return {
        "in_use": numerics.mode(),
        "cpu": numerics.cpu_identity(),
        "torch": torch.__version__,
        "modes": modes,
    }


def kept_record(previous, measured):
    """What the numerics stage writes: the record measured here, but the CPU of `previous` where
    every entry agrees (the machine that first made these numerics), so that another machine that
    computes alike leaves the file, and every result downstream of it, as it was."""
    same = previous and {k: v for k, v in previous.items() if k != "cpu"} == {
        k: v for k, v in measured.items() if k != "cpu"
    }
    return {**measured, "cpu": previous["cpu"]} if same else measured


def read_record(path):
    """A fingerprint record from a file, with a clear error when it is missing or not one."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `dvc repro numerics`, or name a fingerprint file") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise DataError(f"{path} is not a numerics fingerprint (not JSON)") from None
    if not isinstance(record, dict) or not {"in_use", "cpu", "modes"} <= record.keys():
        raise DataError(f"{path} is not a numerics fingerprint (no in_use, cpu and modes)")
    return record

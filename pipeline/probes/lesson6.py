"""Lesson 6 ("Apilar sin perder lo de abajo"): its two NumPy cells reproduced with the lesson's own
RNG calls, the same derivative computed exactly by autograd, the 2^N expansion of a product of
residual Jacobians; and the parameter accounting at the paper's size (lesson 6, "El bloque
completo"; lesson 10, "El base del paper"), counted on the project's own layers, every block,
matrix and bias.

Everything here is a pure function of its arguments; the probe stage (pipeline/stages/probe.py)
writes the results.
"""

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
import torch

from pipeline.model.transformer import (
    DecoderLayer,
    EncoderLayer,
    MultiHeadAttention,
    Transformer,
    feed_forward,
)
from pipeline.params import lesson

# The lesson's printed figures that are not computed from code: its block count (section
# "El bloque completo") and the paper's base-model size (lesson 10, "El base del paper").
LESSON6_BLOCK_PARAMS = 3_150_336
PAPER_BASE_PARAMS = 65_000_000

# ------------------------------------------------------------------------------ LayerNorm cell


def layer_norm(X, gamma, beta, eps=1e-5):
    """LayerNorm over each row with that row's own mean and deviation (lesson 6, "Cada fila")."""
    mu = X.mean(axis=1, keepdims=True)  # (T, 1): one mean per row
    s = X.std(axis=1, keepdims=True)  # (T, 1): one deviation per row
    return gamma * (X - mu) / np.sqrt(s**2 + eps) + beta


def normalise_columns(M):
    """Normalise each coordinate down its column: batch-norm's direction ("Por qué la fila")."""
    return (M - M.mean(axis=0)) / M.std(axis=0)


@dataclass(frozen=True)
class LayerNormCell:
    """What the lesson's first cell prints, unrounded: per-row statistics and row 0's shifts."""

    X: np.ndarray  # (5, 8) the input
    in_mean: np.ndarray  # (5,)
    in_std: np.ndarray
    out_mean: np.ndarray  # gamma = 1, beta = 0
    out_std: np.ndarray
    affine_mean: np.ndarray  # gamma = 4, beta = -1
    affine_std: np.ndarray
    row0_shift_per_row: float  # max |change of row 0| after row 4 += 10, normalising rows
    row0_shift_per_column: float  # the same, normalising columns


def layernorm_cell(seed=7, rows=5, d_model=8, touch=10.0):
    """The lesson's LayerNorm cell (default_rng(7), X 5 x 8 at loc 3, scale 2), same RNG calls."""
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=3.0, scale=2.0, size=(rows, d_model))
    gamma, beta = np.ones(d_model), np.zeros(d_model)
    Y = layer_norm(X, gamma, beta)
    Z = layer_norm(X, np.full(d_model, 4.0), np.full(d_model, -1.0))
    X2 = X.copy()
    X2[rows - 1] += touch  # touch only the last row, look at row 0
    return LayerNormCell(
        X=X,
        in_mean=X.mean(axis=1),
        in_std=X.std(axis=1),
        out_mean=Y.mean(axis=1),
        out_std=Y.std(axis=1),
        affine_mean=Z.mean(axis=1),
        affine_std=Z.std(axis=1),
        row0_shift_per_row=float(np.abs(layer_norm(X2, gamma, beta)[0] - Y[0]).max()),
        row0_shift_per_column=float(np.abs(normalise_columns(X2)[0] - normalise_columns(X)[0]).max()),
    )


def torch_layernorm_gap(X):
    """Max |nn.LayerNorm(X) - layer_norm(X)|: the model's LayerNorm is the lesson's, per row."""
    ln = torch.nn.LayerNorm(X.shape[1]).double()
    with torch.no_grad():
        ours = ln(torch.as_tensor(X)).numpy()
    return float(np.abs(ours - layer_norm(X, np.ones(X.shape[1]), np.zeros(X.shape[1]), ln.eps)).max())


# ------------------------------------------------------------------------------- residual cell


@dataclass(frozen=True)
class ResidualCell:
    """The lesson's stack of position-wise FFNs (no biases, no LayerNorm) and its input."""

    weights: list  # [(W1 (d_model, d_ff), W2 (d_ff, d_model))] per layer
    X: np.ndarray  # (T, d_model)


def residual_cell(seed=0, T=8, d_model=16, d_ff=32, N=12, scale=0.15, extra_layers=0):
    """The lesson's second cell's draws: N (W1, W2) pairs first, then X (default_rng(0)).

    `extra_layers` pairs, for depths beyond the lesson's N, are drawn after X so the lesson's
    own numbers stay the same.
    """
    rng = np.random.default_rng(seed)
    weights = [
        (rng.normal(size=(d_model, d_ff)) * scale, rng.normal(size=(d_ff, d_model)) * scale) for _ in range(N)
    ]
    X = rng.normal(size=(T, d_model))
    weights += [
        (rng.normal(size=(d_model, d_ff)) * scale, rng.normal(size=(d_ff, d_model)) * scale)
        for _ in range(extra_layers)
    ]
    return ResidualCell(weights=weights, X=X)


def stack_ffns(X, weights, n, with_sum):
    """The lesson's `apilar`: n FFNs, each X + FFN(X) with the sum or FFN(X) without it."""
    for W1, W2 in weights[:n]:
        sub = np.maximum(0.0, X @ W1) @ W2  # the position-wise perceptron, (T, d_model)
        X = X + sub if with_sum else sub
    return X


def finite_difference_norm(cell: ResidualCell, n, with_sum, h=1e-5, at=(0, 0), dtype=np.float64):
    """||(f(X + h e_at) - f(X)) / h||: the lesson's numerical probe of one input coordinate."""
    X = cell.X.astype(dtype)
    weights = [(W1.astype(dtype), W2.astype(dtype)) for W1, W2 in cell.weights]
    Xh = X.copy()
    Xh[at] += h
    moved = stack_ffns(Xh, weights, n, with_sum) - stack_ffns(X, weights, n, with_sum)  # (T, d_model)
    return float(np.linalg.norm(moved.astype(np.float64) / h))


def stack_ffns_torch(X, weights, n, with_sum):
    """`stack_ffns` in torch (float64), for autograd."""
    for W1, W2 in weights[:n]:
        sub = torch.relu(X @ W1) @ W2  # (T, d_model)
        X = X + sub if with_sum else sub
    return X


def autograd_norm(cell: ResidualCell, n, with_sum, at=(0, 0)):
    """||J e_at||, the exact derivative the lesson approximates, by a float64 Jacobian-vector product."""
    weights = [(torch.as_tensor(W1), torch.as_tensor(W2)) for W1, W2 in cell.weights]
    X = torch.as_tensor(cell.X)
    direction = torch.zeros_like(X)
    direction[at] = 1.0
    _, tangent = torch.func.jvp(lambda x: stack_ffns_torch(x, weights, n, with_sum), (X,), (direction,))
    return float(tangent.norm())


def residual_table(cell: ResidualCell, depths, h=1e-5):
    """Per depth: the lesson's finite difference, the autograd value and their relative gap."""
    rows = []
    for n in depths:
        row = {"layers": n}
        for name, with_sum in (("with_sum", True), ("without_sum", False)):
            fd, exact = finite_difference_norm(cell, n, with_sum, h), autograd_norm(cell, n, with_sum)
            row[f"{name}_fd"], row[f"{name}_autograd"] = fd, exact
            row[f"{name}_rel_diff"] = abs(fd - exact) / exact
        rows.append(row)
    return rows


def step_sweep(cell: ResidualCell, n, steps):
    """Finite differences at several steps h, in float64 as the lesson and in float32 as the model
    computes, against autograd: where the numerical probe loses digits."""
    exact = {s: autograd_norm(cell, n, s) for s in (True, False)}
    rows = []
    for h in steps:
        row = {"h": h}
        for name, with_sum in (("with_sum", True), ("without_sum", False)):
            for suffix, dtype in (("", np.float64), ("_float32", np.float32)):
                fd = finite_difference_norm(cell, n, with_sum, h, dtype=dtype)
                row[f"{name}_fd{suffix}"] = fd
                row[f"{name}_rel_err{suffix}"] = abs(fd - exact[with_sum]) / exact[with_sum]
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------- 2^N paths


def random_blocks(rng, n, d=4, scale=0.3):
    """n small random matrices A_i standing in for the sublayers' Jacobians ("Dos bloques")."""
    return [rng.normal(size=(d, d)) * scale for _ in range(n)]


def residual_product(blocks):
    """(I + A_N) ... (I + A_1): the chain rule through N residual blocks, first block rightmost."""
    out = np.eye(blocks[0].shape[0])
    for A in blocks:
        out = (np.eye(len(A)) + A) @ out
    return out


def path_expansion(blocks):
    """The product expanded: one term per choice of I or A_i in each parenthesis (2^N terms).

    Returns (sum of the terms, number of terms, number of terms through no sublayer).
    """
    d = blocks[0].shape[0]
    total, terms, through_none = np.zeros((d, d)), 0, 0
    for choice in itertools.product((False, True), repeat=len(blocks)):
        term = np.eye(d)
        for A, take in zip(blocks, choice, strict=True):
            term = A @ term if take else term  # later blocks multiply on the left
        total += term
        terms += 1
        through_none += not any(choice)
    return total, terms, through_none


def path_check(rng, depths, d=4):
    """Per N: terms, terms through no sublayer, and |expansion - product| for random blocks."""
    rows = []
    for n in depths:
        blocks = random_blocks(rng, n, d)
        total, terms, through_none = path_expansion(blocks)
        product = residual_product(blocks)
        rows.append(
            {
                "blocks": n,
                "terms": terms,
                "terms_through_no_sublayer": through_none,
                "max_abs_error": float(np.abs(total - product).max()),
                "max_abs_product": float(np.abs(product).max()),
            }
        )
    return rows


# ------------------------------------------------------------------ parameter accounting


def count(module, keep=lambda name: True):
    """Parameters of `module` whose qualified name passes `keep`."""
    return sum(p.numel() for name, p in module.named_parameters() if keep(name))


def is_matrix(name):
    """A weight matrix (attention projections, FFN layers), not a bias or a LayerNorm vector."""
    return name.endswith("weight") and "ln." not in name


def attention_bias(name):
    """One of the four attention projections' biases inside an EncoderLayer."""
    return name.startswith("attn.") and name.endswith("bias")


def parameter_accounting(d_model=512, d_ff=2048, heads=8):
    """Lesson 6's counts from the project's own layers at the paper's size (section "El reparto").

    The lesson's block figure is our EncoderLayer without the four attention projections' biases:
    the attention of the paper (section 3.2.2) and of the lesson's 4 d_model^2 is bias-free, while
    the lesson's FFN formula has b1, b2 and its LayerNorm gamma, beta.
    """
    with torch.device("meta"):  # shapes only: nothing is allocated or initialised
        attn, ffn = MultiHeadAttention(d_model, heads), feed_forward(d_model, d_ff)
        block = EncoderLayer(d_model, heads, d_ff, 0.0)
    groups = {
        "attention_weights": count(attn, is_matrix),
        "attention_biases": count(attn, lambda n: not is_matrix(n)),
        "ffn_weights": count(ffn, is_matrix),
        "ffn_bias_b1": count(ffn, lambda n: n == "0.bias"),
        "ffn_bias_b2": count(ffn, lambda n: n == "2.bias"),
        "layernorm_vectors": count(block, lambda n: n.startswith("sub.")),
    }
    ours = count(block)
    assert ours == sum(groups.values()), "every parameter of EncoderLayer is in one group"
    lesson_style = count(block, lambda n: not attention_bias(n))
    return {
        **groups,
        "encoder_block": ours,
        "encoder_block_without_attention_biases": lesson_style,
        "difference_to_lesson6": ours - LESSON6_BLOCK_PARAMS,
        "groups_matching_difference": [
            "+".join(names)
            for r in (1, 2, 3)
            for names in itertools.combinations(groups, r)
            if sum(groups[k] for k in names) == ours - LESSON6_BLOCK_PARAMS
        ],
    }


def decoder_block_params(d_model=512, d_ff=2048, heads=8):
    """Our DecoderLayer at the paper's size: two attentions, one FFN, three LayerNorms."""
    with torch.device("meta"):
        return count(DecoderLayer(d_model, heads, d_ff, 0.0))


def model_params(d_model=512, d_ff=2048, heads=8, layers=6, vocab=37000, norm="post"):
    """Our Transformer with a shared vocabulary of `vocab` tokens (the paper's base: section 6.1)."""
    sizes = {"d_model": d_model, "heads": heads, "layers": layers, "d_ff": d_ff, "norm": norm}
    config = dataclasses.replace(lesson.MODEL, **sizes)
    with torch.device("meta"):
        model = Transformer(config, vocab=vocab)
    return {
        "total": count(model),
        "embedding": count(model.embedding),
        "encoder": count(model.encoder) + count(model.encoder_norm),
        "decoder": count(model.decoder) + count(model.decoder_norm),
    }

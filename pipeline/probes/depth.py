"""Lesson 6's claims on real models: gradients through the depth of encoder and decoder, and the
input-output Jacobian of stacks with and without the residual sum, post-norm against pre-norm.

Internals are read with forward pre-hooks registered and removed here, and the "without the sum"
variant is this module's own forward over the model's layers; pipeline/model/transformer.py is untouched.
"""

import contextlib
import dataclasses
import math

import torch

from pipeline.core.loss import smoothed_loss
from pipeline.model.transformer import Transformer, causal_mask
from pipeline.params.model import ModelConfig

SUBLAYERS = {"encoder": ("self_attn", "ffn"), "decoder": ("self_attn", "cross_attn", "ffn")}


def seeded_model(config: ModelConfig, seed, dtype=torch.float32):
    """A Transformer initialised exactly as the training loop does for `seed`, in eval mode (no dropout),
    without touching the caller's global RNG state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Transformer(config)
    return model.to(dtype).eval()


def sublayer_sites(model: Transformer):
    """(stack, layer index, sublayer name, its residual wrapper) from the input upwards."""
    for stack, layers in (("encoder", model.encoder), ("decoder", model.decoder)):
        for i, layer in enumerate(layers):
            for name, residual in zip(SUBLAYERS[stack], layer.sub, strict=True):
                yield stack, i, name, residual


@contextlib.contextmanager
def capture_sublayer_inputs(model: Transformer):
    """Collect the input x of every residual wrapper (the residual stream entering each sublayer)
    during the forward passes inside the block; the hooks are removed on exit."""
    captured, handles = {}, []

    def hook_for(key):
        def hook(module, args):
            captured[key] = args[0]

        return hook

    for stack, i, name, residual in sublayer_sites(model):
        handles.append(residual.register_forward_pre_hook(hook_for((stack, i, name))))
    try:
        yield captured
    finally:
        for handle in handles:
            handle.remove()


def sublayer_grad_norms(model: Transformer, batch, label_smoothing):
    """||d loss / d x|| at the input of every sublayer, bottom of the encoder to top of the decoder."""
    with capture_sublayer_inputs(model) as captured:
        logits = model(batch.src, batch.tgt_in, batch.src_mask)  # (B, T, vocab)
        loss = smoothed_loss(logits, batch.target, label_smoothing)
    keys = [(stack, i, name) for stack, i, name, _ in sublayer_sites(model)]
    grads = torch.autograd.grad(loss, [captured[k] for k in keys])
    return [
        {"position": p, "stack": stack, "layer": i, "sublayer": name, "grad_norm": float(g.norm())}
        for p, ((stack, i, name), g) in enumerate(zip(keys, grads, strict=True))
    ]


# ------------------------------------------------------------------ stacks with or without the sum


def wrap(residual, x, sublayer, with_sum):
    """One sublayer as the model wraps it (model.norm's wrapper; dropout is off in eval), or the same
    without adding x back."""
    return residual(x, sublayer) if with_sum else residual.without_sum(x, sublayer)


def encoder_stack(model: Transformer, x, with_sum, mask=None):
    """The encoder from its embedded input x (B, T, d_model) to the memory, sum on or off; `mask`
    (boolean or additive) goes to every self-attention."""
    for layer in model.encoder:
        x = wrap(layer.sub[0], x, lambda h, a=layer.attn: a(h, h, mask), with_sum)
        x = wrap(layer.sub[1], x, layer.ffn, with_sum)
    return model.encoder_norm(x)


def decoder_stack(model: Transformer, y, memory, with_sum, memory_mask=None):
    """The decoder from its embedded input y (B, T, d_model) to its last hidden state (before the
    tied output projection), sum on or off."""
    self_mask = causal_mask(y.shape[1], y.device)
    for layer in model.decoder:
        y = wrap(layer.sub[0], y, lambda h, a=layer.attn: a(h, h, self_mask), with_sum)
        y = wrap(layer.sub[1], y, lambda h, a=layer.cross: a(h, memory, memory_mask), with_sum)
        y = wrap(layer.sub[2], y, layer.ffn, with_sum)
    return model.decoder_norm(y)


def jvp_norm(fn, x, direction):
    """||J_fn(x) v||: how far the output moves per unit step of the input along v (forward mode)."""
    _, tangent = torch.func.jvp(fn, (x,), (direction,))
    return float(tangent.detach().norm())


def unit_direction(shape, generator, dtype):
    """A fixed random direction of norm 1 in input space."""
    v = torch.randn(shape, generator=generator, dtype=dtype)
    return v / v.norm()


PATHS = ("encoder", "decoder", "source_to_output")


@torch.no_grad()
def embedded_inputs(model: Transformer, src, tgt_in):
    """sqrt(d_model) E[t] + PE for source and decoder input, dropout off (eval mode)."""
    return model.embed(src), model.embed(tgt_in)


def jacobian_norms(model: Transformer, src, tgt_in, with_sum, seed):
    """The input-output Jacobian along one seeded unit direction, for three paths of one model:
    source embedding to memory, decoder embedding to decoder output (memory fixed), and source
    embedding to decoder output (through the memory)."""
    dtype = next(model.parameters()).dtype
    x0, y0 = embedded_inputs(model, src, tgt_in)
    generator = torch.Generator().manual_seed(seed)
    v_src, v_tgt = (unit_direction(t.shape, generator, dtype) for t in (x0, y0))
    memory = encoder_stack(model, x0, with_sum).detach()
    return {
        "encoder": jvp_norm(lambda x: encoder_stack(model, x, with_sum), x0, v_src),
        "decoder": jvp_norm(lambda y: decoder_stack(model, y, memory, with_sum), y0, v_tgt),
        "source_to_output": jvp_norm(
            lambda x: decoder_stack(model, y0, encoder_stack(model, x, with_sum), with_sum), x0, v_src
        ),
    }


def depth_sweep(config: ModelConfig, layers_list, src, tgt_in, seed):
    """Jacobian norms at initialisation (float64) for 1..L layers a side, each norm placement,
    with and without the residual sum. One row per depth, one column per variant."""
    rows = []
    for layers in layers_list:
        row = {"layers": layers}
        for norm in ("post", "pre"):
            model = seeded_model(dataclasses.replace(config, layers=layers, norm=norm), seed, torch.float64)
            for with_sum in (True, False):
                norms = jacobian_norms(model, src, tgt_in, with_sum, seed)
                tag = "with_sum" if with_sum else "without_sum"
                row.update({f"{path}_{norm}_{tag}": norms[path] for path in PATHS})
        rows.append(row)
    return rows


def decay_per_layer(first, last, layers_first, layers_last):
    """Geometric mean factor per added layer between two depths (1.0 = no change with depth)."""
    if layers_last == layers_first or first <= 0 or last <= 0:
        return math.nan
    return math.exp((math.log(last) - math.log(first)) / (layers_last - layers_first))

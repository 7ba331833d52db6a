"""Lesson 10's structural claims, measured on freshly built layers of the lesson's size.

Parameter counts, shapes, the causal-mask test of the MultiHead demo, the shared embedding: facts
of the code, not of training, recorded so the report can set them against the lesson.
"""

from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from pipeline.core.batching import make_batch
from pipeline.core.decoding import GREEDY
from pipeline.model.hooks import attention_weights
from pipeline.model.transformer import (
    NORMS,
    DecoderLayer,
    EncoderLayer,
    MultiHeadAttention,
    Transformer,
    causal_mask,
)
from pipeline.model.transformer import count_parameters as count
from pipeline.params import lesson
from pipeline.params.model import ModelConfig
from pipeline.tokens import BOS, VOCAB

HEADLINE = ("model_params", "encoder_layer_params", "decoder_layer_params")
HEAD_COUNTS = (1, 2, 4, 8, 16, 32)  # lesson 6's aside: "el coste no depende de h"


def embedding_scale(model):
    """The factor embed() puts on E's rows, read from its output: (embed(t) - PE) / E[t], by least
    squares over every token (dropout off), not from the formula."""
    tokens = torch.arange(VOCAB)[None]  # (1, V): every token once, at positions 0..V-1
    rows = model.embedding.weight[tokens[0]]  # (V, d_model)
    scaled = model.embed(tokens)[0] - model.positions.vectors(tokens, 0)
    return float((scaled * rows).sum() / (rows * rows).sum())


def decoder_input_is_shifted_target():
    """Lesson 10: "la salida correcta corrida un lugar, con BOS adelante": tgt_in = [BOS] + y[:-1]."""
    source = np.array([[3, 1, 2], [9, 9, 0]])
    target = np.sort(source, axis=1)
    batch = make_batch(source, target, np.array([3, 3]))
    expected = torch.cat([torch.full((2, 1), BOS), torch.as_tensor(target[:, :-1], dtype=torch.long)], 1)
    return bool(torch.equal(batch.tgt_in, expected))


@torch.enable_grad()  # measure() runs without gradients; the graph is what is counted
def embedding_uses(model):
    """How many times one forward pass reads E ("E se usa 3 veces"): the edges of the autograd graph
    that end at E's weight, counted from the logits back (each read is one edge)."""
    logits = model(torch.tensor([[1, 2, 3]]), torch.tensor([[BOS, 1]]))
    target, seen, stack, uses = model.embedding.weight, set(), [logits.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for parent, _ in node.next_functions:
            uses += getattr(parent, "variable", None) is target
            stack.append(parent)
    return uses


def greedy_encoder_runs(model, length=10):
    """How many times the encoder runs while the evaluation's greedy writes a whole output of
    `length` tokens ("El encoder corre una sola vez"): calls of its first layer, counted by a hook."""
    runs = []
    hook = model.encoder[0].register_forward_hook(lambda *_: runs.append(1))
    try:
        written = GREEDY["greedy"](model, torch.randint(0, 10, (2, length)))
    finally:
        hook.remove()
    return {"greedy_encoder_runs": len(runs), "greedy_tokens_written": written.shape[1]}


@torch.no_grad()
def layernorm_quiz(d_model, seed):
    """Lesson 6's quiz on LayerNorm's output at one position t, each option tested on the layer:
    unchanged when another position of the sentence changes, when another sentence shares the batch,
    when the sentence is longer; still mean 0 and deviation 1 after gamma and beta."""
    g = torch.Generator().manual_seed(seed)
    ln = nn.LayerNorm(d_model)
    ln.weight.copy_(torch.rand(d_model, generator=g) + 0.5)
    ln.bias.copy_(torch.randn(d_model, generator=g))
    x = torch.randn(2, 5, d_model, generator=g)
    row = ln(x)[0, 2]  # position t = 2 of the first sentence
    other_position, other_sentence = x.clone(), x.clone()
    other_position[0, 4] += 10.0
    other_sentence[1] = torch.randn(5, d_model, generator=g)
    longer = torch.cat([x, torch.randn(2, 3, d_model, generator=g)], dim=1)
    same = lambda y: bool(torch.equal(ln(y)[0, 2], row))  # noqa: E731
    standard = abs(float(row.mean())) < 1e-3 and abs(float(row.std(unbiased=False)) - 1) < 1e-3
    return [same(other_position), same(other_sentence), same(longer), standard]


def causal_mask_demo(d_model, heads, seed):
    """The lesson's demo: batch 2, 5 tokens; changing the last token leaves outputs 0-3 equal."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    attn = MultiHeadAttention(d_model, heads)
    x = torch.randn(2, 5, d_model, generator=g)
    changed = x.clone()
    changed[:, 4] = torch.randn(d_model, generator=g)
    mask = causal_mask(5)
    out, out_changed = attn(x, x, mask), attn(changed, changed, mask)
    return {
        "mask_demo_output_shape": list(out.shape),
        "mask_demo_first4_unchanged": bool(torch.allclose(out[:, :4], out_changed[:, :4])),
        "mask_demo_last_changed": bool(not torch.allclose(out[:, 4], out_changed[:, 4])),
    }


@torch.no_grad()
def paper_width_checks(seed=0):
    """Lesson 6 at the paper's width: a sublayer returns T x d_model for any T, and post-norm
    LayerNorm(x + Sublayer(x)) differs from x + LayerNorm(Sublayer(x)) (the quiz)."""
    torch.manual_seed(seed)
    layer = EncoderLayer(512, 8, 2048, 0.0).eval()
    shapes = [list(layer(torch.randn(1, T, 512)).shape) for T in (7, 30)]
    x = torch.randn(1, 7, 512)
    ffn, ln = layer.ffn, nn.LayerNorm(512)
    paper, other = ln(x + ffn(x)), x + ln(ffn(x))
    return {
        "paper_width_output_shapes": shapes,
        "paper_width_params": count(layer),
        "paper_width_params_by_length": [count(layer)] * len(shapes),  # the same module for every T
        "post_norm_differs_from_x_plus_norm": bool(not torch.allclose(paper, other, atol=1e-3)),
    }


@torch.no_grad()
def measure(config: ModelConfig, seed=0):
    """Counts and shapes of lesson 10's pieces at the configured size."""
    c = config
    torch.manual_seed(seed)
    sizes = {
        "d_model": c.d_model,
        "heads": c.heads,
        "d_ff": c.d_ff,
        "dropout": c.dropout,
        "norm": NORMS[c.norm],
    }
    enc, dec = EncoderLayer(**sizes).eval(), DecoderLayer(**sizes).eval()
    model = Transformer(c).eval()
    memory, written = torch.randn(2, 10, c.d_model), torch.randn(2, 7, c.d_model)
    with attention_weights(dec) as inside:
        dec_out = dec(written, memory, causal_mask(7))
    cross = inside["cross"][0]  # (B, h, 7, 10): every written token over every input token
    with attention_weights(dec.attn) as alone:
        dec.attn(written, written, causal_mask(7))
    self_weights = alone[""][0]
    logits = model.decode(torch.tensor([[BOS]]), model.encode(torch.tensor([[1, 2, 3]])))
    embeddings = [m for m in model.modules() if isinstance(m, nn.Embedding)]
    norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
    return {
        "heads": c.heads,
        "d_k": c.d_model // c.heads,
        "encoder_layer_params": count(enc),
        "encoder_layer_attention_params": count(enc.attn),
        "encoder_layer_ffn_params": count(enc.ffn),
        "encoder_layer_layernorm_params": sum(count(m) for m in enc.modules() if isinstance(m, nn.LayerNorm)),
        "encoder_layer_output_shape": list(enc(torch.randn(2, 10, c.d_model)).shape),
        "decoder_layer_params": count(dec),
        "decoder_layer_attention_params": count(dec.attn) + count(dec.cross),
        "decoder_layer_ffn_params": count(dec.ffn),
        "decoder_layer_layernorms": sum(isinstance(m, nn.LayerNorm) for m in dec.modules()),
        "decoder_layer_layernorm_params": sum(count(m) for m in dec.modules() if isinstance(m, nn.LayerNorm)),
        "cross_attention_sees_every_input": bool((cross > 0).all()),
        "attention_rows_sum_to_one": bool(torch.allclose(cross.sum(-1), torch.ones(()), atol=1e-6)),
        "self_attention_future_weight": float(self_weights.triu(1).abs().max()),
        "attention_matrices": sum(isinstance(m, nn.Linear) for m in enc.attn.modules()),
        "attention_params_by_heads": [count(MultiHeadAttention(c.d_model, h)) for h in HEAD_COUNTS],
        "decoder_input_is_shifted_target": decoder_input_is_shifted_target(),
        "decoder_layer_output_shape": list(dec_out.shape),
        "cross_attention_table_shape": list(cross.shape[-2:]),
        "model_params": count(model),
        "embedding_params": model.embedding.weight.numel(),
        "embedding_rows": model.embedding.weight.shape[0],
        "embedding_matrices": len(embeddings),
        "embedding_scale": embedding_scale(model),
        "embedding_uses": embedding_uses(model),
        "layernorm_quiz": layernorm_quiz(c.d_model, seed),
        "logits_shape": list(logits.shape),
        "vocab": VOCAB,
        "layernorm_eps": norms[0].eps,
        **causal_mask_demo(c.d_model, c.heads, seed),
        **paper_width_checks(seed),
        "residual_wrappers": len(enc.sub) + len(dec.sub),
        "sublayers_mixing_positions": sum(mixes_positions(box, c.d_model) for box in boxes(enc, dec)),
        "boxes_per_layer_pair": len(boxes(enc, dec)),
        "attention_mults_by_heads": [attention_multiplications(c.d_model, h) for h in HEAD_COUNTS],
        "lesson_layer_code_lines": lesson_code_lines(),
        **greedy_encoder_runs(model),
    }


def heads_table(measured):
    """The measures taken at every head count (HEAD_COUNTS), moved out of `measured` into rows
    {heads, attention_params, attention_mults}: one row a head count."""
    params, mults = measured.pop("attention_params_by_heads"), measured.pop("attention_mults_by_heads")
    return [
        {"heads": h, "attention_params": p, "attention_mults": m}
        for h, p, m in zip(HEAD_COUNTS, params, mults, strict=True)
    ]


def boxes(enc, dec):
    """Lesson 6's boxes of one encoder and one decoder layer, each as a function of a (B, T, d_model)
    input: every sublayer (cross-attention reading its keys from the input) and every Add & Norm."""
    found = [lambda x, a=enc.attn: a(x, x), enc.ffn]
    found += [
        lambda x, a=dec.attn: a(x, x, causal_mask(x.shape[1])),
        lambda x, a=dec.cross: a(x[:, -1:], x),
        dec.ffn,
    ]
    # each Add & Norm's LayerNorm (ReZero's residuals have none: the identity)
    return found + [getattr(sub, "ln", nn.Identity()) for sub in (*enc.sub, *dec.sub)]


def mixes_positions(box, d_model, length=6):
    """Whether a box's output at the last position moves when only the other positions change."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, length, d_model, generator=g)
    changed = x.clone()
    changed[:, :-1] = torch.randn(1, length - 1, d_model, generator=g)
    return not torch.allclose(box(x)[:, -1], box(changed)[:, -1])


def attention_multiplications(d_model, heads, length=10):
    """Floating-point operations of one self-attention at d_model and `heads` (torch's counter)."""
    counter = FlopCounterMode(display=False)
    with counter:
        MultiHeadAttention(d_model, heads)(*(torch.zeros(1, length, d_model),) * 2)
    return counter.get_total_flops()


def lesson_code_lines():
    """Non-blank lines of the lesson's listing of its layers, as printed (lesson10_layers.txt)."""
    text = Path(__file__).with_name("lesson10_layers.txt").read_text()
    return sum(1 for line in text.splitlines() if line.strip() and not line.startswith("#"))


def measure_configured(configured: ModelConfig):
    """The lesson's claims measured at the lesson's size (they are about it, whatever params.yaml
    sets), with the configured model's count beside them for experiments that change the size."""
    metrics = measure(lesson.MODEL)
    metrics["configured_model_params"] = count(Transformer(configured))
    return metrics

"""Lesson 10's structural claims, measured on freshly built layers of the lesson's size.

Parameter counts, shapes, the causal-mask test of the MultiHead demo, the shared embedding: facts
of the code, not of training, recorded so the report can set them against the lesson.
"""

import math

import torch
from torch import nn

from pipeline.core.tokens import VOCAB
from pipeline.infra.params import ModelParams
from pipeline.model.transformer import (
    DecoderLayer,
    EncoderLayer,
    MultiHeadAttention,
    Transformer,
    causal_mask,
)
from pipeline.model.transformer import count_parameters as count

METRICS_PATH = "metrics/architecture.json"
HEADLINE = ("model_params", "encoder_layer_params", "decoder_layer_params")
LESSON_CONFIG = ModelParams()  # lesson 10: d_model 32, 4 heads, 2 + 2 layers, d_ff 128, post-norm


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
        "post_norm_differs_from_x_plus_norm": bool(not torch.allclose(paper, other, atol=1e-3)),
    }


@torch.no_grad()
def measure(config: ModelParams, seed=0):
    """Counts and shapes of lesson 10's pieces at the configured size."""
    c = config
    torch.manual_seed(seed)
    enc = EncoderLayer(c.d_model, c.heads, c.d_ff, c.dropout, c.norm).eval()
    dec = DecoderLayer(c.d_model, c.heads, c.d_ff, c.dropout, c.norm).eval()
    model = Transformer(c).eval()
    memory, written = torch.randn(2, 10, c.d_model), torch.randn(2, 7, c.d_model)
    trace = []
    dec_out = dec(written, memory, causal_mask(7), trace=trace)
    logits = model.decode(torch.tensor([[10]]), model.encode(torch.tensor([[1, 2, 3]])))
    embeddings = [m for m in model.modules() if isinstance(m, nn.Embedding)]
    norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
    return {
        "heads": c.heads,
        "d_k": c.d_model // c.heads,
        "encoder_layer_params": count(enc),
        "encoder_layer_attention_params": count(enc.attn),
        "encoder_layer_ffn_params": count(enc.ffn),
        "encoder_layer_layernorm_params": sum(count(s.ln) for s in enc.sub),
        "encoder_layer_output_shape": list(enc(torch.randn(2, 10, c.d_model)).shape),
        "decoder_layer_params": count(dec),
        "decoder_layer_output_shape": list(dec_out.shape),
        "cross_attention_table_shape": list(trace[0].cross_attention.shape[-2:]),
        "model_params": count(model),
        "embedding_params": model.embedding.weight.numel(),
        "embedding_rows": model.embedding.weight.shape[0],
        "embedding_matrices": len(embeddings),
        "embedding_scale": math.sqrt(c.d_model),
        "logits_shape": list(logits.shape),
        "vocab": VOCAB,
        "layernorm_eps": norms[0].eps,
        **causal_mask_demo(c.d_model, c.heads, seed),
        **paper_width_checks(seed),
    }

"""Parameter accounting at the paper's size (lesson 6, "El bloque completo"; lesson 10, "El base
del paper"), counted on the project's own layers: every block, matrix and bias."""

import dataclasses
import itertools

import torch

from pipeline.core import lesson
from pipeline.model.transformer import (
    DecoderLayer,
    EncoderLayer,
    MultiHeadAttention,
    Transformer,
    feed_forward,
)
from pipeline.probes.lesson6 import LESSON6_BLOCK_PARAMS


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

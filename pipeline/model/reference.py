"""torch.nn.Transformer at our model's exact shape, holding our weights: an implementation nobody
here wrote that checks ours (the evaluate stage's claim) and that the benchmark times ours against."""

import copy
import math

import torch
from torch import nn

from pipeline.model.positions import sinusoidal_positions
from pipeline.model.transformer import additive_mask, causal_mask
from pipeline.params.model import ModelConfig
from pipeline.tokens import VOCAB


class ReferenceTransformer(nn.Module):
    """torch.nn.Transformer with the same embeddings x sqrt(d_model), the same sinusoidal table, the
    output tied to the embedding, post-norm, ReLU, and no final LayerNorm (ours has none in
    post-norm), so both count the same parameters.

    `stock=False` (the comparison of record) drops out where ours does, on each sublayer's output
    and on the embeddings; `stock=True` keeps nn.Transformer's own extra dropout on the attention
    weights and inside the FFN, as nn.Transformer(dropout=0.1) comes.
    """

    def __init__(self, config: ModelConfig, stock=False, vocab=VOCAB):
        super().__init__()
        c = self.config = config
        self.embedding = nn.Embedding(vocab, c.d_model)
        self.register_buffer("pe", sinusoidal_positions(c.max_len, c.d_model), persistent=False)
        args = {"dim_feedforward": c.d_ff, "dropout": c.dropout, "batch_first": True}
        encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(c.d_model, c.heads, **args), c.layers, enable_nested_tensor=False
        )
        decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(c.d_model, c.heads, **args), c.layers)
        self.core = nn.Transformer(c.d_model, c.heads, custom_encoder=encoder, custom_decoder=decoder, **args)
        if not stock:
            for module in self.core.modules():
                if isinstance(module, nn.MultiheadAttention):
                    module.dropout = 0.0  # no dropout on the attention weights
                if isinstance(module, nn.TransformerEncoderLayer | nn.TransformerDecoderLayer):
                    module.dropout.p = 0.0  # no dropout between the FFN's two linears
        self.drop = nn.Dropout(c.dropout)
        self.register_buffer("causal", additive_mask(causal_mask(c.max_len)), persistent=False)

    def embed(self, tokens):
        return self.drop(self.embedding(tokens) * math.sqrt(self.config.d_model) + self.pe[: tokens.shape[1]])

    def forward(self, src, tgt_in, src_mask=None):
        T = tgt_in.shape[1]
        padding = None if src_mask is None else src_mask[:, 0, 0]  # (B, T_enc), True at padding
        h = self.core(
            self.embed(src),
            self.embed(tgt_in),
            tgt_mask=self.causal[:T, :T],
            tgt_is_causal=True,
            src_key_padding_mask=padding,
            memory_key_padding_mask=padding,
        )
        return h @ self.embedding.weight.T  # (B, T, vocab)


def reference_copy(model):
    """A ReferenceTransformer holding `model`'s weights one to one (post-norm models): W^Q, W^K, W^V
    stacked into nn.MultiheadAttention's in_proj, each sublayer's LayerNorm as norm1..3. With dropout
    off, it computes the same function, so an implementation nobody here wrote checks ours."""
    reference = ReferenceTransformer(model.config).to(next(model.parameters()).dtype)
    state = {"embedding.weight": model.embedding.weight}
    for stack, layers in (("encoder", model.encoder), ("decoder", model.decoder)):
        for i, layer in enumerate(layers):
            prefix = f"core.{stack}.layers.{i}"
            attentions = [("self_attn", layer.attn)]
            if hasattr(layer, "cross"):
                attentions.append(("multihead_attn", layer.cross))
            for name, attn in attentions:
                state[f"{prefix}.{name}.in_proj_weight"] = torch.cat(
                    [attn.wq.weight, attn.wk.weight, attn.wv.weight]
                )
                state[f"{prefix}.{name}.in_proj_bias"] = torch.cat([attn.wq.bias, attn.wk.bias, attn.wv.bias])
                state[f"{prefix}.{name}.out_proj.weight"] = attn.wo.weight
                state[f"{prefix}.{name}.out_proj.bias"] = attn.wo.bias
            for j, linear in ((1, layer.ffn[0]), (2, layer.ffn[2])):
                state[f"{prefix}.linear{j}.weight"], state[f"{prefix}.linear{j}.bias"] = (
                    linear.weight,
                    linear.bias,
                )
            for j, sub in enumerate(layer.sub, start=1):
                state[f"{prefix}.norm{j}.weight"], state[f"{prefix}.norm{j}.bias"] = (
                    sub.ln.weight,
                    sub.ln.bias,
                )
    reference.load_state_dict({k: v.detach().clone() for k, v in state.items()})
    return reference.eval()


def holds_reference(config):
    """nn.Transformer can hold the paper's model only: sinusoids, post-norm (softmax attention, the
    paper's model's only)."""
    return (config.positions, config.norm) == ("sinusoidal", "post")


@torch.no_grad()
def reference_gap(model, src, tgt_in, dtype):
    """How far `model` and nn.Transformer holding its weights lie apart, both in `dtype` and in
    evaluation mode, on teacher-forced inputs (the model itself is left as it was): the largest
    |logit difference|, and the largest |logit|, the scale rounding errors are relative to."""
    ours = copy.deepcopy(model).to(dtype).eval()
    logits = ours(src, tgt_in)
    return {
        "max_diff": (logits - reference_copy(ours)(src, tgt_in)).abs().max().item(),
        "logit_max": logits.abs().max().item(),
    }

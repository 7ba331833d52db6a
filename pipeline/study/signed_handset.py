"""The signed count's architecture with hand-set weights and no training: what the prior alone does.

The signed cross-attention (pipeline/study/signed_count.py) holds (copies in the input) - (copies
written) of every digit whose key opens its gate, for any weights. Set by hand, with every gate open
(q = k = 0 and a bias of +200, so sigmoid = 1 exactly in float32) and one-hot values, decoder layer
1's cross-attention writes the whole owed histogram H_q = c_in(q) - c_out(q) into the stream. As the
output so far is sorted, H_q = 0 for every digit below the last one written; the rest is the hand-set
counting sort's (pipeline/study/counting_sort.py): its embedding with a large constant, so that no
LayerNorm divides the counts by a norm they dominate, and its FFN readout "the smallest q with
H_q >= 1", into the logits. Everything else is zero: the encoder and decoder layer 2 are identities.

Unlike the counting sort in the sums model, both counts of a digit enter through the same sublayer,
so they pass the same LayerNorms and cancel exactly: no copy leaks at any length. Its reach is the
prior's, which the study sets beside what training makes of the same architecture.
"""

import dataclasses
import math

import torch

from pipeline.infra.errors import ConfigError
from pipeline.study.counting_sort import D_K, SINK, H, R, set_embedding, set_layernorm, set_readout, zero_all
from pipeline.study.model import StudyTransformer
from pipeline.study.options import attention_kinds
from pipeline.study.params import HANDSET_SHAPE

# the counts the construction sets: the signed count, and the same read per digit through the clamp
# (a one-hot value of 1 a copy passes [-1, 1] unchanged where a copy is owed)
SIGNED_HANDSET_ATTENTION = (("none", "none", "signed"), ("none", "none", "signed_owed"))


def signed_handset_fits(config):
    """Whether the construction fits `config`: the lesson's width, post-norm, positions bos, and
    attention none/none/signed or none/none/signed_owed."""
    shape = {k: getattr(config, k) for k in HANDSET_SHAPE}
    return (
        shape == HANDSET_SHAPE
        and config.d_ff >= 20
        and attention_kinds(config.attention) in SIGNED_HANDSET_ATTENTION
    )


def check_signed_handset_fits(config):
    if not signed_handset_fits(config):
        shape = {k: getattr(config, k) for k in HANDSET_SHAPE}
        raise ConfigError(
            "the hand-set signed count needs d_model 32, 4 heads, d_ff >= 20, post-norm, positions bos "
            "and attention none/none/signed or none/none/signed_owed; this model has "
            f"{shape}, d_ff {config.d_ff}, attention {config.attention}"
        )


def signed_handset_model(config, const=1000.0, gate=200.0, readout=100.0):
    """The signed architecture of `config` (a trained variant's), set by hand (module docstring);
    `const`, `gate` and `readout` as in counting_sort_model."""
    check_signed_handset_fits(config)
    with torch.random.fork_rng():  # building a model draws initial weights, all overwritten
        model = StudyTransformer(dataclasses.replace(config, dropout=0.0)).eval()
    zero_all(model)
    std0 = math.sqrt(2 * const * const + 2)  # std of sqrt(32) E[t] for every token t (mean 0)
    with torch.no_grad():
        set_embedding(model.embedding.weight, const)
        for layer in (*model.encoder, *model.decoder):
            for sub in layer.sub:
                set_layernorm(sub.ln, std0)
        for layer in model.decoder:
            layer.cross.weights.bias.fill_(-gate)  # every gate shut but the owed count's
        set_layernorm(model.decoder[-1].sub[2].ln, std0, keep=R)
        set_owed_counts(model.decoder[0].cross, gate)
        set_readout(model.decoder[0].ffn, readout, sink_w=-1.0)
    return model


def set_owed_counts(cross, gate):
    """Decoder layer 1's signed cross-attention, heads 0 and 1 (the ten digits' values split 8 + 2):
    every gate open, value onehot(k), so H_q = copies of q in the input less copies written (BOS's
    value is 0; SINK takes minus the total, keeping the row mean 0)."""
    A = math.sqrt(cross.d_k * cross.heads)  # embed() multiplies E by sqrt(d_model)
    for h in (0, 1):
        cross.weights.bias[h] = gate
    for q in range(len(R)):
        h, i = divmod(q, D_K)
        cross.wv.weight[h * D_K + i, R[q]] = 1.0 / A
        cross.wo.weight[H[q], h * D_K + i] = 1.0
        cross.wo.weight[SINK, h * D_K + i] = -1.0

"""A hand-set counting sort in the study's "sums" model: no training, exact at every length it fits.

The model is the project's own Transformer in the study's "sums" configuration (SUMS below: the
lesson's size, post-norm, positions bos, attention none/sigmoid/sigmoid), unchanged; only the weights
are set by hand (`counting_sort_model()`). Greedy decoding
(`pipeline.core.decoding.greedy_cached`) then runs this algorithm, one output digit per step:

    p = the token just fed (the last digit written, or BOS at the first step)
    H_q = (copies of q in the input) for every digit q > p
    H_p = (copies of p in the input) - (copies of p written so far)     [how many p are still owed]
    H_q = 0 for q < p                                                     (at BOS: H = the histogram)
    output = the smallest q with H_q >= 1

That is the brief's rule: repeat p while it is still owed, else the smallest present digit above it.
Only decoder layer 1 does any work. The encoder and decoder layer 2 are identities (every sublayer
outputs exactly 0; their LayerNorms only rescale).

Residual stream (32 dimensions)
-------------------------------
    0..9    R     one-hot digit identity; the same dimensions are the OUTPUT READOUT (logit q = h[q])
    10      BOS   BOS identity
    11      C+    +K   } a large constant component, the same for every token (K = `const`, 1000):
    12      C-    -K   } it makes every LayerNorm's normaliser almost independent of the counts
    13      SINK  minus the sum of everything else written: keeps the row mean exactly 0
    14..23  H     the "owed" histogram H_0..H_9 above (written by decoder layer 1's attention)
    24..31        unused (0)

The embedding E (11 x 32), used three times:
    E[q]   = e_q + K (e_C+ - e_C-) - e_SINK        for a digit q
    E[BOS] = e_BOS + K (e_C+ - e_C-) - e_SINK
Every row has mean 0 and the same norm. Used as the readout (logits = h @ E.T), the C+/C-/SINK
columns are the same for every digit, so they add one common number to all ten digit logits and
cannot change the argmax: only h[0..9] decide, and the final LayerNorm zeroes everything else anyway.
The one-hot part therefore does two jobs, as the tied embedding demands: the input's identity (read
by the attention projections, which are linear in it, so any function of the digit, e.g. its value,
its square, is one linear map away) and the output's readout direction.

LayerNorm (post-norm, after every sublayer)
-------------------------------------------
Each LN computes (x - mean) / std * gain + bias. Two precautions make it harmless:
  * mean: every sublayer's output sums to 0 over the 32 dimensions (SINK takes minus the rest), and
    the embedding rows have mean 0, so `mean` stays 0 and no count leaks into the other dimensions;
  * std: the stream is sqrt(32) E[p] (norm sqrt(32) * sqrt(2K^2 + 2) = 8000 for K = 1000) plus the
    counts (norm <= ~57 for 40 copies). Its std is std0 * (1 + eps), eps ~ |counts|^2 / (2 |x|^2),
    and every LN in the decoder has gain std0 = sqrt(2K^2 + 2) (bias 0): the identity up to a
    factor 1 - eps. This is not free: the copies WRITTEN (c_out, added before LN 1) pass one more
    LN than the copies in the INPUT (c_in, added after it), so H_p = c_in - c_out (1 - eps) and,
    right after the last of n copies of p is written, H_p ~ n^3 / (64 K^2) instead of 0. The FFN
    tolerates 1/4: exact while n^3 < 16 K^2, i.e. up to ~250 copies of one digit for K = 1000
    (measured: check.py section 4), beyond max_len 64. Without the constant (K = 0) the LN divides
    the counts by a norm the counts themselves dominate, and the model fails from length ~5.
    K is bounded above by float32: at K = 1e7 the stream's entries (~6e7) have a unit in the last
    place of 4 and the counts are lost in LN's mean and variance; 1e2 <= K <= 1e6 all work.

Decoder layer 1 (all scores are scaled so that each gate is sigmoid(+-200 or more): exactly 0 or 1
in float32; the largest weight, 16200 = 2 * 200 * sqrt(8) * 9^2 / sqrt(32) in the self-attention's
query, is such a gate scale; the only other large entries are K = 1000 in E and the LN gains std0):
  * self-attention, heads 0 and 1 (same gate, the value split 8 + 2 over the ten digits, since
    d_k = 8): query token p, key token k, gate = sigmoid(g (1 - 2 (v(p) - v(k))^2)) with g = 200,
    v(digit) = digit, v(BOS) = -3. The score is bilinear: Q = (2 v(p), -1, -v(p)^2) . K = (v(k), v(k)^2, 1),
    and v, v^2 are linear in the one-hot. The gate is 1 exactly on the positions holding p, the
    current one included, so with V = -onehot(k) the head writes -c_out(p) into H_p (SINK +c_out).
    BOS keys have V = 0, so the BOS step writes nothing.
  * cross-attention, heads 0 and 1 (same gate, value split 8 + 2): gate = sigmoid(2 g (k - p + 1/2)),
    1 exactly on the memory rows of digits k >= p (u(BOS) = -1 as a query: every digit; the memory's
    BOS row has key value -100: never). V = onehot(k), so it writes c_in(k) into H_k for k >= p
    (SINK minus the total). H_p becomes c_in(p) - c_out(p). Both counts of p use the same gate
    value sigmoid(g) and the leaks onto p - 1 (sigmoid(-g) times its copies, all already written)
    cancel between the two heads, so the construction stays exact down to g ~ 1.5 (check.py
    section 3); g = 200 just makes every gate exactly 0 or 1.
  * FFN (20 of 128 hidden units): present_q = ReLU(2 H_q - 1/2) - ReLU(2 H_q - 3/2), i.e. 0 for
    H_q <= 1/4 and 1 for H_q >= 3/4; it writes present_q * s (11 - q) into R_q (s = 100). The
    smallest owed digit gets the largest readout, 100 above any other; the residual one-hot of p
    (sqrt(32) = 5.7 in R_p) is far below that step.
Remaining heads, the encoder and decoder layer 2: all weights 0 (their gates are pinned to 0 by a
bias of -1000; none attention outputs only W^O's bias, 0). The final LN keeps only R (gain std0 on
dims 0..9, 0 elsewhere), so the logits are the readout in R, in the FFN's units (steps of ~100).

`const` (K), `sink` and `gate` are exposed for ablations (tests/test_handset.py shows why each is
needed).
"""

import math

import torch

from pipeline.params import lesson
from pipeline.params.rules import as_dict
from pipeline.study.model import StudyTransformer
from pipeline.study.options import StudyModelConfig
from pipeline.study.params import HANDSET_SHAPE, check_handset_fits
from pipeline.tokens import BOS, DIGITS

D_MODEL, HEADS, D_K, D_FF = HANDSET_SHAPE["d_model"], HANDSET_SHAPE["heads"], 8, 128
R = list(range(0, 10))  # one-hot identity / readout
BOS_DIM, C_PLUS, C_MINUS, SINK = 10, 11, 12, 13
H = list(range(14, 24))  # owed histogram
A = math.sqrt(D_MODEL)  # embed() multiplies E by sqrt(d_model): the one-hot's size in the stream

# the lesson's model with the sums variant's scheme: no positions, no encoder attention, sigmoid gates
SUMS = StudyModelConfig(
    **{**as_dict(lesson.MODEL), "dropout": 0.0, "positions": "bos"},
    attention="none/sigmoid/sigmoid",
    sigmoid_bias=-4.0,
)


def zero_all(model):
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()


def set_layernorm(ln, gain, keep=None):
    """LayerNorm with a uniform gain (on `keep` dims only, 0 elsewhere) and bias 0."""
    with torch.no_grad():
        ln.bias.zero_()
        if keep is None:
            ln.weight.fill_(gain)
        else:
            ln.weight.zero_()
            ln.weight[keep] = gain


def counting_sort_model(config=SUMS, const=1000.0, sink=True, gate=200.0, readout=100.0):
    """The "sums" Transformer with hand-set weights that sorts by counting (module docstring).

    const: K, the constant component of every embedding row (0 shows why it is needed);
    sink:  keep the row mean at 0 by writing minus each sublayer's total into SINK;
    gate:  the smallest |score + bias| of a saturated gate (sigmoid(+-gate)).
    readout: the step between the logits of consecutive candidate digits (100: certain; about 5: the
             confidence label smoothing rewards, for training from these weights).
    """
    check_handset_fits(config)
    model = StudyTransformer(config)
    model.eval()
    zero_all(model)
    K = float(const)
    std0 = math.sqrt(2 * K * K + 2)  # std of sqrt(32) E[t] for every token t (mean 0)
    sink_w = -1.0 if sink else 0.0
    with torch.no_grad():
        set_embedding(model.embedding.weight, K)
        set_identity_norms(model, std0)
        dec = model.decoder[0]  # the one layer that works
        set_written_counts(dec.attn, gate, sink_w)
        set_input_counts(dec.cross, gate, sink_w)
        set_readout(dec.ffn, readout, sink_w)
    return model


def set_embedding(E, K):
    """E[q] = e_q + K (e_C+ - e_C-) - e_SINK for a digit q; E[BOS] likewise with e_BOS."""
    for q in range(DIGITS):
        E[q, R[q]] = 1.0
    E[BOS, BOS_DIM] = 1.0
    E[:, C_PLUS], E[:, C_MINUS], E[:, SINK] = K, -K, -1.0


def set_identity_norms(model, std0):
    """The encoder an identity (none attention + zero W^O, zero FFN), its LN gain std0 keeping the
    memory row of token t equal to sqrt(32) E[t]; every decoder LN the identity too, except the last,
    which keeps R only (logits in the FFN's readout units); unused gates exactly 0."""
    for layer in model.encoder:
        for sub in layer.sub:
            set_layernorm(sub.ln, std0)
    for layer in model.decoder:
        for sub in layer.sub:
            set_layernorm(sub.ln, std0)
        layer.attn.weights.bias.fill_(-1000.0)  # unused heads: gate exactly 0
        layer.cross.weights.bias.fill_(-1000.0)
    set_layernorm(model.decoder[-1].sub[2].ln, std0, keep=R)


def set_written_counts(att, gate, sink_w):
    """Decoder layer 1's self-attention: heads 0, 1 count the copies of p written so far."""
    G = gate * math.sqrt(D_K)  # attend() divides scores by sqrt(d_k)

    def v_self(t):  # token value for the equality gate
        return -3.0 if t == BOS else float(t)

    for h in (0, 1):
        o = h * D_K
        for t in range(DIGITS + 1):
            col = BOS_DIM if t == BOS else R[t]
            v = v_self(t)
            # query 2G (2 v, -1, -v^2), key (v, v^2, 1): Q.K / sqrt(d_k) = -2 gate (v(p) - v(k))^2
            att.wq.weight[o + 0, col] = 2 * G * 2 * v / A
            att.wq.weight[o + 2, col] = -2 * G * v * v / A
            att.wk.weight[o + 0, col] = v / A
            att.wk.weight[o + 1, col] = v * v / A
        att.wq.bias[o + 1] = -2 * G
        att.wk.bias[o + 2] = 1.0
        att.weights.bias[h] = gate  # same token: +gate; any other: <= -gate
    # values: -onehot(k), digits 0..7 in head 0, 8..9 in head 1
    for q in range(DIGITS):
        h, i = divmod(q, D_K)
        att.wv.weight[h * D_K + i, R[q]] = -1.0 / A
        att.wo.weight[H[q], h * D_K + i] = 1.0
        att.wo.weight[SINK, h * D_K + i] = sink_w


def set_input_counts(cr, gate, sink_w):
    """Decoder layer 1's cross-attention: heads 0, 1 count the input's copies of each k >= p."""
    G = gate * math.sqrt(D_K)

    def u_query(t):
        return -1.0 if t == BOS else float(t)

    for h in (0, 1):
        o = h * D_K
        for t in range(DIGITS + 1):
            col = BOS_DIM if t == BOS else R[t]
            # query 2G (1, -(u - 1/2)), key (kval, 1): score 2 gate (kval - u + 1/2), +-gate or beyond
            cr.wq.weight[o + 1, col] = -2 * G * (u_query(t) - 0.5) / A
            cr.wk.weight[o + 0, col] = (-100.0 if t == BOS else float(t)) / A
        cr.wq.bias[o + 0] = 2 * G
        cr.wk.bias[o + 1] = 1.0
        cr.weights.bias[h] = 0.0
    for q in range(DIGITS):
        h, i = divmod(q, D_K)
        cr.wv.weight[h * D_K + i, R[q]] = 1.0 / A
        cr.wo.weight[H[q], h * D_K + i] = 1.0
        cr.wo.weight[SINK, h * D_K + i] = sink_w


def set_readout(ffn, s, sink_w):
    """Decoder layer 1's FFN: present_q = clamp(2 H_q - 1/2, 0, 1) -> s (11 - q) into R_q."""
    up, down = ffn[0], ffn[2]
    for q in range(DIGITS):
        for j, b in ((0, -0.5), (1, -1.5)):
            up.weight[2 * q + j, H[q]] = 2.0
            up.bias[2 * q + j] = b
        score = s * (11 - q)
        down.weight[R[q], 2 * q] = score
        down.weight[R[q], 2 * q + 1] = -score
        down.weight[SINK, 2 * q] = sink_w * score
        down.weight[SINK, 2 * q + 1] = -sink_w * score

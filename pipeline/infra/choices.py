"""The names params.yaml accepts for the model's schemes and the length study's variants."""

# model.positions ("sort any length"): sinusoidal is the paper's (section 3.5) and the default;
# none_encoder adds no positions in the encoder (the decoder keeps sinusoids); learned trains one
# vector per position (both stacks); randomized gives each sequence the sinusoids of a sorted random
# subset of [0, max_len) (Ruoss et al., 2023), in both stacks, in training and at evaluation alike;
# alibi adds no vectors but -m_h |i - j| to the encoder's self-attention scores (Press et al., 2022),
# while the decoder's self-attention keeps only its causal mask and cross-attention has
# no bias (an output step has no distance to an input position); bos adds no positional vectors in
# either stack and opens the source with BOS, as the target is opened: a key present exactly once,
# against which attention can count.
POSITIONS = ("sinusoidal", "none_encoder", "learned", "randomized", "alibi", "bos")
# model.attention: softmax is the paper's softmax(QK^T / sqrt(d_k)) V; log_length multiplies each
# query's scores by log n, n the number of keys it may look at (Chiang and Cholak, 2022); sigmoid
# weighs each key on its own, sigmoid(score + b_h), so attention sums (Ramapuram et al., 2024); none
# attends to nothing (weights 0); split gives half the heads softmax, half sigmoid. One name for every
# attention, or one per kind: encoder self / decoder self / cross.
ATTENTIONS = ("softmax", "log_length", "sigmoid", "split", "none")
ATTENTION_KINDS = ("encoder", "decoder", "cross")
# The study's variants, each a positional scheme trained on study.fixed_lengths ("fixed") or on
# study.train_lengths ("mixed"), with the paper's softmax or, suffixed, another attention: the
# suffix names model.attention. The pipeline's own checkpoints (models/) are always in the study.
STUDY_ATTENTIONS = {
    "": "softmax",
    "_log_length": "log_length",
    "_sigmoid": "sigmoid",  # every attention
    "_sigmoid_decoder": "softmax/sigmoid/sigmoid",  # the decoder's two; the encoder keeps softmax
    "_sigmoid_cross": "softmax/softmax/sigmoid",  # cross-attention alone
    "_sums": "none/sigmoid/sigmoid",  # every count a sum: no encoder attention, sigmoid in the decoder
    "_split": "none/split/split",  # the same, half the decoder's heads softmax: to pick as well as count
}
STUDY_VARIANTS = tuple(f"{p}_{t}{a}" for p in POSITIONS for t in ("fixed", "mixed") for a in STUDY_ATTENTIONS)
# The lean default study: the best softmax and log-length variants of the full study of every scheme
# (a queued experiment away, see reports/README.md) and the best of the sums, from the length
# study's search (pipeline/tools/search_rows.yaml); params.yaml lists the same.
DEFAULT_STUDY_VARIANTS = ("bos_mixed", "bos_mixed_log_length", "bos_mixed_sums")


def parse_variant(variant):
    """(positions, "fixed" or "mixed", model.attention) of a study variant's name: `<positions>_fixed`
    trains on study.fixed_lengths, `<positions>_mixed` on study.train_lengths, with softmax attention
    unless a suffix of STUDY_ATTENTIONS follows (`bos_mixed_log_length`)."""
    lengths = "fixed" if "_fixed" in variant else "mixed"
    positions, _, suffix = variant.partition(f"_{lengths}")
    return positions, lengths, STUDY_ATTENTIONS[suffix]

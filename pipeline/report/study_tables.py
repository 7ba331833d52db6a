"""The length study's tables: the variants, their accuracy by length, and how their wrong outputs
first go wrong. Markdown lines, from the study's saved numbers."""

from pipeline.report.study_metrics import at_bar, seq_acc_by_length, span
from pipeline.study.ranking import bar_key, recorded_bar
from pipeline.study.text import pct

# What each scheme is, in a few words (params.POSITIONS has the details).
SCHEMES = {
    "sinusoidal": "the paper's sinusoids in both stacks",
    "none_encoder": "no positions in the encoder: it cannot tell x from x written twice (a test checks "
    "it), so it sees proportions only",
    "learned": "one trained vector per position; those past the longest training length stay untrained",
    "randomized": "sinusoids at a sorted random subset of [0, max_len), drawn afresh for every sequence in "
    "training and in testing alike (Ruoss et al., 2023)",
    "alibi": "a distance bias in the encoder's self-attention, no position vectors",
    "bos": "no position vectors; BOS opens the source as it opens the target",
}
ATTENTIONS = {
    "log_length": "each query's scores times log n, n the keys it may see, so that a softmax over more "
    "keys is sharper in step",
    "softmax/sigmoid/sigmoid": "softmax in the encoder; in the decoder's self- and cross-attention each key "
    "weighted on its own, sigmoid(score + b_h) with a learned bias per head (Ramapuram et al., 2024), so "
    "attention adds instead of averaging",
    "none/sigmoid/sigmoid": "no attention in the encoder (each input token stays itself, whatever the "
    "length), and sigmoid weights in the decoder's two attentions: every count the decoder reads is a sum",
    "sigmoid": "sigmoid weights, sigmoid(score + b_h), in every attention",
    "softmax/softmax/sigmoid": "sigmoid weights in cross-attention only",
    "none/split/split": "no attention in the encoder; in the decoder's two attentions half the heads "
    "softmax, half sigmoid",
}
FIRST_ERROR_WORDS = {
    "too_few_copies": "moved on too early",
    "extra_copy": "one copy too many",
    "skipped_digit": "skipped a digit",
    "other": "other",
}


def variants_table(metrics, meta):
    """One row per variant: what it is, how it trained, and where it is at the bar."""
    accuracy = meta["bar"]["accuracy"]
    lines = [
        "| variant | positions | attention | trained on | steps | seeds | at the bar at lengths |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for v, m in meta["variants"].items():
        lines.append(
            f"| {v} | {m['positions']} | {m.get('attention', 'softmax')} | {span(m['train_lengths'])} | "
            f"{m['steps']} | {len(m['seeds'])} | {at_bar(metrics, v, accuracy)} |"
        )
    used = {m["positions"] for m in meta["variants"].values()}
    attentions = {m.get("attention", "softmax") for m in meta["variants"].values()} - {"softmax"}
    lines += ["", "The schemes:", ""]
    lines += [f"- {name}: {words}" for name, words in SCHEMES.items() if name in used]
    lines += [f"- attention {name}: {ATTENTIONS[name]}" for name in sorted(attentions) if name in ATTENTIONS]
    return lines


def accuracy_table(metrics, meta):
    """Exact-sequence accuracy by length, every variant a column; trained lengths in bold."""
    variants, (first, last) = list(meta["variants"]), meta["bar"]["lengths"]
    lines = [
        "Exact-sequence accuracy (%, greedy decoding with the key/value cache, mean ± std over seeds) by "
        "input length:",
        "",
        "| length | " + " | ".join(variants) + " |",
        "| --- |" + " --- |" * len(variants),
    ]
    tested = sorted({n for v in variants for n in seq_acc_by_length(metrics, v)})
    beyond = [n for n in tested if n > last and n % 5 == 0]
    for n in [*range(first, last + 1), *beyond]:
        cells = []
        for v in variants:
            cell = accuracy_cell(metrics, v, n)
            trained = n in meta["variants"][v]["train_lengths"] and cell != "–"
            cells.append(f"**{cell}**" if trained else cell)
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lowest = bar_key(recorded_bar(meta["bar"]), "min_seq_acc")
    lines.append(
        f"| min {first}-{last} | " + " | ".join(pct(metrics[f"{v}_{lowest}"]) for v in variants) + " |"
    )
    return lines


def accuracy_cell(metrics, variant, n):
    key = f"{variant}_length_{n}_seq_acc"
    if key not in metrics:
        return "–"
    return f"{100 * metrics[key]:.1f} ± {100 * metrics[key + '_std']:.1f}"


def first_error_table(variant_diagnosis, variants):
    """How each variant's wrong outputs first go wrong, at the longest diagnosis length: the evidence
    on whether a variant miscounts the copies of a digit or loses its place."""
    lengths = {int(n) for v in variants for n in variant_diagnosis.get(v, {})}
    if not lengths:
        return []
    n = str(max(lengths))
    lines = [
        "",
        f"How outputs first go wrong at length {n} (% of all outputs, mean over seeds): an output that "
        "moves on from a digit before writing all its copies undercounts the input, one that writes "
        "a copy too many overcounts it.",
        "",
        "| variant | exact | " + " | ".join(FIRST_ERROR_WORDS.values()) + " |",
        "| --- | --- |" + " --- |" * len(FIRST_ERROR_WORDS),
    ]
    for v in [v for v in variants if n in variant_diagnosis.get(v, {})]:
        d = variant_diagnosis[v][n]
        kinds = d.get("first_error", {})
        cells = [pct(kinds[k]) if k in kinds else "–" for k in FIRST_ERROR_WORDS]
        lines.append(f"| {v} | {pct(d['seq_acc'])} | " + " | ".join(cells) + " |")
    return lines

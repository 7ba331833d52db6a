"""The length study's section of the report ("Length generalisation"), written from the study's saved
numbers: the variants' table, the bar's verdict, what the variants show, the diagnosis text."""

import re

from pipeline.study.text import pct


def span(lengths):
    return f"{lengths[0]}-{lengths[-1]}" if len(lengths) > 2 else ", ".join(map(str, lengths))


def describe(info):
    attention = info.get("attention", "softmax")
    return f"positions {info['positions']}, trained on {span(info['train_lengths'])}" + (
        "" if attention == "softmax" else f", attention {attention}: {ATTENTIONS[attention]}"
    )


# What each scheme is, in a few words (params.POSITIONS has the details).
SCHEMES = {
    "sinusoidal": "the paper's sinusoids in both stacks",
    "none_encoder": "no positions in the encoder: it cannot tell x from x written twice (a test checks "
    "it), so it sees proportions only",
    "learned": "one trained vector per position; those past the longest training length stay untrained",
    "randomized": "sinusoids at a sorted random subset of [0, max_len) in training, 0, 1, 2, ... when tested",
    "alibi": "a distance bias in the encoder's self-attention, no position vectors",
    "bos": "no position vectors; BOS opens the source as it opens the target",
}


ATTENTIONS = {
    "log_length": "each query's scores times log n, n the keys it may see, so that a softmax over more "
    "keys is sharper in step",
}


def seq_acc_by_length(metrics, variant):
    """{length: mean exact-sequence accuracy} of one variant, from the study's flat metrics."""
    key = re.compile(rf"{re.escape(variant)}_length_(\d+)_seq_acc")
    return {int(m[1]): value for k, value in metrics.items() if (m := key.fullmatch(k))}


def standing(metrics, v):
    """How close a variant came to the bar, to rank by: the lengths from 1 it sorts at the bar, then
    its worst accuracy on the bar's lengths."""
    return metrics[f"{v}_bar_up_to_length"], metrics[f"{v}_min_seq_acc_1_20"]


def headline(metrics, variants):
    """The report's first lines on the length study: the bar's verdict and the best variant."""
    if not variants or "bar_met" not in metrics:
        return []
    best = max(variants, key=lambda v: standing(metrics, v))
    reach = metrics[f"{best}_bar_up_to_length"]
    verdict = "meets" if metrics["bar_met"] else "does not meet"
    at_20 = metrics.get(f"{best}_length_20_seq_acc")
    return [
        f"- Length generalisation: the best of {len(variants)} variants, {best}, {verdict} the "
        f"bar (>= 99 % exact at every length 1-20): it is at the bar up to length {reach}"
        + (f", {pct(at_20)} at 20" if at_20 is not None else "")
        + "; see the section below."
    ]


def at_bar(metrics, v, accuracy):
    """Where a variant is at the bar (exact sequences >= `accuracy`), in words."""
    reach = metrics[f"{v}_bar_up_to_length"]
    if reach:
        return f"at the bar at every length from 1 to {reach}"
    good = [n for n, value in seq_acc_by_length(metrics, v).items() if value >= accuracy]
    return f"at the bar only at length {', '.join(map(str, sorted(good)))}" if good else "never at the bar"


def variants_text(metrics, meta, diag):
    """Each variant's numbers in words, the two ingredients, and what the best one still gets wrong."""
    lines = ["**What the variants show** (exact sequences, mean over seeds):", ""]
    accuracy = meta["bar"]["accuracy"]
    for v, info in meta["variants"].items():
        shown = [n for n in (6, 10, 11, 12, 14, 16, 20) if f"{v}_length_{n}_seq_acc" in metrics]
        lines.append(
            f"- {v} ({describe(info)}; {SCHEMES.get(info['positions'], info['positions'])}): "
            + ", ".join(f"{pct(metrics[f'{v}_length_{n}_seq_acc'])} at {n}" for n in shown)
            + f"; {at_bar(metrics, v, accuracy)}."
        )
    reach = {v: metrics[f"{v}_bar_up_to_length"] for v in meta["variants"]}
    reach_names = ("sinusoidal_mixed", "bos_fixed", "bos_mixed")
    if set(reach_names) <= set(reach):
        alone = max(reach["sinusoidal_mixed"], reach["bos_fixed"])
        verdict = "Neither ingredient alone does it" if alone < reach["bos_mixed"] else "Compare"
        sinusoidal, bos_fixed, bos_mixed = (at_bar(metrics, v, accuracy) for v in reach_names)
        lines += [
            "",
            f"{verdict}: mixed lengths with the paper's sinusoids are {sinusoidal}, "
            f"a start token trained on one length is {bos_fixed}, both together "
            f"are {bos_mixed}. Mixed lengths make the length matter, so the model "
            "has to count; the start token gives attention something to count against.",
        ]
    pairs = [
        (v.removesuffix("_log_length"), v)
        for v in meta["variants"]
        if v.endswith("_log_length") and v.removesuffix("_log_length") in meta["variants"]
    ]
    if pairs:
        names = [v for pair in pairs for v in pair]
        shown = [n for n in (10, 14, 20) if all(f"{v}_length_{n}_seq_acc" in metrics for v in names)]
        lines += [
            "",
            "Log-length attention against the same scheme with the paper's softmax (exact sequences, "
            + ", ".join(f"at {n}" for n in shown)
            + "): "
            + "; ".join(
                f"{base} "
                + " / ".join(pct(metrics[f"{base}_length_{n}_seq_acc"]) for n in shown)
                + " becomes "
                + " / ".join(pct(metrics[f"{log}_length_{n}_seq_acc"]) for n in shown)
                for base, log in pairs
            )
            + ".",
        ]
        last = shown[-1] if shown else None
        at_last = {v: metrics.get(f"{v}_length_{last}_seq_acc") for v in names}
        if last and all(at_last[log] > at_last[base] for base, log in pairs):
            lines[-1] += f" At {last} digits it is ahead for every scheme."
    trained = [v for v in meta["variants"] if v != "pipeline"]
    if not trained:
        return lines
    best = max(trained, key=lambda v: standing(metrics, v))
    lines += ["", f"The best, {best}, sorts every length from 1 to {reach[best]} at the bar."]
    shares = attention_shares(diag.get("variants", {}), trained)
    if best in shares:
        lines[-1] += (
            f" Its cross-attention puts {shares[best]} of its weight on the input digits equal to the one "
            "it writes (last layer, mean over heads and steps): each extra input digit takes a share of "
            "the average, so the count read through it shrinks, and the output moves on from a digit "
            "before writing all its copies (the table below). Inputs of at most 10 digits never ask "
            "attention to be sharper than 10 digits need."
        )
        others = [f"{v} {shares[v]}" for v in shares if v != best and "log_length" in v]
        if others:
            lines[-1] += " With log-length attention the share falls less: " + "; ".join(others) + "."
    return lines + first_error_table(diag.get("variants", {}), trained)


def attention_shares(variant_diagnosis, variants, lengths=("10", "20")):
    """Per variant, in words: its cross-attention's weight on the digit it writes at `lengths`."""
    return {
        v: " and ".join(
            f"{pct(variant_diagnosis[v][n]['attention_on_written_digit'])} at length {n}" for n in lengths
        )
        for v in variants
        if all(n in variant_diagnosis.get(v, {}) for n in lengths)
    }


FIRST_ERROR_WORDS = {
    "too_few_copies": "moved on too early",
    "extra_copy": "one copy too many",
    "skipped_digit": "skipped a digit",
    "other": "other",
}


def first_error_table(variant_diagnosis, variants):
    """How each variant's wrong outputs first go wrong, at the longest diagnosis length: the evidence
    on whether a variant miscounts the copies of a digit or loses its place."""
    lengths = {int(n) for v in variants for n in variant_diagnosis.get(v, {})}
    if not lengths:
        return []
    n = str(max(lengths))
    rows = [v for v in variants if n in variant_diagnosis.get(v, {})]
    lines = [
        "",
        f"How outputs first go wrong at length {n} (% of all outputs, mean over seeds): an output that "
        "moves on from a digit before writing all its copies undercounts the input, one that writes "
        "a copy too many overcounts it.",
        "",
        "| variant | exact | " + " | ".join(FIRST_ERROR_WORDS.values()) + " |",
        "| --- | --- |" + " --- |" * len(FIRST_ERROR_WORDS),
    ]
    for v in rows:
        d = variant_diagnosis[v][n]
        kinds = d.get("first_error", {})
        lines.append(
            f"| {v} | {pct(d['seq_acc'])} | "
            + " | ".join(pct(kinds[k]) if k in kinds else "–" for k in FIRST_ERROR_WORDS)
            + " |"
        )
    return lines


def _cell(metrics, variant, n):
    key = f"{variant}_length_{n}_seq_acc"
    if key not in metrics:
        return "–"
    return f"{100 * metrics[key]:.1f} ± {100 * metrics[key + '_std']:.1f}"


def section(metrics, meta, diagnosis_md, diag=None):
    """The report's "Length generalisation" section: the table, the bar's verdict, the diagnosis."""
    variants = list(meta["variants"])
    bar = meta["bar"]
    lines = [
        "## Length generalisation",
        "",
        f"Exact-sequence accuracy (%, greedy decoding with the key/value cache, mean ± std over seeds) "
        f"by input length. The bar: a variant trained only on lengths up to 10 sorts at least "
        f"{100 * bar['accuracy']:.0f} % of sequences exactly, mean over seeds, at every length "
        f"{bar['lengths'][0]}-{bar['lengths'][1]}.",
        "",
        "| variant | positions | attention | trained on | steps | seeds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for v in variants:
        m = meta["variants"][v]
        lines.append(
            f"| {v} | {m['positions']} | {m.get('attention', 'softmax')} | {span(m['train_lengths'])} | "
            f"{m['steps']} | {len(m['seeds'])} |"
        )
    lines += ["", "| length | " + " | ".join(variants) + " |", "| --- |" + " --- |" * len(variants)]
    tested = sorted({n for v in variants for n in seq_acc_by_length(metrics, v)})
    first, last = bar["lengths"]
    beyond = [n for n in tested if n > last and n % 5 == 0]
    for n in [*range(first, last + 1), *beyond]:
        trained = [v for v in variants if n in meta["variants"][v]["train_lengths"]]
        cells = [_cell(metrics, v, n) for v in variants]
        cells = [f"**{c}**" if v in trained and c != "–" else c for v, c in zip(variants, cells, strict=True)]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines.append("| min 1-20 | " + " | ".join(pct(metrics[f"{v}_min_seq_acc_1_20"]) for v in variants) + " |")
    sets = meta.get("test_sets", {})
    every = [n for n, t in sets.items() if t["every_sequence"]]
    seen = [f"{t['in_training']} of {t['size']} at length {n}" for n, t in sets.items() if t["in_training"]]
    lines += [
        "",
        "Bold: lengths the variant was trained on. "
        + (f"Lengths {', '.join(every)} are tested on every sequence there is. " if every else "")
        + (
            f"Test sequences also found in some training set of the study: {'; '.join(seen)} (where "
            "training holds nearly every sequence of that length); at every other length, none."
            if seen
            else "No test sequence occurs in any training set of the study."
        )
        + (
            " The pipeline's own training set (data/train.npz) holds "
            f"{metrics['pipeline_test_overlap_total']} of the test sequences."
            if "pipeline_test_overlap_total" in metrics
            else ""
        ),
        "",
    ]
    met = [v for v in variants if metrics[f"{v}_meets_bar"]]
    ranked = sorted(variants, key=lambda v: standing(metrics, v), reverse=True)  # stable, as ascending
    closeness = "; ".join(f"{v} {at_bar(metrics, v, bar['accuracy'])}" for v in ranked)
    verdict = f"**Bar met** by {', '.join(met)}." if met else "**Bar not met** by any variant."
    lines.append(f"{verdict} How close each came: {closeness}.")
    lines += ["", *variants_text(metrics, meta, diag or {}), "", diagnosis_md.strip(), ""]
    lines += [
        "Every variant of `study.variants` is a stage of its own (`variant@<name>`, its results in "
        "`metrics/variants/<name>.json`), so DVC caches each apart: adding a name to `study.variants` "
        "trains that variant only, and a fresh clone reuses the committed results instead of retraining. "
        "A variant costs about 2 minutes of one core per seed (the s / seed column, where this machine "
        "ran it), about 4.5 minutes of a 2-core machine for its three seeds. To rerun one variant, or to "
        "try others:",
        "",
        "```",
        "dvc repro -f variant@bos_mixed",
        "dvc exp run -S 'study.variants=[bos_mixed,none_encoder_mixed_log_length,learned_mixed_log_length]'",
        "```",
        "",
    ]
    return lines

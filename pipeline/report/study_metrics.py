"""The length study's numbers, read for the report: a variant's accuracy by length, how close it
came to the bar (pipeline/study/ranking.py ranks them)."""

import re


def span(lengths):
    return f"{lengths[0]}-{lengths[-1]}" if len(lengths) > 2 else ", ".join(map(str, lengths))


def seq_acc_by_length(metrics, variant):
    """{length: mean exact-sequence accuracy} of one variant, from the study's flat metrics."""
    key = re.compile(rf"{re.escape(variant)}_length_(\d+)_seq_acc")
    return {int(m[1]): value for k, value in metrics.items() if (m := key.fullmatch(k))}


def at_bar(metrics, v, accuracy):
    """Where a variant is at the bar (exact sequences >= `accuracy`), in a few words."""
    reach = metrics[f"{v}_bar_up_to_length"]
    if reach:
        return f"1-{reach}"
    good = [n for n, value in seq_acc_by_length(metrics, v).items() if value >= accuracy]
    return f"only {', '.join(map(str, sorted(good)))}" if good else "never"

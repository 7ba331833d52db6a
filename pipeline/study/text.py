"""The length study's diagnosis in words, written from its numbers (metrics/study/diagnosis.md): why the
pipeline's model fails away from its training length. A pure function of saved results."""

import statistics


def pct(x, digits=1):
    return f"{100 * x:.{digits}f} %"


def _at(diagnosis, key, lengths):
    return ", ".join(f"{pct(diagnosis[str(n)][key])} at {n}" for n in lengths if str(n) in diagnosis)


def habit_word(rate):
    return "absent" if rate < 0.05 else "rare" if rate < 0.2 else "present"


def diagnosis_text(diag):
    """A short account of why the pipeline's model fails away from its training length."""
    d, trained = diag["lengths"], diag.get("trained_lengths", [10])
    lengths = sorted(int(n) for n in d)
    short = [n for n in lengths if n < min(trained)]
    long = [n for n in lengths if n > max(trained)]
    ref = max(trained)
    lines = [
        f"**Why the lesson's model fails away from length {', '.join(map(str, trained))}** "
        f"(the pipeline's checkpoints, {len(diag['seeds'])} seeds, mean over seeds; "
        f"exact sequences {_at(d, 'seq_acc', lengths)}).",
        "",
        "- *Its outputs stay sorted but hold the wrong digits.* "
        f"Sorted outputs: {_at(d, 'sorted', lengths)}. "
        f"Outputs that leave out a digit of the input: {_at(d, 'missing_digit', lengths)}; outputs with a "
        f"digit the input lacks: {_at(d, 'extra_digit', lengths)}.",
    ]
    habits = []
    for key, words in [
        ("starts_with_0_given_no_0", "starts with 0 when the input has no 0"),
        ("ends_with_9_given_no_9", "ends with 9 when the input has no 9"),
    ]:
        parts = [f"{pct(d[str(n)][key])} at {n} ({habit_word(d[str(n)][key])})" for n in lengths]
        habits.append(f"the output {words}: {'; '.join(parts)}")
    lines.append(
        '- *The lesson\'s guess ("starts with 0, ends with 9"), tested.* '
        + "; ".join(h[0].upper() + h[1:] if i == 0 else h for i, h in enumerate(habits))
        + ". A habit of starting with 0 would show on inputs without a 0; it does not. Ending with 9 "
        "shows only on inputs longer than the training length, as a consequence of the next point."
    )
    where = []
    for n in lengths:
        x = d[str(n)]
        if x["seq_acc"] > 0.95 or x.get("first_error_mean") is None:
            continue
        digits = {k: v for k, v in enumerate(x["acc_by_digit"]) if v is not None}
        best, worst = max(digits, key=digits.get), min(digits, key=digits.get)
        repeats = ", ".join(f"{pct(v, 0)} with {k}" for k, v in x["seq_acc_by_repeats"].items())
        where.append(
            f"at {n}, wrong outputs start with {x['first_error_mean']:.1f} right digits on "
            f"average; digit {best} is written right most often ({pct(digits[best], 0)} of its places), "
            f"digit {worst} least ({pct(digits[worst], 0)}); exact outputs by the largest count of one "
            f"digit in the input: {repeats}"
        )
    if where:
        lines.append("- *Where it goes wrong:* " + "; ".join(where) + ".")
    speed = ", ".join(
        f"{d[str(n)]['rank_speed']:.2f} at {n} (its cross-attention {d[str(n)]['attention_speed']:.2f}; "
        f"{n}/{ref} = {n / ref:.2f})"
        for n in lengths
    )
    first = statistics.fmean(d[str(n)]["acc_by_position"][0] for n in lengths)
    lines.append(
        f"- *What the numbers show instead: a clock set to {ref}.* The first digit is right "
        f"({pct(first)} over these lengths); then each decoding step moves through the sorted input "
        f"at a speed, relative to the correct one place a step, of {speed}. At step t the model "
        f"writes the digit a fraction t/{ref} of the way through the sorted input, and its "
        "cross-attention looks there: it learned "
        f"to sort by proportion, with the length fixed at {ref}."
        + (
            f" Shorter inputs ({', '.join(map(str, short))}) are walked too slowly: digits are repeated "
            "and the largest never reached (the missing digits above)."
            if short
            else ""
        )
        + (
            f" Longer inputs ({', '.join(map(str, long))}) are walked too fast: the largest digit comes "
            "early and is repeated to the end, hence the 9s."
            if long
            else ""
        )
    )
    lines.append(
        "- *Why proportions.* Attention takes weighted averages: a softmax over the input can tell what "
        "fraction of it is a 3, never how many 3s there are, unless some key is always there exactly "
        "once to compare with. The decoder has one (BOS); the encoder has only its position vectors, "
        f"and with every training input {ref} long the model never needed a count: proportion x {ref} "
        "was enough."
    )
    return "\n".join(lines) + "\n"

"""Issue 7's words, written from its numbers: the diagnosis text (metrics/study/diagnosis.md) and the
report's "Length generalisation" section. Pure functions of saved results."""

import statistics

BAR_LENGTHS = range(1, 21)


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


FULL_STUDY = (
    "pipeline,sinusoidal_fixed,sinusoidal_mixed,none_encoder_mixed,learned_mixed,randomized_mixed,"
    "alibi_mixed,bos_fixed,bos_mixed"
)


def describe(info):
    lengths = info["train_lengths"]
    span = f"{lengths[0]}-{lengths[-1]}" if len(lengths) > 2 else ", ".join(map(str, lengths))
    return f"positions {info['positions']}, trained on {span}"


def variants_text(metrics, meta, diag):
    """Each variant's numbers in words, and what the best one still gets wrong."""
    lines = ["**What the variants show** (exact sequences, mean over seeds):", ""]
    for v, info in meta["variants"].items():
        shown = [n for n in (6, 10, 12, 14, 16, 20) if f"{v}_length_{n}_seq_acc" in metrics]
        reach = metrics[f"{v}_bar_up_to_length"]
        lines.append(
            f"- {v} ({describe(info)}): "
            + ", ".join(f"{pct(metrics[f'{v}_length_{n}_seq_acc'])} at {n}" for n in shown)
            + (
                f"; at the bar from length 1 up to {reach}."
                if reach
                else "; at the bar at no length from 1 up."
            )
        )
    trained = [v for v in meta["variants"] if v != "pipeline"]
    if not trained:
        return lines
    best = max(trained, key=lambda v: (metrics[f"{v}_bar_up_to_length"], metrics[f"{v}_min_seq_acc_1_20"]))
    d = diag.get("variants", {}).get(best, {})
    reach = metrics[f"{best}_bar_up_to_length"]
    lines += ["", f"The best, {best}, sorts every length from 1 to {reach} at the bar."]
    share = [n for n in (10, 20) if str(n) in d]
    if len(share) == 2:
        lines[-1] += (
            " What it still gets wrong beyond: its cross-attention puts "
            + " and ".join(f"{pct(d[str(n)]['attention_on_written_digit'])} at length {n}" for n in share)
            + " of its weight on the input digits equal to the one it writes (last layer, mean over heads "
            "and steps): each extra input digit takes a share of the average, so the counts read through it "
            "blur and outputs get a copy too many or too few. Counting against a start token is exact only "
            "for attention sharp enough to ignore every other digit, and training on 10 digits at most "
            "never asks for more sharpness than 10 digits need."
        )
    return lines


def _cell(metrics, variant, n):
    key = f"{variant}_length_{n}_seq_acc"
    if key not in metrics:
        return "–"
    return f"{100 * metrics[key]:.1f} ± {100 * metrics[key + '_std']:.1f}"


def section(metrics, meta, diagnosis_md, seconds=None, diag=None):
    """The report's "Length generalisation" section: the table, the bar's verdict, the diagnosis."""
    variants = list(meta["variants"])
    seconds = seconds or {}
    bar = meta["bar"]
    lines = [
        "## Length generalisation (issue 7)",
        "",
        f"Exact-sequence accuracy (%, greedy decoding with the key/value cache, mean ± std over seeds) "
        f"by input length. The bar: a variant trained only on lengths up to 10 sorts at least "
        f"{100 * bar['accuracy']:.0f} % of sequences exactly, mean over seeds, at every length "
        f"{bar['lengths'][0]}-{bar['lengths'][1]}.",
        "",
        "| variant | positions | trained on | steps | seeds | s / seed |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for v in variants:
        m = meta["variants"][v]
        lengths = m["train_lengths"]
        span = f"{lengths[0]}-{lengths[-1]}" if len(lengths) > 2 else ", ".join(map(str, lengths))
        cost = f"{seconds[v]:.0f}" if v in seconds else ("pipeline" if v == "pipeline" else "?")
        lines.append(f"| {v} | {m['positions']} | {span} | {m['steps']} | {len(m['seeds'])} | {cost} |")
    lines += ["", "| length | " + " | ".join(variants) + " |", "| --- |" + " --- |" * len(variants)]
    tested = sorted({int(k.split("_length_")[1].split("_")[0]) for k in metrics if "_length_" in k})
    beyond = [n for n in tested if n > BAR_LENGTHS.stop - 1 and n % 5 == 0]
    for n in [*BAR_LENGTHS, *beyond]:
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
        ),
        "",
    ]
    met = [v for v in variants if metrics[f"{v}_meets_bar"]]
    ranked = sorted(variants, key=lambda v: -metrics[f"{v}_min_seq_acc_1_20"])
    closeness = "; ".join(
        f"{v}: {pct(metrics[f'{v}_min_seq_acc_1_20'])} at its worst length "
        f"{metrics[f'{v}_worst_length_1_20']}"
        for v in ranked
    )
    if met:
        lines.append(f"**Bar met** by {', '.join(met)}. Worst length 1-20 of each variant: {closeness}.")
    else:
        lines.append(f"**Bar not met** by any variant. Worst length 1-20 of each variant: {closeness}.")
    lines += ["", *variants_text(metrics, meta, diag or {}), "", diagnosis_md.strip(), ""]
    lines += [
        "The default `dvc repro` runs the variants in `study.variants` (params.yaml): the pipeline's "
        "own checkpoints, tested, and the best variant, trained; the seconds above are its cost here. "
        "The full comparison trains every variant (about 2 minutes of one core per seed each) as a "
        "queued experiment:",
        "",
        "```",
        f"dvc exp run --queue -n study-all -S 'study.variants=[{FULL_STUDY}]'",
        "dvc queue start -j 1 && dvc queue logs study-all",
        "dvc exp show --drop '.*' --keep 'min_seq_acc_1_20|bar_up_to_length'",
        "dvc exp apply study-all && dvc repro report   # this report, with every variant",
        "```",
        "",
    ]
    return lines

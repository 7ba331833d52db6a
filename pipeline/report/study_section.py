"""The length study's section of the report ("Length generalisation"), written from the study's saved
numbers: the variants, their accuracy by length, the bar's verdict, what the variants show, and the
diagnosis text. Numbers stay in the tables; the prose says what they show."""

from pipeline.report import search_section
from pipeline.report.study_metrics import at_bar
from pipeline.report.study_tables import accuracy_table, first_error_table, variants_table
from pipeline.study.ranking import best_variant, recorded_bar
from pipeline.study.text import pct

ADDING = ("sigmoid", "split")  # attentions whose weights do not sum to 1: they count

RERUN = [
    "Every variant of `study.variants` is a stage of its own (`variant@<name>`, its results in "
    "`metrics/variants/<name>.json`), so DVC caches each apart: adding a name to `study.variants` trains "
    "that variant only, and a fresh clone reuses the committed results instead of retraining. The "
    "default study is lean: the lesson's model, the best softmax variant, the best log-length variant "
    "and the best of the sums. The other schemes stay one command away, as queued experiments:",
    "",
    "```",
    "dvc exp run --queue -S 'study.variants=[sinusoidal_mixed,none_encoder_mixed,learned_mixed,alibi_mixed]'",
    "dvc exp run --queue -S 'study.variants=[randomized_mixed,bos_fixed,sinusoidal_mixed_log_length]'",
    "dvc exp run --queue -S 'study.variants=[alibi_mixed_log_length,bos_mixed_sigmoid_decoder]'",
    "dvc queue start && dvc exp show --only-changed",
    "dvc repro -f variant@bos_mixed        # one variant again",
    "```",
]


def headline(metrics, variants, bar):
    """The study's answer in one sentence: the bar's verdict and how far the best variant got.
    `variants`: the study's trained variants; `bar`: the bar from the study's meta.json."""
    if not variants or "bar_met" not in metrics:
        return ""
    best = best_variant(metrics, variants, recorded_bar(bar))
    which = (
        f"The best of {len(variants)} variants, {best}," if len(variants) > 1 else f"The one variant, {best},"
    )
    verdict = "meets" if metrics["bar_met"] else "does not meet"
    reach = at_bar(metrics, best, bar["accuracy"])
    (first, last), at_last = bar["lengths"], metrics.get(f"{best}_length_{bar['lengths'][1]}_seq_acc")
    return (
        f"{which} {verdict} the bar (>= {100 * bar['accuracy']:.0f} % exact at every length {first}-{last}): "
        + (f"it is at the bar at lengths {reach}" if reach != "never" else "it is at the bar at no length")
        + (f", {pct(at_last)} at {last}." if at_last is not None else ".")
    )


def section(metrics, meta, diagnosis_md, diag=None, search=None):
    """The report's "Length generalisation" section, as Markdown lines."""
    bar = meta["bar"]
    lines = [
        "## Length generalisation",
        "",
        "Can a model trained only on lengths up to 10 sort longer inputs? The bar: at least "
        f"{100 * bar['accuracy']:.0f} % of sequences sorted exactly, mean over seeds (and no seed below "
        f"{100 * bar.get('seed_floor', 0):.0f} %), at every length "
        f"{bar['lengths'][0]}-{bar['lengths'][1]}. Each variant changes how the model knows positions, "
        "what it trains on, or how its attention scales; the pipeline's own model is the first row.",
        "",
        *variants_table(metrics, meta),
        "",
        *accuracy_table(metrics, meta),
        "",
        test_sets_text(metrics, meta),
        "",
        verdict_text(metrics, meta),
        "",
        *variants_text(metrics, meta, diag or {}),
        "",
        diagnosis_md.strip(),
        "",
        *search_section.section(search or {"rows": []}),
        *RERUN,
        "",
    ]
    return lines


def test_sets_text(metrics, meta):
    """Which test sequences could have been seen in training."""
    sets = meta.get("test_sets", {})
    every = [n for n, t in sets.items() if t["every_sequence"]]
    seen = [f"{t['in_training']} of {t['size']} at length {n}" for n, t in sets.items() if t["in_training"]]
    return (
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
        )
    )


def verdict_text(metrics, meta):
    variants = list(meta["variants"])
    met = [v for v in variants if metrics[f"{v}_meets_bar"]]
    verdict = f"**Bar met** by {', '.join(met)}." if met else "**Bar not met** by any variant."
    trained = [v for v in variants if v != "pipeline"] or variants
    best = best_variant(metrics, trained, recorded_bar(meta["bar"]))
    return (
        f"{verdict} The closest, {best}, sorts every length from 1 to {metrics[f'{best}_bar_up_to_length']}."
    )


def variants_text(metrics, meta, diag):
    """What the variants show: the two ingredients, log-length attention, and what the best one
    still gets wrong."""
    variants = meta["variants"]
    lines = [
        *ingredients_text(metrics, variants, meta["bar"]["accuracy"]),
        *log_length_text(metrics, variants),
    ]
    trained = [v for v in variants if v != "pipeline"]
    if not trained:
        return lines
    best = best_variant(metrics, trained, recorded_bar(meta["bar"]))
    shares = attention_shares(diag.get("variants", {}), trained)
    if best in shares:
        cross = variants[best].get("attention", "softmax").split("/")[-1]  # one name, or the last of three
        sums = cross in ADDING
        text = (
            sums_text(best, shares, metrics, diag["variants"][best])
            if sums
            else average_text(best, shares, metrics)
        )
        lines += ["", text]
    return lines + first_error_table(diag.get("variants", {}), trained)


def average_text(best, shares, metrics):
    """Why a variant whose cross-attention averages fails at longer inputs."""
    text = (
        f"Why the best, {best}, still fails at longer inputs: the weight its cross-attention puts on the "
        f"input digits equal to the one it writes {moves(shares[best])} (last layer, mean over heads and "
        "steps). Each extra input digit takes a share of the average, so the count read through it "
        "shrinks, and the output moves on from a digit before writing all its copies (the table "
        "below). Inputs of at most 10 digits never ask attention to be sharper than 10 digits need."
    )
    others = [f"{v} {moves(shares[v])}" for v in shares if v != best and "log_length" in v]
    return text + (" With log-length attention: " + "; ".join(others) + "." if others else "")


def sums_text(best, shares, metrics, diagnosis):
    """Why a variant whose cross-attention adds gets further, and where it stops, from its numbers:
    its weight on the digit it writes, its first errors at the longest diagnosis length, its reach."""
    beyond = [n for n in (20, 25, 30, 40) if f"{best}_length_{n}_seq_acc" in metrics]
    at = ", ".join(f"{pct(metrics[f'{best}_length_{n}_seq_acc'])} at {n}" for n in beyond)
    n = str(max(int(k) for k in diagnosis))
    first = diagnosis[n].get("first_error", {})
    early, extra = first.get("too_few_copies", 0.0), first.get("extra_copy", 0.0)
    return (
        f"Why the best, {best}, gets further: its cross-attention adds instead of averaging, so the "
        f"sum of the weights it puts on the input digits equal to the one it writes {moves(shares[best])} "
        "(last layer, mean over heads and steps; a sum of sigmoid weights, not a share): a count read "
        f"through it does not shrink as the input grows. At length {n}, {pct(early)} of its outputs move "
        f"on from a digit too early and {pct(extra)} write a copy too many (the table below). Where it "
        f"stops: it sorts at the bar up to length {metrics[f'{best}_bar_up_to_length']}, then {at}."
    )


def moves(share):
    """'rises from 45.4 % at length 10 to 60.9 % at length 20', or 'falls ...'."""
    (first, a), (last, b) = share
    return f"{'rises' if b > a else 'falls'} from {pct(a)} at length {first} to {pct(b)} at length {last}"


def ingredients_text(metrics, variants, accuracy):
    """Mixed training lengths and a start token, alone and together."""
    names = ("sinusoidal_mixed", "bos_fixed", "bos_mixed")
    if not set(names) <= set(variants):
        return []
    reach = {v: metrics[f"{v}_bar_up_to_length"] for v in names}
    alone = max(reach["sinusoidal_mixed"], reach["bos_fixed"])
    verdict = "Neither ingredient alone does it" if alone < reach["bos_mixed"] else "Compare"
    sinusoidal, bos_fixed, bos_mixed = (at_bar(metrics, v, accuracy) for v in names)
    return [
        f"**What the variants show.** {verdict}: at the bar, mixed lengths with the paper's sinusoids "
        f"reach lengths {sinusoidal}, a start token trained on one length {bos_fixed}, both together "
        f"{bos_mixed}. Mixed lengths make the length matter, so the model has to count; the start token "
        "gives attention something to count against."
    ]


def log_length_text(metrics, variants):
    """Each scheme with log-length attention against the same scheme with the paper's softmax."""
    pairs = [
        (v.removesuffix("_log_length"), v)
        for v in variants
        if v.endswith("_log_length") and v.removesuffix("_log_length") in variants
    ]
    names = [v for pair in pairs for v in pair]
    shown = [n for n in (10, 14, 20) if all(f"{v}_length_{n}_seq_acc" in metrics for v in names)]
    if not pairs or not shown:
        return []

    def at(v):
        return " / ".join(pct(metrics[f"{v}_length_{n}_seq_acc"]) for n in shown)

    text = (
        "Log-length attention against the same scheme with the paper's softmax (exact sequences at "
        + ", ".join(map(str, shown))
        + "): "
        + "; ".join(f"{base} {at(base)} becomes {at(log)}" for base, log in pairs)
        + "."
    )
    last = shown[-1]
    if all(
        metrics[f"{log}_length_{last}_seq_acc"] > metrics[f"{base}_length_{last}_seq_acc"]
        for base, log in pairs
    ):
        text += f" At {last} digits it is ahead for every scheme."
    return ["", text]


def attention_shares(variant_diagnosis, variants, lengths=("10", "20")):
    """Per variant: its cross-attention's weight on the digit it writes at each of `lengths`,
    ((length, weight), (length, weight))."""
    return {
        v: tuple((n, variant_diagnosis[v][n]["attention_on_written_digit"]) for n in lengths)
        for v in variants
        if all(n in variant_diagnosis.get(v, {}) for n in lengths)
    }

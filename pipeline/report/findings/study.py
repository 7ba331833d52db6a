"""Findings on the length study: how far its variants get, and why the lesson's model fails away
from its training length (metrics/study/summary.json, metrics/study/diagnosis.json)."""

from pipeline.report import study_section
from pipeline.report.findings.finding import Figure, Finding


def length_study(params, study, meta):
    text = study_section.headline(study, params.study.variants, meta["bar"]) or "The study ran no variant."
    figures = (
        Figure("study_length.png", "Exact sequences by input length for each variant, seed range as a band."),
        Figure(
            "study_heatmap.png",
            "Every variant at every tested length, mean over seeds; trained lengths outlined.",
        ),
    )
    text += " The section below has the table and what the variants show."
    return Finding("How far the length study's variants get", text, figures)


def why_it_fails(diag):
    """The pace at which the lesson's model walks the sorted input, at the shortest and the longest
    diagnosis length. When that pace follows length / trained length more closely than the correct
    pace of 1, the model sorts by proportion: a clock set to the length it trained on."""
    ref = max(diag["trained_lengths"])
    lengths = [n for n in sorted(int(k) for k in diag["lengths"]) if n != ref]
    ends = sorted({lengths[0], lengths[-1]}) if lengths else []
    pace = {n: diag["lengths"][str(n)]["rank_speed"] for n in ends}
    clock = bool(ends) and all(abs(pace[n] - n / ref) < abs(pace[n] - 1) for n in ends)
    paces = " and ".join(f"{pace[n]:.2f} at length {n} ({n}/{ref} = {n / ref:.2f})" for n in ends)
    text = (
        f"Relative to the correct pace of one place a step, the model trained on length {ref} walks "
        f"through the sorted input at a pace of {paces or 'no other length tested'}."
        + (
            f" At step t it writes the digit a fraction t/{ref} of the way through: it sorts by "
            f"proportion, with the length fixed at {ref}."
            if clock
            else ""
        )
        + " The section below has the evidence."
    )
    title = f"Why the lesson's model fails: a clock set to {ref}" if clock else "Why the lesson's model fails"
    figures = (
        Figure(
            "study_diagnosis.png",
            f"Why the model trained on length {ref} fails elsewhere: the pace of its outputs.",
        ),
        Figure(
            "study_attention.png",
            "Where the cross-attention looks, inputs ordered by their rank (models/ and the three most "
            "accurate variants).",
        ),
    )
    return Finding(title, text, figures)

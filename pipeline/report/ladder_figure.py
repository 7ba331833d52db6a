"""The central finding as one figure: «aprendió a ordenar secuencias de diez, no a ordenar», as a
ladder of ablations. Each rung is a model (a study variant or a frozen search row), every seed a point
at every length 1-40; a rung the results lack is left out, never drawn empty."""

import numpy as np

from pipeline.report.inputs import read_rows, row_accuracy, variant_accuracy
from pipeline.report.quantities import POSITIONLESS_ROW
from pipeline.report.style import plt, save

# (where, name, what the rung is): down the ladder, one change at a time
RUNGS = (
    ("study", "pipeline", "the lesson's model: the paper's sinusoids, trained on length 10"),
    ("search", POSITIONLESS_ROW, "no position vectors at all (BOS opens the source), trained on 10"),
    ("search", "sinusoidal_mixed_confirm", "the paper's sinusoids, trained on the mixed lengths 1-10"),
    ("study", "bos_mixed", "no position vectors, mixed lengths 1-10"),
    ("study", "bos_mixed_sums", "... and attention that sums (sigmoid gates), 12,000 steps"),
    ("search", "repeats", "... sums with repeat-heavy training rows (the best such confirmed row)"),
    ("study", "handset", "the same size, weights set by hand to count: the ceiling"),
)


def repeats_row(rows, confirm_seeds):
    """The search's repeat-heavy row retrained on the confirmation seeds whose worst seed is best."""
    found = [
        r
        for r in rows
        if (r["variant"].get("data") or {}).get("repeats") and r["seeds"] == list(confirm_seeds)
    ]
    return max(found, key=lambda r: r["min_seed"], default=None)


def rung_data(where, name, per_seed, meta, rows, confirm_seeds):
    """({seed: {length: accuracy}}, trained lengths, the row's name) of one rung, or None."""
    if where == "study":
        by_seed = variant_accuracy(per_seed, name)
        variant = meta["variants"].get(name)
        return (by_seed, variant["train_lengths"], name) if by_seed and variant else None
    row = (
        repeats_row(rows, confirm_seeds)
        if name == "repeats"
        else next((r for r in rows if r["name"] == name), None)
    )
    if row is None:
        return None
    return row_accuracy(row), row["recipe"]["train_lengths"], row["name"]


def at_the_bar(mean, lengths, bar):
    """The lengths whose mean over seeds reaches the bar, as runs ("1-12, 14"), or "none"."""
    runs = []
    for n, m in zip(lengths, mean, strict=True):
        if m >= 100 * bar:
            if runs and runs[-1][1] == n - 1:
                runs[-1][1] = n
            else:
                runs.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs) or "none"


def plot_ladder(per_seed_path, meta, rows, confirm_seeds, bar, path):
    per_seed = read_rows(per_seed_path)
    rungs = [
        (label, d)
        for where, name, label in RUNGS
        if (d := rung_data(where, name, per_seed, meta, rows, confirm_seeds))
    ]
    fig, axes = plt.subplots(
        len(rungs), 1, figsize=(9.5, 1.25 * len(rungs) + 0.9), sharex=True, squeeze=False
    )
    for ax, (label, (by_seed, trained, name)) in zip(axes[:, 0], rungs, strict=True):
        lengths = sorted(set.intersection(*(set(by) for by in by_seed.values())))
        points = np.array([[by[n] for n in lengths] for by in by_seed.values()]) * 100  # (seeds, lengths)
        for t in trained:
            ax.axvspan(t - 0.5, t + 0.5, color="0.88", lw=0, zorder=0)
        for row in points:
            ax.plot(lengths, row, "o", color="cb:blue", ms=2.4, alpha=0.55, ls="none")
        mean = points.mean(axis=0)
        ax.plot(lengths, mean, "-", color="black", lw=1.1)
        ax.axhline(100 * bar["accuracy"], color="cb:red", ls="--", lw=0.9)
        seeds = "not trained" if not trained else f"{len(by_seed)} seed{'s' if len(by_seed) > 1 else ''}"
        at = at_the_bar(mean, lengths, bar["accuracy"])
        ax.set_title(f"{label}  [{name}; {seeds}; at the bar: {at}]", loc="left", fontsize=8.5)
        ax.set(ylim=(-5, 105), yticks=(0, 50, 100), xlim=(0.3, max(lengths) + 0.7))
    axes[-1, 0].set_xlabel("input length (digits)")
    fig.supxlabel(" ")  # room for the legend under the last axis
    fig.supylabel("sequences sorted exactly (%)", fontsize=9)
    handles = [
        plt.Line2D([], [], marker="o", color="cb:blue", ls="none", ms=4, label="one seed"),
        plt.Line2D([], [], color="black", lw=1.1, label="mean over seeds"),
        plt.Line2D([], [], color="cb:red", ls="--", lw=0.9, label=f"the bar, {100 * bar['accuracy']:g} %"),
        plt.Rectangle((0, 0), 1, 1, color="0.88", label="trained lengths"),
    ]
    axes[-1, 0].legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.55), ncol=4)
    fig.suptitle("Sorting ten digits, not sorting: what each change buys, length by length", fontsize=11)
    fig.tight_layout(h_pad=0.4)
    save(fig, path)

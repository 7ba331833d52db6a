"""The length study's verdict as one figure: each kind of input a panel, exact sequences against
length 1-100 for each judged variant (mean over its seeds, the band their range), the signed count
set by hand, and the trained signed count read by a hand-set readout: what the prior holds and what
training makes of it, side by side."""

import numpy as np

from pipeline.report.inputs import read_json, read_rows
from pipeline.report.style import ENGLISH, PAGE_WIDTH, cycle_color, fitted, plt, save
from pipeline.study.verdict_rows import HANDSET, READOUT, TRAINED


def by_length(rows, variant, kind, decoder):
    """{length: [exact sequences, one per seed]} of one variant, kind and decoding."""
    found = {}
    for r in rows:
        if (r["variant"], r["kind"], r["decoder"]) == (variant, kind, decoder):
            found.setdefault(int(r["length"]), []).append(float(r["seq_acc"]))
    return dict(sorted(found.items()))


def contiguous(lengths):
    """The lengths 1, 2, 3, ... tested one after another, and the ones tested beyond (the table's)."""
    run = [n for i, n in enumerate(lengths) if n == i + 1]
    return run, lengths[len(run) :]


def plot_verdict(record_path, per_seed_path, path, w=ENGLISH):
    record, rows = read_json(record_path), read_rows(per_seed_path)
    kinds, bar = record["kinds"], record["bar"]
    # narrow enough to read at a page's width: a panel a kind, the legend in one column under them
    fig, axes = plt.subplots(1, len(kinds), figsize=(PAGE_WIDTH, 5.6), sharey=True, layout="constrained")
    handles = {}
    for ax, kind in zip(np.atleast_1d(axes), kinds, strict=True):
        for i, (name, info) in enumerate(record["variants"].items()):
            color = "black" if name == HANDSET else cycle_color(i)
            at = by_length(rows, name, kind, TRAINED)
            run, beyond = contiguous(list(at))
            mean = {n: 100 * np.mean(v) for n, v in at.items()}
            certified = info.get("reach_from") == "certificate"
            label = (
                w("verdict_figure.handset")
                if name == HANDSET
                else w(
                    "verdict_figure.certified" if certified else "verdict_figure.trained",
                    name=w.recipe(name),
                    seeds=len(info["seeds"]),
                )
            )
            style = {"color": color, "lw": 1.4, "ls": "-", "zorder": 3}
            if name == HANDSET:  # sampled at the table's lengths: its points, joined
                # on top, dashed with wide gaps and crosses: at 100 % it lies on the trained lines, which
                # show through its gaps and the crosses' arms, and it is seen on them
                style = {"color": color, "lw": 1.2, "ls": (0, (5, 4)), "zorder": 4, "marker": "x", "ms": 4}
                handles[label] = ax.plot(list(at), list(mean.values()), **style)[0]
                continue
            if certified:  # every length by its certificate; the sampled check, a point
                handles[label] = ax.plot([1, record["max_length"]], [100, 100], **style)[0]
                ax.plot(list(at), list(mean.values()), "o", color=color, ms=5, zorder=3)
                continue
            handles[label] = ax.plot(run, [mean[n] for n in run], **style)[0]
            if run:
                low, high = ([100 * f(at[n]) for n in run] for f in (np.min, np.max))
                ax.fill_between(run, low, high, color=color, alpha=0.18, lw=0)
                later = run[-1:] + beyond  # dotted on from the last length of the run
                ax.plot(later, [mean[n] for n in later], ":", color=color, lw=1)
                ax.plot(beyond, [mean[n] for n in beyond], "o", color=color, ms=4)
                low, high = ([100 * f(at[n]) for n in beyond] for f in (np.min, np.max))
                ax.vlines(beyond, low, high, color=color, lw=2.5, alpha=0.35)  # the seeds' range there
            read = by_length(rows, name, kind, READOUT)
            if read:  # hollow marks under the trained lines: at 100 % they show around them
                label = w("verdict_figure.readout", name=w.recipe(name))
                handles[label] = ax.plot(
                    list(read),
                    [100 * np.mean(v) for v in read.values()],
                    "D",
                    color=color,
                    mfc="none",
                    ms=6,
                    zorder=2,
                )[0]
        ax.axhline(100 * bar["accuracy"], color="grey", ls=":", lw=1)
        ax.set(
            title=fitted(w(f"verdict_figure.kind.{kind}"), 3.0, 10),
            xlabel=fitted(w("input_length"), 2.5, 10),
            xlim=(0, record["max_length"] + 2),
            ylim=(-3, 103),
        )
        ax.title.set_fontsize(10)
    np.atleast_1d(axes)[0].set_ylabel(w("sorted_exactly"))
    handles[w("verdict_figure.beyond")] = plt.Line2D([], [], color="grey", ls=":", marker="o", ms=4, lw=1)
    handles[w("verdict_figure.bar", bar=100 * bar["accuracy"])] = plt.Line2D(
        [], [], color="grey", ls=":", lw=1
    )
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=1, fontsize=9)
    title = w("verdict_figure.title", size=record["test_size"], longest=record["max_length"])
    fig.suptitle(fitted(title, fig.get_figwidth(), 10.5), fontsize=10.5)
    save(fig, path, w.lang)

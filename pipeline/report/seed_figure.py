"""The seed-distribution figure: each trained claim's seeds, the lesson's value, its prediction interval."""

import math

from pipeline.report.style import legend_centred, plt, save

COLUMNS = 4
SHADE = {"pass": "cb:green", "fail": "cb:red", "wide": "grey"}


def plot_seed_distributions(claims, path):
    """One small panel per trained claim, zoomed so that the interval's edges show."""
    trained = [c for c in claims if c.per_seed]
    rows = math.ceil(len(trained) / COLUMNS)
    height = 1.3 * rows + 1.0  # inches: the panels, and a band on top for the title and the legend
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(3.3 * COLUMNS, height), squeeze=False)
    for ax, c in zip(axes.flat, trained, strict=False):
        scale = 100 if c.percent else 1
        low, high = (scale * v for v in c.band)
        values = [scale * v for v in (*c.per_seed, c.lesson_value)] + [low, high]  # the band: scaled above
        pad = 0.25 * (max(values) - min(values)) or 1.0
        shade = SHADE["wide" if c.undecided else c.status]
        ax.axvspan(low, high, color=shade, alpha=0.15, lw=0)
        for edge in (low, high):
            ax.axvline(edge, color=shade, lw=1)
        ax.scatter(values[:-3], [0] * len(c.per_seed), s=22, color="cb:blue", alpha=0.7, zorder=3)
        ax.scatter([scale * c.lesson_value], [0], marker="D", s=46, color="cb:red", zorder=4)
        ax.set(xlim=(min(values) - pad, max(values) + pad), yticks=[], ylim=(-1, 1))
        ax.set_title(f"{c.id} ({'cannot discriminate' if c.undecided else c.status})", fontsize=8.5)
        ax.tick_params(axis="x", labelsize=7.5)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.set_xlabel("%" if c.percent else "loss (nats)", fontsize=7.5, labelpad=1)
    for ax in list(axes.flat)[len(trained) :]:
        ax.axis("off")
    handles = [
        plt.Line2D([], [], marker="o", ls="", color="cb:blue", label="one training seed"),
        plt.Line2D([], [], marker="D", ls="", color="cb:red", label="the lesson's value"),
        plt.Rectangle((0, 0), 1, 1, color="cb:green", alpha=0.3, label="prediction interval (pass)"),
        plt.Rectangle((0, 0), 1, 1, color="grey", alpha=0.3, label="too wide to discriminate"),
    ]
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.95 / height))
    title = "Every trained claim: the lesson's one run against our seeds"
    fig.suptitle(title, y=1 - 0.15 / height, fontsize=11)
    legend_centred(fig, 1 - 0.45 / height, ncol=4, fontsize=9, handles=handles, frameon=False)
    save(fig, path)

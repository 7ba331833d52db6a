"""The seed-distribution figure: for every trained claim, each seed's value, the range the lesson's
value had to fall in, and the lesson's value itself, so a reader sees where the lesson's one run
sits among ours."""

import math

from pipeline.report.style import plt, save

COLUMNS = 4


def plot_seed_distributions(claims, path):
    """One small panel per claim that compares the lesson's value with our seeds."""
    trained = [c for c in claims if c.per_seed]
    rows = math.ceil(len(trained) / COLUMNS)
    height = 1.3 * rows + 1.0  # inches: the panels, and a band on top for the title and the legend
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(3.3 * COLUMNS, height), squeeze=False)
    for ax, c in zip(axes.flat, trained, strict=False):
        scale = 100 if c.percent else 1
        values = [scale * v for v in c.per_seed]
        ax.axvspan(
            scale * c.band[0],
            scale * c.band[1],
            color="tab:green" if c.status == "pass" else "tab:red",
            alpha=0.12,
            lw=0,
        )
        ax.scatter(values, [0] * len(values), s=22, color="tab:blue", alpha=0.7, zorder=3)
        ax.scatter([scale * c.lesson_value], [0], marker="D", s=46, color="tab:red", zorder=4)
        ax.set_yticks([])
        ax.set_ylim(-1, 1)
        ax.set_title(f"{c.id} ({c.status})", fontsize=8.5)
        ax.tick_params(axis="x", labelsize=7.5)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        if c.percent:
            ax.set_xlabel("%", fontsize=7.5, labelpad=1)
    for ax in list(axes.flat)[len(trained) :]:
        ax.axis("off")
    handles = [
        plt.Line2D([], [], marker="o", ls="", color="tab:blue", label="one training seed"),
        plt.Line2D([], [], marker="D", ls="", color="tab:red", label="lesson's value"),
        plt.Rectangle((0, 0), 1, 1, color="tab:green", alpha=0.25, label="seed range ± margin (pass band)"),
    ]
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.95 / height))
    title = "Every trained claim: the lesson's one run against our seeds"
    fig.suptitle(title, y=1 - 0.15 / height, fontsize=11)
    legend_at = (0.5, 1 - 0.45 / height)
    fig.legend(
        handles=handles, loc="upper center", bbox_to_anchor=legend_at, ncol=3, fontsize=9, frameon=False
    )
    save(fig, path)

"""One look for every report figure, the small steps the figures share, and the one way to save one."""

import io

import matplotlib
import numpy as np

matplotlib.use("Agg")  # no display: every figure goes to a file
import matplotlib.pyplot as plt  # noqa: E402

from pipeline.infra import files  # noqa: E402

# Okabe and Ito's colours, told apart under every common colour-vision deficiency: the cycle, and names
PALETTE = dict(blue="#0072B2", orange="#E69F00", green="#009E73", red="#D55E00", purple="#CC79A7")
plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 10})
plt.rcParams["axes.prop_cycle"] = plt.cycler(color=list(PALETTE.values()))
matplotlib.colors.get_named_colors_mapping().update({f"cb:{k}": v for k, v in PALETTE.items()})  # "cb:red"


def cycle_color(i):
    """The i-th colour of matplotlib's colour cycle, starting over when the cycle runs out."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return colors[i % len(colors)]


def legend_centred(where, y, ncol, fontsize=7, **more):
    """A legend on an axis or figure (`where`), its top centred at height `y` of it; y < 0: below an axis."""
    where.legend(fontsize=fontsize, loc="upper center", bbox_to_anchor=(0.5, y), ncol=ncol, **more)


def grouped_bar(ax, k, groups, values, small=1, **more):
    """The k-th of `groups` bars standing side by side at each x = 0, 1, 2, ...; 0.8 wide together. One
    under `small`, too short to see (0 above all), gets a tick at its foot and its value written."""
    width, xs = 0.8 / groups, np.arange(len(values)) + (k - (groups - 1) / 2) * 0.8 / groups
    color = ax.bar(xs, values, width, **more).patches[0].get_facecolor()
    for x, v in [(x, v) for x, v in zip(xs, values, strict=True) if v < small]:  # NaN: no bar, no mark
        ax.plot([x - width / 2.5, x + width / 2.5], [0, 0], color=color, lw=3, clip_on=False, zorder=3)
        ax.text(x, 0, f" {v:.1g}" if v else " 0", ha="center", va="bottom", size=7, rotation=90)


def save(fig, path):
    """Write the figure as PNG, atomically, trimmed to what it draws. No "Software" entry and no
    date in the PNG's metadata, so that the same figure is the same bytes."""
    buffer = io.BytesIO()
    bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    fig.savefig(buffer, format="png", bbox_inches=bbox, metadata={"Software": None})
    plt.close(fig)
    files.write_bytes(path, buffer.getvalue())

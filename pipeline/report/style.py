"""One look for every report figure, the small steps the figures share, and the one way to save one."""

import io

import matplotlib
import numpy as np

matplotlib.use("Agg")  # no display: every figure goes to a file
import matplotlib.pyplot as plt  # noqa: E402

from pipeline.infra import files  # noqa: E402

plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 10})


def cycle_color(i):
    """The i-th colour of matplotlib's colour cycle, starting over when the cycle runs out."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return colors[i % len(colors)]


def legend_centred(where, y, ncol, fontsize=7, **more):
    """A legend on an axis or figure (`where`), its top centred at height `y` of it; y < 0: below an axis."""
    where.legend(fontsize=fontsize, loc="upper center", bbox_to_anchor=(0.5, y), ncol=ncol, **more)


def grouped_bar(ax, k, groups, values, **more):
    """The k-th of `groups` bars standing side by side at each x = 0, 1, 2, ...; 0.8 wide together."""
    width = 0.8 / groups
    ax.bar(np.arange(len(values)) + (k - (groups - 1) / 2) * width, values, width, **more)


def save(fig, path):
    """Write the figure as PNG, atomically, trimmed to what it draws. No "Software" entry and no
    date in the PNG's metadata, so that the same figure is the same bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    files.write_bytes(path, buffer.getvalue())

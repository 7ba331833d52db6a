"""One look for every report figure, and the one way to save a figure."""

import io

import matplotlib

matplotlib.use("Agg")  # no display: every figure goes to a file
import matplotlib.pyplot as plt  # noqa: E402

from pipeline.infra import files  # noqa: E402

plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 10})


def save(fig, path):
    """Write the figure as PNG, atomically, trimmed to what it draws. No "Software" entry and no
    date in the PNG's metadata, so that the same figure is the same bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    files.write_bytes(path, buffer.getvalue())

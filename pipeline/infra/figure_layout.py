"""Whether a figure reads cleanly, measured from its drawn extents: no two texts overlap, none runs
off the canvas, no legend covers a plotted point, and the canvas is not mostly blank. Knows nothing
of what the figure shows; the report runs it on every figure it saves (pipeline/report/style.py)."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.legend import Legend
from matplotlib.text import Annotation, Text

from pipeline.infra.errors import PipelineError


class CrowdedFigure(PipelineError):
    """A figure whose words collide, fall off its canvas, hide its data, or that is mostly blank."""


EMPTY_AT_MOST = 1 / 3  # of the saved canvas in blank blocks
CLEARANCE = 3  # points between a legend and a data mark: touching it hides it
BLANK_BEYOND = 0.25  # inches from every panel, text and legend: blank (closer: a gutter, a margin)
SLACK = 1.0  # pixels two boxes may share (antialiased edges) before they overlap


def saved_area(fig, renderer):
    """The rectangle of `fig` that `save` writes, in inches: what it draws, and a margin."""
    return fig.get_tightbbox(renderer).padded(plt.rcParams["savefig.pad_inches"])


def drawn_ticks(axis):
    """The ticks `axis` draws: matplotlib keeps spare ones beyond the view, never drawn."""
    return axis._update_ticks()  # the list Axis.draw itself draws


def text_extent(text, renderer):
    """A text's own box, without an annotation's arrow; None when it draws nothing."""
    if not text.get_visible() or not text.get_text().strip():
        return None
    if isinstance(text, Annotation) and not text._check_xy(renderer):  # its point is off the axes
        return None
    if isinstance(text, Annotation):
        text.update_positions(renderer)
    return Text.get_window_extent(text, renderer)


def legends(fig):
    """Every legend `fig` draws: its own, and each panel's (one added beside another included)."""
    return list(fig.legends) + [
        a for ax in fig.axes if ax.get_visible() for a in ax.get_children() if isinstance(a, Legend)
    ]


def texts(fig, renderer):
    """[(name, box, group)] of every text `fig` draws: a legend as one box; tick labels of one axis
    share a group, since they stand side by side by construction."""
    found = [(f"figure text {t.get_text()!r}", t, None) for t in fig.texts]
    for i, ax in enumerate(a for a in fig.axes if a.get_visible()):
        titles = (ax.title, ax._left_title, ax._right_title)
        found += [(f"panel {i} title {t.get_text()!r}", t, None) for t in titles]
        found += [(f"panel {i} text {t.get_text()!r}", t, None) for t in ax.texts]
        for axis in (ax.xaxis, ax.yaxis) if ax.axison else ():  # axis("off"): no axis drawn
            name = f"panel {i} {axis.axis_name}"
            found += [(f"{name} label {axis.label.get_text()!r}", axis.label, None)]
            found += [(f"{name} offset {axis.offsetText.get_text()!r}", axis.offsetText, None)]
            ticks = [label for tick in drawn_ticks(axis) for label in (tick.label1, tick.label2)]
            found += [(f"{name} tick label {t.get_text()!r}", t, name) for t in ticks if t.get_visible()]
    boxes = [(name, text_extent(t, renderer), group) for name, t, group in found]
    boxes += [
        (f"legend {i}", legend.get_window_extent(renderer), None) for i, legend in enumerate(legends(fig))
    ]
    return [(name, box, group) for name, box, group in boxes if box is not None and box.width and box.height]


def overlap(a, b):
    """Whether boxes `a` and `b` share more than SLACK pixels each way."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > SLACK and min(a.y1, b.y1) - max(a.y0, b.y0) > SLACK


def collisions(boxes):
    """Every pair of texts (not two tick labels of one axis) whose boxes overlap."""
    return [
        f"{a} overlaps {b}"
        for i, (a, box_a, group_a) in enumerate(boxes)
        for b, box_b, group_b in boxes[i + 1 :]
        if not (group_a and group_a == group_b) and overlap(box_a, box_b)
    ]


def outside(boxes, canvas):
    """Every text not wholly on the saved canvas."""
    return [
        f"{name} runs off the canvas"
        for name, box, _ in boxes
        if min(box.x0 - canvas.x0, box.y0 - canvas.y0, canvas.x1 - box.x1, canvas.y1 - box.y1) < -SLACK
    ]


def marker_radius(line):
    """Half a line's marker, in points; 0 for a line drawn without markers."""
    return 0.0 if line.get_marker() in ("None", "none", "", " ", None) else line.get_markersize() / 2


def marks(ax, renderer):
    """[(x, y, r)] in pixels: every marker (r its radius) and line vertex (r = 0) `ax` draws inside
    its own box."""
    points_to_pixels = ax.figure.dpi / 72
    found = [
        (line.get_transform().transform(line.get_xydata()), marker_radius(line) * points_to_pixels)
        for line in ax.lines
        if line.get_visible() and len(line.get_xydata())
    ]
    found += [
        (
            c.get_offset_transform().transform(c.get_offsets()),
            np.sqrt(c.get_sizes().max()) / 2 * points_to_pixels,
        )
        for c in ax.collections
        if isinstance(c, PathCollection) and c.get_visible() and len(c.get_offsets())
    ]  # scatter: sizes in points², the largest taken for all
    rows = [np.column_stack([xy.reshape(-1, 2), np.full(len(xy), r)]) for xy, r in found]
    xyr = np.concatenate(rows) if rows else np.empty((0, 3))
    xyr = xyr[np.isfinite(xyr).all(axis=1)]
    box = ax.get_window_extent(renderer)
    x, y = xyr[:, 0], xyr[:, 1]
    return xyr[(x >= box.x0) & (x <= box.x1) & (y >= box.y0) & (y <= box.y1)]


def covered(box, xyr, dpi):
    """How many of the marks `xyr` come within CLEARANCE of `box`, a marker by any part of it."""
    x, y, r = xyr.T
    r = r + CLEARANCE * dpi / 72
    return int(((x + r > box.x0) & (x - r < box.x1) & (y + r > box.y0) & (y - r < box.y1)).sum())


def hidden_points(fig, renderer):
    """Every legend that stands over a marker or a line vertex of any panel."""
    drawn = [marks(ax, renderer) for ax in fig.axes if ax.get_visible()]
    return [
        f"legend {k} covers {hidden} data point(s) of panel {i}"
        for k, legend in enumerate(legends(fig))
        for i, xyr in enumerate(drawn)
        if (hidden := covered(legend.get_window_extent(renderer), xyr, fig.dpi))
    ]


def empty_share(fig, renderer, boxes, canvas):
    """The share of the saved canvas farther than BLANK_BEYOND from every panel, text and legend:
    blank blocks, not the narrow gutters between panels."""
    width, height = int(round(canvas.width)), int(round(canvas.height))
    near, reach = np.zeros((height, width), dtype=bool), BLANK_BEYOND * fig.dpi
    panels = [ax.get_window_extent(renderer) for ax in fig.axes if ax.get_visible() and ax.axison]
    for box in panels + [box for _, box, _ in boxes]:
        x0, x1 = (int(np.clip(round(v - canvas.x0), 0, width)) for v in (box.x0 - reach, box.x1 + reach))
        y0, y1 = (int(np.clip(round(v - canvas.y0), 0, height)) for v in (box.y0 - reach, box.y1 + reach))
        near[y0:y1, x0:x1] = True
    return 1 - near.mean()


def settle(fig):
    """Lay `fig` out once and keep it so: its layout engine (constrained layout), if any, run once
    and then dropped, so that the checks and the PNG read the same positions and the layout is not
    computed again for the PNG (the ticks and titles are placed as the area is measured). Returns
    the area `save` writes (saved_area)."""
    renderer = fig.canvas.get_renderer()
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
        fig.set_layout_engine("none")
    return saved_area(fig, renderer)


def layout_faults(fig, area=None):
    """What keeps `fig` from reading cleanly, one line each, judged on the canvas `save` writes: two
    visible texts (titles, labels, tick labels, notes; a legend as one) whose drawn boxes overlap,
    tick labels of one axis aside from each other; a text not wholly on the canvas; a legend within
    CLEARANCE of a marker or a line vertex of any panel; and more than EMPTY_AT_MOST of the canvas
    farther than BLANK_BEYOND from every panel, text and legend. `area`: what `settle` returned, if
    `fig` is settled."""
    area = settle(fig) if area is None else area
    renderer = fig.canvas.get_renderer()
    canvas = area.transformed(fig.dpi_scale_trans)  # in pixels
    boxes = texts(fig, renderer)
    faults = collisions(boxes) + outside(boxes, canvas)
    faults += hidden_points(fig, renderer)
    empty = empty_share(fig, renderer, boxes, canvas)
    if empty > EMPTY_AT_MOST:
        faults.append(f"{empty:.0%} of the canvas is blank, more than {EMPTY_AT_MOST:.0%}")
    return faults

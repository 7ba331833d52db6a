"""One look for every report figure, the words each edition writes in them, the small steps the
figures share, and the one way to save one."""

import functools
import io
import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import yaml

matplotlib.use("Agg")  # no display: every figure goes to a file
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.text import Annotation, Text  # noqa: E402
from matplotlib.ticker import ScalarFormatter  # noqa: E402

from pipeline.infra import files  # noqa: E402
from pipeline.infra.errors import PipelineError  # noqa: E402
from pipeline.infra.locale import localize, percent  # noqa: E402

FIGURE_WORDS = Path(__file__).with_name("figure_words.yaml")

# Okabe and Ito's colours, told apart under every common colour-vision deficiency: the cycle, and names
PALETTE = dict(blue="#0072B2", orange="#E69F00", green="#009E73", red="#D55E00", purple="#CC79A7")
plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 10})
plt.rcParams["axes.prop_cycle"] = plt.cycler(color=list(PALETTE.values()))
matplotlib.colors.get_named_colors_mapping().update({f"cb:{k}": v for k, v in PALETTE.items()})  # "cb:red"


@functools.cache
def figure_words():
    return yaml.safe_load(FIGURE_WORDS.read_text())


@dataclass(frozen=True)
class Words:
    """A figure's words in one edition (`lang`, "en" or "es"): `w("loss.title", floor=0.514)` is the
    edition's text of that key in figure_words.yaml, its fields filled in and its numbers written the
    edition's way; `w.pct(0.982)` a percentage."""

    lang: str

    def __call__(self, key, **values):
        table = figure_words()[self.lang]
        if key not in table:
            raise KeyError(f"{FIGURE_WORDS.name}: no {self.lang} text for {key}")
        return localize(table[key].format(**values), self.lang)

    def plural(self, key, count):
        """The edition's [one, many] words of `key`, the one `count` (a number, or its text) calls for."""
        one, many = figure_words()[self.lang][key]
        return one if int(count) == 1 else many

    def pct(self, fraction, decimals=1):
        return percent(fraction, decimals, self.lang)

    def given(self, key, name, fallback=None):
        """The edition's words for `name` under the mapping `key` (a variant's plain name), else the
        fallback (the name itself), numbers still the English way (see `text`)."""
        return figure_words()[self.lang].get(key, {}).get(name, name if fallback is None else fallback)

    def text(self, text):
        """Words written the English way (given's, which may go on into another key's fields) with
        their numbers in the edition's way: once only, since 12.000 reads back as a decimal."""
        return localize(text, self.lang)


ENGLISH = Words("en")  # a figure's words where no edition is named


class EditionTicks(ScalarFormatter):
    """Matplotlib's own tick labels with the edition's decimal mark."""

    def __init__(self, lang):
        super().__init__()
        self.lang = lang

    def __call__(self, x, pos=None):
        return localize(super().__call__(x, pos), self.lang)

    def get_offset(self):
        return localize(super().get_offset(), self.lang)


def edition_ticks(fig, lang):
    """Every axis of `fig` whose labels matplotlib writes as plain numbers, in the edition's way."""
    if lang == "en":
        return
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_formatter()) is ScalarFormatter:
                axis.set_major_formatter(EditionTicks(lang))


def cycle_color(i):
    """The i-th colour of matplotlib's colour cycle, starting over when the cycle runs out."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return colors[i % len(colors)]


def legend_centred(where, y, ncol, fontsize=7, **more):
    """A legend on an axis or figure (`where`), its top centred at height `y` of it; y < 0: below an axis."""
    where.legend(fontsize=fontsize, loc="upper center", bbox_to_anchor=(0.5, y), ncol=ncol, **more)


def fitted(text, width, size):
    """`text` rewrapped, line by line, to `width` inches of `size`-point characters (an average one
    is about 0.55 of the size wide): a title written for a wide figure stays on a narrow one."""
    per_line = max(20, int(width * 72 / (0.55 * size)))
    return "\n".join(textwrap.fill(line, per_line) for line in text.split("\n"))


def grouped_bar(ax, k, groups, values, small=1, lang="en", **more):
    """The k-th of `groups` bars standing side by side at each x = 0, 1, 2, ...; 0.8 wide together. One
    under `small`, too short to see (0 above all), gets a tick at its foot and its value written."""
    width, xs = 0.8 / groups, np.arange(len(values)) + (k - (groups - 1) / 2) * 0.8 / groups
    color = ax.bar(xs, values, width, **more).patches[0].get_facecolor()
    for x, v in [(x, v) for x, v in zip(xs, values, strict=True) if v < small]:  # NaN: no bar, no mark
        ax.plot([x - width / 2.5, x + width / 2.5], [0, 0], color=color, lw=3, clip_on=False, zorder=3)
        ax.text(
            x, 0, localize(f" {v:.1g}" if v else " 0", lang), ha="center", va="bottom", size=7, rotation=90
        )


class CrowdedFigure(PipelineError):
    """A figure whose words collide, fall off its canvas, hide its data, or that is mostly blank."""


# ------------------------------------------------------------------ how a figure reads, measured

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


def save(fig, path, lang="en"):
    """Write the figure as PNG, atomically, trimmed to what it draws, its tick labels in the edition's
    way (`lang`), once it reads cleanly (`layout_faults`). No "Software" entry and no date in the
    PNG's metadata, so that the same figure is the same bytes."""
    edition_ticks(fig, lang)
    area = settle(fig)
    faults = layout_faults(fig, area)
    if faults:
        plt.close(fig)
        more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        raise CrowdedFigure(f"figure {Path(path).name} ({lang}): {faults[0]}{more}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches=area, metadata={"Software": None})
    plt.close(fig)
    files.write_bytes(path, buffer.getvalue())

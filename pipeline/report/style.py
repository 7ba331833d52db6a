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
from matplotlib.ticker import ScalarFormatter  # noqa: E402

from pipeline.infra import files  # noqa: E402
from pipeline.infra.figure_layout import CrowdedFigure, layout_faults, settle  # noqa: E402
from pipeline.infra.locale import Writer, number, percent  # noqa: E402
from pipeline.report.pages import catalogue  # noqa: E402

FIGURE_WORDS = Path(__file__).with_name("figure_words.yaml")

# Okabe and Ito's colours, told apart under every common colour-vision deficiency: the cycle, and names
PALETTE = dict(
    blue="#0072B2", orange="#E69F00", green="#009E73", red="#D55E00", purple="#CC79A7", sky="#56B4E9"
)
plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 10})
plt.rcParams["axes.prop_cycle"] = plt.cycler(color=list(PALETTE.values()))
matplotlib.colors.get_named_colors_mapping().update({f"cb:{k}": v for k, v in PALETTE.items()})  # "cb:red"


@functools.cache
def figure_words():
    return yaml.safe_load(FIGURE_WORDS.read_text())


@dataclass(frozen=True)
class Words:
    """A figure's words in one edition (`lang`, "en" or "es"): `w("loss.title", floor=0.514)` is the
    edition's text of that key in figure_words.yaml, its fields filled in, their numbers written the
    edition's way as they are filled in; `w.pct(0.982)` a percentage."""

    lang: str

    def __call__(self, key, **values):
        table = figure_words()[self.lang]
        if key not in table:
            raise KeyError(f"{FIGURE_WORDS.name}: no {self.lang} text for {key}")
        return Writer(self.lang).format(table[key], **values)

    def plural(self, key, count):
        """The edition's [one, many] words of `key`, the one `count` (a number, or its text) calls for."""
        one, many = figure_words()[self.lang][key]
        return one if int(count) == 1 else many

    def pct(self, fraction, decimals=1):
        return percent(fraction, decimals, self.lang)

    def given(self, key, name, fallback=None):
        """The edition's words for `name` under the mapping `key` (a variant's plain name), else the
        fallback (the name itself)."""
        return figure_words()[self.lang].get(key, {}).get(name, name if fallback is None else fallback)

    def recipe(self, name):
        """A study variant by the short name the study's pages give its recipe (the page catalogue's
        recipe_names: one list for the pages and their figures), else by what it is (`variants`)."""
        return recipe_names(self.lang).get(name) or self.given("variants", name)


PAGE_WIDTH = 8.6  # inches of a figure read at a page's width: its words stay legible there


@functools.cache
def recipe_names(lang):
    """{variant: its recipe's short name} in `lang`, as the study's pages say it."""
    return catalogue(lang).get("recipe_names", {})


ENGLISH = Words("en")  # a figure's words where no edition is named


class EditionTicks(ScalarFormatter):
    """Matplotlib's own tick labels (the places it picks for the ticks shown), written the edition's
    way."""

    def __init__(self, lang):
        super().__init__()
        self.lang = lang

    def __call__(self, x, pos=None):
        label = super().__call__(x, pos).replace("\N{MINUS SIGN}", "-")
        places = len(label.partition(".")[2])
        return self.fix_minus(number(float(label), f".{places}f", self.lang)) if label else label


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


def shared_dashes(curves, dash=6):
    """{name: dashes} of the lines drawn over one another (`curves`: {name: its points}, the same
    points): each line's dashes in the others' gaps, so that none hides under the last one drawn."""
    alike = {}
    for name, points in curves.items():
        alike.setdefault(points, []).append(name)
    return {
        name: (dash * k, (dash, dash * (len(names) - 1)))
        for names in alike.values()
        if len(names) > 1
        for k, name in enumerate(names)
    }


def fitted(text, width, size, balanced=False):
    """`text` rewrapped, line by line, to `width` inches of `size`-point characters (an average one
    is about 0.55 of the size wide): a title written for a wide figure stays on a narrow one. If
    `balanced`, each line wrapped as narrow as its number of lines allows: no word left alone on the
    last line, and side-by-side titles apart."""
    per_line = max(20, int(width * 72 / (0.55 * size)))
    wrap = balanced_fill if balanced else textwrap.fill
    return "\n".join(wrap(line, per_line) for line in text.split("\n"))


def balanced_fill(text, per_line):
    """`text` wrapped to at most `per_line` characters, in as few lines as that takes, the lines as even
    as they can be."""
    lines = len(textwrap.wrap(text, per_line)) or 1
    narrowest = next(n for n in range(1, per_line + 1) if len(textwrap.wrap(text, n)) <= lines)
    return textwrap.fill(text, narrowest)


def grouped_bar(ax, k, groups, values, small=1, lang="en", written=True, size=7, **more):
    """The k-th of `groups` bars standing side by side at each x = 0, 1, 2, ...; 0.8 wide together. One
    under `small`, too short to see (0 above all), gets a tick at its foot and, if `written`, its value
    in `size`-point characters (bars too narrow for their values side by side: the tick alone)."""
    width, xs = 0.8 / groups, np.arange(len(values)) + (k - (groups - 1) / 2) * 0.8 / groups
    color = ax.bar(xs, values, width, **more).patches[0].get_facecolor()
    for x, v in [(x, v) for x, v in zip(xs, values, strict=True) if v < small]:  # NaN: no bar, no mark
        ax.plot([x - width / 2.5, x + width / 2.5], [0, 0], color=color, lw=3, clip_on=False, zorder=3)
        if written:
            text = f" {number(v, '.1g', lang) if v else 0}"
            ax.text(x, 0, text, ha="center", va="bottom", size=size, rotation=90)


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

"""Why a trained count fails at lengths never seen, as one figure: for each trained variant measured,
two panels, one over the other: the decision margin at a fixed count against the input's length
(upper: one copy still owed, which must stay above 0; none owed, which must stay below), and each
decoder LayerNorm's divisor against the length, relative to its value at the shortest (lower). The
variants two to a row, so that every panel reads at a page's width; the two legends under them."""

from pipeline.report.inputs import read_json
from pipeline.report.style import ENGLISH, PAGE_WIDTH, cycle_color, fitted, plt, save

SUBLAYERS = ("self", "cross", "ffn")  # a decoder layer's sublayers, in order (LayerNorm names' sub.<k>)
COLUMNS = 2  # variants side by side: each panel wide enough to read at a page's width
PAIR_HEIGHT = 4.6  # inches a variant's two panels stand, its title and the lengths under them included
PANEL_WIDTH = 3.6  # inches of a panel's title line
PANEL_HEIGHT = 1.9  # inches a panel's y label spans, wrapped to fit
LEGEND_SIZE = 9


def draw_margins(ax, margins, w):
    """Each count's margin against the length: solid, one copy still owed; dashed, none owed."""
    for i, key in enumerate(k for k in margins if k.endswith("_owed_1")):
        count = int(key.split("_")[1])
        for owed, style in ((1, "-"), (0, "--")):
            found = margins[f"count_{count}_owed_{owed}"]["margin"]
            label = w("margin.count", count=count) if owed else None
            x = [int(n) for n in found]
            ax.plot(x, list(found.values()), style, marker="o", ms=3, color=cycle_color(i), label=label)
    ax.axhline(0, color="black", lw=0.8)
    ax.plot([], [], "-", color="grey", label=w("margin.owed_1"))
    ax.plot([], [], "--", color="grey", label=w("margin.owed_0"))


def draw_divisors(ax, divisors, w):
    """Each decoder LayerNorm's divisor against the length, over its value at the shortest."""
    decoder = [name for name in divisors if name.startswith("decoder")]
    for name in decoder:
        _, layer, _, sub, _ = name.split(".")
        found = divisors[name]["divisor"]
        first = next(iter(found.values()))
        label = w("margin.layernorm", layer=int(layer) + 1, sublayer=w(f"margin.{SUBLAYERS[int(sub)]}"))
        style = "o-" if layer == "0" else "s--"  # colour: the sublayer; line: the layer
        x, y = [int(n) for n in found], [v / first for v in found.values()]
        ax.plot(x, y, style, ms=3, color=cycle_color(int(sub)), label=label)
    if not decoder:
        ax.text(0.5, 0.5, w("margin.no_layernorm"), ha="center", va="center", transform=ax.transAxes)
    ax.axhline(1, color="black", lw=0.8)


def plot_count_margin(summary_path, path, w=ENGLISH):
    summary = read_json(summary_path)
    variants = [v for v in summary if v != "handset"]
    if not variants:  # no trained model reads the lengths measured (a study of short models)
        fig = plt.figure(figsize=(6, 0.6))  # the sentence alone, no blank panel around it
        fig.text(0.5, 0.5, w("margin.none"), ha="center", va="center")
        return save(fig, path, w.lang)
    columns = min(COLUMNS, len(variants))
    pairs = -(-len(variants) // columns)  # rows of variants, each two rows of panels
    size = (PAGE_WIDTH, PAIR_HEIGHT * pairs + 2.2)
    fig, axes = plt.subplots(
        2 * pairs, columns, figsize=size, sharex=True, squeeze=False, layout="constrained"
    )
    for ax in axes.flat[2 * len(variants) :]:
        ax.set_visible(False)
    for k, variant in enumerate(variants):
        row, column = 2 * (k // columns), k % columns
        top, bottom = axes[row, column], axes[row + 1, column]
        draw_margins(top, summary[variant]["margins"], w)
        draw_divisors(bottom, summary[variant]["divisors"], w)
        top.set_title(fitted(w.given("variants", variant), PANEL_WIDTH, 10, balanced=True), fontsize=10)
        bottom.tick_params(labelbottom=True)  # each variant's lengths under its own pair
        bottom.set_xlabel(w("input_length"))
        if column == 0:  # once a row, beside its first panel
            top.set_ylabel(fitted(w("margin.y"), PANEL_HEIGHT, 10))
            bottom.set_ylabel(fitted(w("margin.divisor_y"), PANEL_HEIGHT, 10))
    # each kind of panel its legend, side by side in a row of their own under the panels
    for rows, where, title in (
        (axes[0::2], "left", "margin.legend_top"),
        (axes[1::2], "right", "margin.legend_bottom"),
    ):
        found = [ax.get_legend_handles_labels() for ax in rows.flat if ax.get_visible()]
        handles, labels = max(found, key=lambda f: len(f[1]))
        fig.legend(
            handles, labels, loc=f"outside lower {where}", fontsize=LEGEND_SIZE, title=w(title),
            title_fontsize=LEGEND_SIZE,
        )  # fmt: skip
    fig.suptitle(fitted(w("margin.title"), PAGE_WIDTH, 11), fontsize=11)
    save(fig, path, w.lang)

"""The length study's figures: one figure, one function, each reading saved files, never a model;
among them the central finding as one figure, «aprendió a ordenar secuencias de diez, no a
ordenar», as a ladder of ablations: each rung a model (a study variant or a frozen search row), every
seed a point at every length 1-40; a rung the results lack is left out, never drawn empty."""

import numpy as np
from matplotlib.legend_handler import HandlerTuple

from pipeline.infra.locale import Writer
from pipeline.report.inputs import read_json, read_rows
from pipeline.report.study.diagnosis_figure import plot_study_diagnosis  # noqa: F401 (the pages draw it from here)
from pipeline.report.study.lesson_claims import POSITIONLESS_ROW
from pipeline.report.study.margin_figure import plot_count_margin  # noqa: F401 (the pages draw it from here)
from pipeline.report.study.verdict_figure import by_length
from pipeline.report.style import (
    ENGLISH,
    PAGE_WIDTH,
    PALETTE,
    fitted,
    grouped_bar,
    plt,
    save,
    shared_dashes,
)
from pipeline.study.bar import at_the_bar
from pipeline.study.params import BarParams
from pipeline.study.verdict_rows import TRAINED


def variant_accuracy(per_seed_rows, variant):
    """{seed: {length: exact sequences}} of one study variant, from the study's per_seed.csv rows."""
    by_seed = {}
    for r in per_seed_rows:
        if r["variant"] == variant:
            by_seed.setdefault(int(r["seed"]), {})[int(r["length"])] = float(r["seq_acc"])
    return by_seed


def row_accuracy(row):
    """{seed: {length: exact sequences}} of one search row (its JSON keys are strings)."""
    return {int(s): {int(n): a for n, a in by.items()} for s, by in row["accuracy"].items()}


COUNTS = ("1", "2", "3", "4", "5", "6", "7+")
ZOOM_FLOOR = 95  # % at the bottom of the seeds figure's zoom on the bar
LENGTH_ZOOM_FLOOR = 90  # % at the bottom of the length figure's zoom: the lines falling from the bar
MODEL_COLORS = (*PALETTE.values(), "black")  # the study's seven models, each its own colour
LENGTH_COLORS = (*PALETTE.values(), "grey")  # the same, where black dashed is the bar: the seventh grey


def bar_panels(bar, left_title, zoom_floor, zoom_title, height, w, layout=None):
    """Accuracy against length in two panels, every tested length and a zoom on the bar's lengths
    from `zoom_floor` %: the bar's accuracy dashed, the end of its lengths dotted."""
    low, high = bar["lengths"]
    size, ratios = (PAGE_WIDTH, height), {"width_ratios": [3, 2]}
    fig, axes = plt.subplots(1, 2, figsize=size, gridspec_kw=ratios, layout=layout)
    for ax in axes:
        ax.axhline(100 * bar["accuracy"], color="black", ls="--", lw=1)
        ax.axvline(high + 0.5, color="grey", ls=":", lw=1)
        ax.set_xlabel(w("input_length"))
    axes[0].set(ylabel=w("sorted_exactly"), ylim=(-2, 102), title=left_title)
    axes[1].set(ylim=(zoom_floor, 100.5), xlim=(low - 0.5, high + 0.5), title=zoom_title)
    axes[1].set_xticks(range(2, high + 1, 2))
    return fig, axes


def widest_gap(spans, low, high):
    """The middle of the widest stretch of [low, high] that none of `spans` ((bottom, top) each) covers."""
    edge, widest, middle = low, -1, (low + high) / 2
    for bottom, top in sorted(spans) + [(high, high)]:
        if bottom - edge > widest:
            widest, middle = bottom - edge, (edge + bottom) / 2
        edge = max(edge, top)
    return middle


def plot_study_accuracy(table_path, meta_path, path, w=ENGLISH):
    """Exact-sequence accuracy against input length, one line per variant with its seed range."""
    rows, meta = read_rows(table_path), read_json(meta_path)
    bar = 100 * meta["bar"]["accuracy"]
    first, last = meta["bar"]["lengths"]
    lengths = np.array([int(r["length"]) for r in rows])
    zoom = fitted(w("study.zoom", low=first, high=last, floor=LENGTH_ZOOM_FLOOR), 3.2, 12)
    fig, axes = bar_panels(
        meta["bar"], w("study.all_lengths"), LENGTH_ZOOM_FLOOR, zoom, 6.2, w, layout="constrained"
    )
    dashes = shared_dashes({v: tuple(r[v] for r in rows) for v in meta["variants"]})  # the same means
    crossing, handles = [], []  # (lowest, highest) of each line between the bar's last length and the next
    for i, (variant, info) in enumerate(meta["variants"].items()):
        tested = [r for r in rows if r[variant] != ""]
        x = np.array([int(r["length"]) for r in tested])
        columns = [[float(r[variant + s]) for r in tested] for s in ("", "_min", "_max")]
        mean, low, high = 100 * np.array(columns)  # each a row of the array
        span = info["train_lengths"]
        # the hand-set model trains on nothing: its name says so
        label = w.recipe(variant) + (f" ({w('study.trained_on', lengths=runs(span))})" if span else "")
        style = "--" if info.get("attention", "softmax") != "softmax" else "-"  # other attention dashed
        color, trained = LENGTH_COLORS[i % len(LENGTH_COLORS)], np.isin(x, span)
        under = {"zorder": 1.5} if not span else {}  # the hand-set line under the trained ones it may hide
        for ax in axes:
            ax.plot(x, mean, ls=dashes.get(variant, style), color=color, lw=1.5, **under)
            ax.fill_between(x, low, high, color=color, alpha=0.18, lw=0)
            ax.plot(x[trained], mean[trained], "o", color=color, ms=4)
        handles.append(plt.Line2D([], [], ls=style, color=color, lw=1.5, label=label))
        near = mean[(x >= last) & (x <= last + 1)]  # the line's span between the two lengths about it
        crossing += [(near.min(), near.max())] if len(near) else []
    beside = {"textcoords": "offset points", "fontsize": 9}
    # the bar's label where no line runs
    axes[0].annotate(f"{bar:.0f} %", (lengths.min() + 4, bar), xytext=(2, -12), **beside)
    # the dotted line's label along it, in the widest gap between the lines crossing it: none crosses it
    at = (last + 0.5, widest_gap(crossing, 0, 100))
    label = w("study.bar_lengths", low=first, high=last)
    axes[0].annotate(label, at, xytext=(3, 0), rotation=90, va="center", **beside)
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=9)
    fig.suptitle(fitted(w("study.title"), fig.get_figwidth(), 10), fontsize=10)
    save(fig, path, w.lang)


def plot_study_heatmap(table_path, meta_path, path, w=ENGLISH):
    """Every variant at every tested length at a glance: one row per variant, the mean over seeds as
    a colour and a number, trained lengths outlined, the bar's lengths left of the dotted line. The
    lengths in two panels, one over the other: cells wide enough for their numbers at a page's width."""
    rows, meta = read_rows(table_path), read_json(meta_path)
    variants, lengths = list(meta["variants"]), [int(r["length"]) for r in rows]
    grid = np.array([[100 * float(r[v]) if r[v] != "" else np.nan for r in rows] for v in variants])
    half = -(-len(lengths) // 2)  # the first panel's lengths: the second holds the rest
    size = (8.5, 2 * 0.5 * len(variants) + 2.0)
    fig, axes = plt.subplots(2, 1, figsize=size, layout="constrained")
    low, high = meta["bar"]["lengths"]
    names = [fitted(w.given("variants", v), 2.3, 8) for v in variants]  # a long name takes more lines
    for ax, first in zip(axes, (0, half), strict=True):
        shown, cells = lengths[first : first + half], grid[:, first : first + half]
        image = ax.imshow(cells, aspect="auto", cmap="viridis", vmin=0, vmax=100, interpolation="nearest")
        for (i, j), value in np.ndenumerate(cells):  # i: the variant, j: the length
            if np.isnan(value):
                continue
            # one decimal near the bar, so that 98.6 never reads as 99
            text = "100" if value >= 99.95 else w("value1", value=value) if value >= 90 else f"{value:.0f}"
            color = "black" if value > 55 else "white"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
            if shown[j] in meta["variants"][variants[i]]["train_lengths"]:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=1.2, ec="black"))
        if high in lengths and -1 <= lengths.index(high) - first < len(shown):  # the bar's lengths end here
            x = lengths.index(high) - first + 0.5  # on a panel's edge too, over its frame
            ax.axvline(x, color="cb:red", ls=":", lw=2.5, zorder=3, clip_on=False)  # seen on dark and light
        ax.set_xticks(range(len(shown)), shown, fontsize=8)
        ax.set_yticks(range(len(variants)), names, fontsize=8)
        ax.grid(False)
    axes[-1].set_xlabel(fitted(w("heatmap.x", low=low, high=high), 7.5, 10))
    # under the panels, not beside them: the cells take the width
    beneath = {"orientation": "horizontal", "fraction": 0.04, "aspect": 50}
    fig.colorbar(image, ax=axes, label=w("sorted_exactly"), **beneath)
    fig.suptitle(w("heatmap.title"), fontsize=10)
    save(fig, path, w.lang)


def shown_lengths(lengths, trained):
    """The diagnosis lengths an attention figure draws: the shortest, the one nearest the trained
    length and the longest (the clock runs slow, on time, fast), each once."""
    return sorted({lengths[0], min(lengths, key=lambda n: abs(n - trained)), lengths[-1]})


def plot_study_attention(diagnosis_path, path, w=ENGLISH, variants_shown=2):
    """The last decoder layer's cross-attention by input rank, mean over inputs and heads (the ridge: the
    place each step reads); one column for the pipeline's model, one for each of the `variants_shown`
    variants most accurate over the diagnosis lengths; a row for each of three lengths (shown_lengths):
    few panels, each large enough to read at a page's width."""
    diag = read_json(diagnosis_path)
    ref, variants = max(diag["trained_lengths"]), diag.get("variants", {})
    trained = [v for v in variants if v != "handset"]  # the hand-set model's gates count, not point
    best = sorted(trained, key=lambda v: -np.mean([d["seq_acc"] for d in variants[v].values()]))
    panels = {"pipeline": diag["lengths"], **{v: variants[v] for v in best[:variants_shown]}}
    lengths = shown_lengths(sorted(int(n) for n in diag["lengths"]), ref)
    vmax = max(np.max(d[str(n)]["attention_by_rank"]) for d in panels.values() for n in lengths)
    rows, cols = len(lengths), len(panels)  # a row a length, a column a model
    fig, axes = plt.subplots(
        rows, cols, figsize=(2.5 * cols + 1.1, 2.3 * rows + 1.8), squeeze=False, layout="constrained"
    )
    for j, (name, d) in enumerate(panels.items()):
        # the model's name once, over its column, wrapped to the panel's width
        axes[0][j].set_title(fitted(w.given("variants", name), 2.4, 10), fontsize=10)
        for i, n in enumerate(lengths):
            ax = axes[i][j]
            weights = np.array(d[str(n)]["attention_by_rank"])  # (steps, ranks)
            image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=vmax, aspect="auto")
            steps = np.arange(n)
            ax.plot(steps, steps, "w--", lw=1.2, label=w("attention.correct"))
            if d is diag["lengths"]:  # the pipeline's model: the clock set to its training length
                clock = np.minimum(steps * n / ref, n - 1)
                ax.plot(clock, steps, ":", color="cb:orange", lw=2, label=w("attention.clock", ref=ref))
            ax.set(xlim=(-0.5, n - 0.5), ylim=(n - 0.5, -0.5))
            ax.grid(False)
            ax.locator_params(integer=True, nbins=5)  # ranks and steps are whole numbers
            if i == rows - 1:  # once a column, under its last panel
                ax.set_xlabel(w("attention.x"))
            if j == 0:  # once a row, beside its first panel: the row's length
                ax.set_ylabel(w("attention.row", n=n))
    dark = {"facecolor": plt.cm.viridis(0.0), "labelcolor": "white"}  # the white line shows on the map's dark
    fig.legend(
        *axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=2, fontsize=10, **dark
    )
    fig.colorbar(image, ax=axes, shrink=0.6, label=w("attention_weight"))
    fig.suptitle(fitted(w("attention.title"), fig.get_figwidth(), 10), fontsize=10)
    save(fig, path, w.lang)


def plot_study_counting(diagnosis_path, path, w=ENGLISH, length="20"):
    """How each variant counts: the weight its fastest-growing attention sums per query as inputs grow,
    and exact sequences at one length by the most copies of one digit in the input; one legend for both."""
    diag = read_json(diagnosis_path)
    panels = {"pipeline": diag["lengths"], **diag.get("variants", {})}
    fig, (mass_ax, count_ax) = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 6.4), layout="constrained")
    by_repeats = {name: d.get(length, {}).get("seq_acc_by_repeats", {}) for name, d in panels.items()}
    shown = [k for k in COUNTS if any(c.get(k) is not None for c in by_repeats.values())]  # inputs there
    entries = []  # (its line and its bar, its short name and the attention drawn) of each model
    for i, (name, d) in enumerate(panels.items()):
        color = MODEL_COLORS[i % len(MODEL_COLORS)]
        # its own marker and dash, hollow markers shrinking: lines that coincide (softmaxes at 1) show
        look = {"marker": "osD^"[i % 4], "ls": ("-", "--", "-.", ":")[i % 4], "ms": 8 - 1.5 * (i % 4)}
        look |= {"mfc": "none", "color": color}
        label = w.recipe(name)
        lengths = sorted(int(n) for n in d if d[n].get("attention_mass"))
        if lengths:
            attentions = d[str(lengths[0])]["attention_mass"]
            masses = {k: [d[str(n)]["attention_mass"][k] for n in lengths] for k in attentions}
            widest = max(masses, key=lambda k: masses[k][-1])
            site, layer = widest.split("_")[0], int(widest.split("_")[-1]) + 1
            label = f"{label}: {w.given('sites', site, widest).format(layer=layer)}"
            mass_ax.plot(lengths, masses[widest], **look)
        counts = by_repeats[name]
        bars = [100 * counts[k] if counts.get(k) is not None else np.nan for k in shown]
        if shown:  # a study that tests no input of that length has no bars to draw
            grouped_bar(count_ax, i, len(panels), bars, written=False, color=color)  # seven bars: narrow
        # its line and its bar side by side: one name for both panels
        entries.append(((plt.Line2D([], [], **look), plt.Rectangle((0, 0), 1, 1, color=color)), label))
    mass_ax.set_title(w("counting.mass_title"), fontsize=10)
    mass_ax.set(xlabel=w("input_length"), ylabel=fitted(w("counting.mass_y"), 3.8, 10))
    count_ax.set_xticks(range(len(shown)), shown)
    if not shown:
        untested = w("counting.untested", length=length)
        count_ax.text(0.5, 0.5, untested, transform=count_ax.transAxes, ha="center")
    count_ax.set_title(w("counting.count_title", length=length), fontsize=10)
    count_ax.set_ylim(0, 105)
    count_ax.set(xlabel=fitted(w("counting.count_x"), 3.6, 10), ylabel=w("sorted_exactly"))
    # in its own row under the panels: a name and its attention take more than half the width
    pairs = {tuple: HandlerTuple(ndivide=None)}  # a line and a bar side by side
    fig.legend(*zip(*entries, strict=True), loc="outside lower center", handler_map=pairs, handlelength=4)
    fig.suptitle(w("counting.title"), fontsize=11)
    save(fig, path, w.lang)


def plot_study_seeds(per_seed_path, variant, confirmation, bar, path, w=ENGLISH):
    """The chosen variant, each seed a point at every length: the confirmation seeds the search chose
    it on beside the held-out seeds the study judges it on; lines are each set's mean."""
    held = variant_accuracy(read_rows(per_seed_path), variant)
    sets = [(w("seeds_figure.held"), held, "cb:blue", "o", 0.15)]
    if confirmation:
        chosen = row_accuracy(confirmation)
        sets.insert(0, (w("seeds_figure.confirm"), chosen, "cb:orange", "x", -0.15))
    low, high = bar["lengths"]
    zoom = fitted(w("seeds_figure.zoom", low=low, high=high, floor=ZOOM_FLOOR), 3.2, 12)
    fig, axes = bar_panels(bar, w("study.all_lengths"), ZOOM_FLOOR, zoom, 5.6, w, layout="constrained")
    handles = []
    for name, by_seed, color, marker, shift in sets:
        lengths = sorted(set.intersection(*(set(by) for by in by_seed.values())))
        points = np.array([[by[n] for n in lengths] for by in by_seed.values()]) * 100  # (seeds, lengths)
        seeds = runs(sorted(by_seed))
        for ax, floor in zip(axes, (None, ZOOM_FLOOR + 0.1), strict=True):  # zoom: low points at its floor
            for row in points:
                shown = row if floor is None else np.maximum(row, floor)
                ax.plot(np.array(lengths) + shift, shown, marker, color=color, ms=3.5, alpha=0.7, ls="none")
            ax.plot(lengths, points.mean(axis=0), "-", color=color, lw=1.3)
        label = w("seeds_figure.set", name=name, seeds=seeds)  # its marks and its mean, as drawn
        handles.append(plt.Line2D([], [], marker=marker, ms=3.5, color=color, lw=1.3, label=label))
    axes[1].axhline(100 * bar["seed_floor"], color="black", ls=":", lw=1)
    lines = {"--": w("seeds_figure.bar", bar=100 * bar["accuracy"]),
             ":": w("seeds_figure.floor", floor=100 * bar["seed_floor"])}  # fmt: skip
    handles += [plt.Line2D([], [], color="black", ls=ls, lw=1, label=label) for ls, label in lines.items()]
    fig.legend(handles=handles, loc="outside lower center", ncol=1, fontsize=9)
    title = w("seeds_figure.title", variant=w.recipe(variant))
    fig.suptitle(fitted(title, fig.get_figwidth(), 10.5), fontsize=10.5)  # a long name wraps, not widens
    save(fig, path, w.lang)


# ---------------------------------------------------------------------------------- the ladder

# (where, name): down the ladder, each rung's recipe apart from the one above it, often in more than one
# setting (positions, lengths, attention, hint, rows, steps); figure_words.yaml's `rungs` says what each is
RUNGS = (
    ("study", "pipeline"),
    ("search", POSITIONLESS_ROW),
    ("search", "sinusoidal_mixed_confirm"),
    ("study", "bos_mixed"),
    ("study", "bos_mixed_sums"),
    ("study", "sums_count_hint_repeats"),
    ("study", "signed_count_hint_repeats"),
    ("study", "signed_owed_repeats"),
    ("verdict", "signed_handset"),
    ("study", "handset"),
)


RUNG_TITLE_WIDTH = 8.0  # inches a line of a rung's title spans within its panel


def rung_data(where, name, per_seed, meta, rows, verdict_rows=()):
    """({seed: {length: accuracy}}, trained lengths, the row's name) of one rung, or None: a study
    variant, a search row, or an untrained row of the verdict on its uniform inputs at the study's
    lengths."""
    if where == "study":
        by_seed = variant_accuracy(per_seed, name)
        variant = meta["variants"].get(name)
        return (by_seed, variant["train_lengths"], name) if by_seed and variant else None
    if where == "verdict":
        longest = max(int(n) for n in meta["test_sets"])
        measured = by_length(verdict_rows, name, "uniform", TRAINED)  # one model: one value a length
        at = {n: values[0] for n, values in measured.items() if n <= longest}
        return ({0: at}, [], name) if at else None
    row = next((r for r in rows if r["name"] == name), None)
    if row is None:
        return None
    return row_accuracy(row), row["recipe"]["train_lengths"], row["name"]


def rung_label(w, where, name, meta, rows):
    """What a rung is, in the edition's words, its training steps filled in where the words name them."""
    steps = None
    if where == "study":
        steps = meta["variants"].get(name, {}).get("steps")
    elif where == "search":
        steps = next((r["recipe"].get("steps") for r in rows if r["name"] == name), None)
    return Writer(w.lang).format(w.given("rungs", name, name), steps=steps)


def runs(numbers):
    """Whole numbers, in order, as runs: [1, 2, 3, 5] as "1-3, 5"; "" for none."""
    found = []
    for n in numbers:
        if found and found[-1][1] == n - 1:
            found[-1][1] = n
        else:
            found.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in found)


def lengths_at_the_bar(points, lengths, bar):
    """The lengths at the bar (the study's one rule, pipeline/study/bar.py), as runs ("1-12, 14"), or
    None (`points`: (seeds, lengths), in %)."""
    rule = BarParams(**bar)
    at = [n for n, column in zip(lengths, points.T, strict=True) if at_the_bar(column / 100, rule)]
    return runs(at) or None


def rung_title(w, name, label, seeds, trained, at, bar):
    """What a rung is, its seeds, and the lengths where it meets the bar, or where its mean reaches the
    bar's level with fewer seeds than the bar asks for (never "at the bar" then)."""
    if not trained:
        return w("ladder.title_by_hand", label=label)
    if at is None:
        return w("ladder.title_none", label=label, seeds=seeds)
    if seeds < bar["min_seeds"]:
        return w("ladder.title_few", label=label, seeds=seeds, at=at, least=bar["min_seeds"])
    return w("ladder.title_at", label=label, seeds=seeds, at=at)


def plot_ladder(per_seed_path, meta, rows, bar, path, w=ENGLISH, verdict_path=None):
    per_seed = read_rows(per_seed_path)
    verdict_rows = read_rows(verdict_path) if verdict_path else []
    rungs = [
        (rung_label(w, where, name, meta, rows), d)
        for where, name in RUNGS
        if (d := rung_data(where, name, per_seed, meta, rows, verdict_rows))
    ]
    # constrained: each panel's room above it as tall as its own title, and a clear gap above that title
    size = (PAGE_WIDTH, 1.5 * len(rungs) + 1.0)
    fig, axes = plt.subplots(len(rungs), 1, figsize=size, sharex=True, squeeze=False, layout="constrained")
    fig.get_layout_engine().set(h_pad=8 / 72, hspace=0)
    for ax, (label, (by_seed, trained, name)) in zip(axes[:, 0], rungs, strict=True):
        lengths = sorted(set.intersection(*(set(by) for by in by_seed.values())))
        points = np.array([[by[n] for n in lengths] for by in by_seed.values()]) * 100  # (seeds, lengths)
        for t in trained:
            ax.axvspan(t - 0.5, t + 0.5, color="0.88", lw=0, zorder=0)
        for row in points:
            ax.plot(lengths, row, "o", color="cb:blue", ms=2.4, alpha=0.55, ls="none")
        mean = points.mean(axis=0)
        ax.plot(lengths, mean, "-", color="black", lw=1.1)
        ax.axhline(100 * bar["accuracy"], color="cb:red", ls="--", lw=0.9)
        title = rung_title(
            w, name, label, len(by_seed), trained, lengths_at_the_bar(points, lengths, bar), bar
        )
        ax.set_title(fitted(title, RUNG_TITLE_WIDTH, 9.5), loc="left", fontsize=9.5, pad=8)
        ax.set(ylim=(-5, 105), yticks=(0, 50, 100), xlim=(0.3, max(lengths) + 0.7))
    axes[-1, 0].set_xlabel(w("input_length"))
    fig.supylabel(w("sorted_exactly"), fontsize=10)
    handles = [
        plt.Line2D([], [], marker="o", color="cb:blue", ls="none", ms=4, label=w("ladder.seed")),
        plt.Line2D([], [], color="black", lw=1.1, label=w("ladder.mean")),
        plt.Line2D([], [], color="cb:red", ls="--", lw=0.9, label=w("ladder.bar", bar=100 * bar["accuracy"])),
        plt.Rectangle((0, 0), 1, 1, color="0.88", label=w("ladder.trained")),
    ]
    fig.legend(handles=handles, fontsize=9.5, loc="outside lower center", ncol=2)
    fig.suptitle(w("ladder.title"), fontsize=11)
    save(fig, path, w.lang)

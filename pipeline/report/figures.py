"""The lessons', the probes' and the speed report's figures: one figure, one function; each reads
saved metrics, never a model (the seed-distribution figure reads the judged claims)."""

import math
from itertools import product
from pathlib import Path

from matplotlib.ticker import MaxNLocator, NullFormatter

from pipeline.report.inputs import memory_tokens, read_json, read_numbers, read_rows
from pipeline.report.style import ENGLISH, PAGE_WIDTH, fitted, legend_centred, plt, save
from pipeline.tokens import VOCAB

NORM_COLORS = {"post": "cb:blue", "pre": "cb:orange"}
SUM_STYLES = {"with_sum": "o-", "without_sum": "x--"}
STACKS = ("encoder", "decoder")  # the gradient table's stacks, bottom to top
PATHS = ("encoder", "source_to_output")  # the Jacobian's two paths, each a panel
PANEL_WIDTH = 3.3  # inches a Jacobian panel spans, its title wrapped to fit
PANEL_HEIGHT = 3.2  # inches beside the Jacobian panels, their y label wrapped to fit
TEXT = 10  # points of every text of a page-wide figure: the size the other figures' texts read at


def plot_loss(losses_by_seed, floor, lesson_losses, path, w=ENGLISH):
    """Lesson 10, "La pérdida y su piso": every seed's loss, the lesson's printed losses and the floor
    label smoothing sets, beside a uniform guess's loss (ln VOCAB) and a note on why the first steps
    stand far above it. `lesson_losses`: {step: the loss the lesson printed}; `w`: the edition's words."""
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for i, losses in enumerate(losses_by_seed):
        label = w("loss.seeds", seeds=len(losses_by_seed)) if i == 0 else None
        ax.plot(range(1, len(losses) + 1), losses, lw=0.6, alpha=0.55, color="cb:blue", label=label)
    steps, printed = list(lesson_losses), list(lesson_losses.values())
    ax.scatter(steps, printed, marker="D", s=40, color="cb:red", zorder=3, label=w("loss.lesson"))
    ax.axhline(floor, color="black", ls="--", lw=1.2, label=w("loss.floor", floor=floor))
    uniform = math.log(VOCAB)  # every token equally likely: the loss whatever the smoothing
    ax.axhline(uniform, color="grey", ls=":", lw=1.2, label=w("loss.uniform", vocab=VOCAB, uniform=uniform))
    ax.set(yscale="log", ylim=(floor * 0.9, None), title=w("loss.title"))
    ax.set(xlabel=w("loss.x"), ylabel=w("loss.y"))
    ax.legend(loc="upper right", fontsize=8)
    # the first step's loss, in a note under the axis: an untrained model is not a uniform guess
    first = [losses[0] for losses in losses_by_seed]
    start = w("loss.start", low=min(first), high=max(first))
    fig.text(0.02, 0.01, fitted(start, 6.8, 8.5), fontsize=8.5, va="bottom")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    save(fig, path, w.lang)


def plot_length_accuracy(table_path, trained_lengths, lesson_table, path, w=ENGLISH):
    """Lesson 10, "Secuencias perfectas según el largo": exact sequences by input length, our seeds
    against the lesson's one run (`lesson_table`: {length: fraction})."""
    rows = read_numbers(table_path)
    lengths = [int(r["length"]) for r in rows]
    mean = [100 * r["seq_acc"] for r in rows]
    low = [100 * (r["seq_acc"] - r["seq_acc_min"]) for r in rows]  # the whiskers' lengths
    high = [100 * (r["seq_acc_max"] - r["seq_acc"]) for r in rows]
    colors = ["cb:green" if n in trained_lengths else "cb:blue" for n in lengths]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(lengths, mean, width=1.2, color=colors, alpha=0.8, label=w("length.ours"))
    ax.errorbar(lengths, mean, [low, high], fmt="none", ecolor="black", capsize=4, label=w("length.range"))
    stated = [(n, 100 * v) for n, v in lesson_table.items() if n in lengths]
    if stated:  # only where this run tested the lesson's lengths
        ax.scatter(*zip(*stated, strict=True), marker="D", color="cb:red", zorder=3, label=w("length.lesson"))
    for n, m in zip(lengths, mean, strict=True):
        ax.annotate(w.pct(m / 100), (n + 0.62, 2), ha="left", fontsize=8, rotation=90)
    trained = w("length.trained")
    ax.set_xticks(lengths, [f"{n}\n{trained}" if n in trained_lengths else str(n) for n in lengths])
    ax.set(ylim=(0, 110), title=w("length.title"))
    ax.set(xlabel=w("length.x"), ylabel=w("length.y"))
    ax.legend(loc="upper left", fontsize=8)
    save(fig, path, w.lang)


def plot_cross_attention(example_path, path, w=ENGLISH):
    """The decoder's cross-attention on the lesson's example: which input digit each step reads."""
    example = read_json(example_path)
    layers = example["cross_attention"]  # [layer][head][output step][input position]
    n_layers, n_heads = len(layers), len(layers[0])
    # a page's width, every text at TEXT points: at a page's width it reads as large as the other figures'
    size = (PAGE_WIDTH, 1.85 * n_layers + 0.8)
    fig, axes = plt.subplots(n_layers, n_heads, figsize=size, squeeze=False, layout="constrained")
    memory, emitted = memory_tokens(example), [str(d) for d in example["output"]]
    steps = [w("cross.step", read=r, wrote=e) for r, e in zip(["BOS"] + emitted[:-1], emitted, strict=True)]
    for i, layer in enumerate(layers):
        for h, weights in enumerate(layer):
            ax = axes[i][h]
            image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(memory)), memory, fontsize=TEXT)
            ax.set_yticks(range(len(emitted)), steps if h == 0 else [], fontsize=TEXT)
            ax.tick_params(length=2, pad=1)  # the digits close under their columns
            ax.grid(False)
            ax.set_title(w("cross.panel", layer=i + 1, head=h + 1), fontsize=TEXT)
    fig.supxlabel(w("cross.x"), fontsize=TEXT)  # each axis named once, under and beside all the panels
    fig.supylabel(w("cross.y"), fontsize=TEXT)
    bar = fig.colorbar(image, ax=axes, shrink=0.8)
    bar.set_label(w("attention_weight"), fontsize=TEXT)
    bar.ax.tick_params(labelsize=TEXT)
    digits = " ".join(map(str, example["input"]))
    title = w("cross.title", digits=digits, seed=example["seed"])
    fig.suptitle(fitted(title, PAGE_WIDTH, TEXT), fontsize=TEXT)
    save(fig, path, w.lang)


def plot_residual(table_path, path, w=ENGLISH):
    """Lesson 6's residual cell: d(output)/d(one input coordinate) through 12 stacked FFNs."""
    rows = read_numbers(table_path)
    layers = [int(r["layers"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, color in [("with_sum", "cb:green"), ("without_sum", "cb:red")]:
        difference, exact = [r[f"{key}_fd"] for r in rows], [r[f"{key}_autograd"] for r in rows]
        ax.plot(layers, difference, "o-", color=color, label=w(f"residual.{key}"))
        ax.plot(layers, exact, "x", color="black", ms=8)
    ax.plot([], [], "x", color="black", label=w("residual.exact"))
    ax.set(yscale="log", xticks=layers)
    ax.set_title(w("residual.title"))
    ax.set(xlabel=w("residual.x"), ylabel=w("residual.y"))
    ax.legend(fontsize=8, loc="lower left")
    save(fig, path, w.lang)


def plot_gradient_depth(grad_path, path, w=ENGLISH):
    """The loss gradient at each sublayer's input through the real model's depth."""
    rows = read_rows(grad_path)
    names = [w("gradient.sublayer", stack=w(f"gradient.{r['stack']}"), layer=int(r["layer"]) + 1,
               kind=w(f"gradient.{r['sublayer']}")) for r in rows]  # fmt: skip
    # a page's width, every text at TEXT points (the notes too): as large at a page's width as the other
    # figures' texts
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 5.4), layout="constrained")
    gradients = {f"{n}_{when}": (n, when == "trained") for n in NORM_COLORS for when in ("init", "trained")}
    for column in [c for c in rows[0] if c in gradients]:  # the table's order: the figure's layers
        norm, trained = gradients[column]
        values = [float(r[column]) if r[column] else float("nan") for r in rows]
        label = w("gradient.trained" if trained else "gradient.init", norm=norm)
        ax.plot(range(len(rows)), values, "o-" if trained else "s--", color=NORM_COLORS[norm], label=label)
    for norm, x in (("post", len(rows) - 0.6), ("pre", len(rows) - 0.3)):  # the report's ratios
        v, color = [float(r[f"{norm}_init"]) for r in rows], NORM_COLORS[norm]
        stacks = {s: [g for g, r in zip(v, rows, strict=True) if r["stack"] == s] for s in STACKS}
        if not (v[-1] and all(min(g) for g in stacks.values())):  # a gradient stopped dead (gates shut)
            continue
        ax.hlines(v[0], 0, x, color=color, ls=":", lw=0.8)  # the bottom's level, carried to the top's
        ax.annotate("", (x, v[0]), (x, v[-1]), arrowprops={"arrowstyle": "<->", "color": color})
        # each stack's spread beside the whole ratio: where both stacks are flat, the drop is the crossing
        spreads = {s: max(g) / min(g) for s, g in stacks.items()}
        ratios = w("gradient.ratios", norm=norm, bottom=v[0] / v[-1], **spreads)
        # beside the axis in its colour: post-norm's at the top, pre-norm's at the bottom, never on each other
        y, va = (0.98, "top") if norm == "post" else (0.02, "bottom")
        ax.text(1.02, y, ratios, color=color, fontsize=TEXT, va=va, transform=ax.transAxes)
    ax.set(yscale="log", xlim=(-0.5, len(rows) - 0.1))  # room on the right for the arrows
    ax.set_xticks(range(len(rows)), names, rotation=45, ha="right", rotation_mode="anchor", fontsize=TEXT)
    ax.tick_params(labelsize=TEXT)
    ax.set_title(fitted(w("gradient.title"), 7, TEXT + 1), fontsize=TEXT + 1)  # within the canvas
    ax.set_xlabel(w("gradient.x"), fontsize=TEXT)
    ax.set_ylabel(w("gradient.y"), fontsize=TEXT)
    ax.legend(fontsize=TEXT, loc="upper left")
    save(fig, path, w.lang)


def plot_jacobian_sweep(sweep_path, path, w=ENGLISH):
    """Input-output Jacobian norm at initialisation as layers are stacked, with and without sums."""
    rows = read_numbers(sweep_path)
    layers = [int(r["layers"]) for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 4.8), layout="constrained")
    for ax, stack in zip(axes, PATHS, strict=True):
        for norm, sums in product(NORM_COLORS, SUM_STYLES):
            key = f"{stack}_{norm}_{sums}"
            if key in rows[0]:
                values = [max(r[key], 1e-300) for r in rows]  # a zero stays on the log scale
                factor = (values[-1] / values[0]) ** (1 / (layers[-1] - layers[0]))  # geometric mean
                label = w(f"jacobian.{sums}", norm=norm, factor=factor)
                ax.plot(layers, values, SUM_STYLES[sums], color=NORM_COLORS[norm], label=label)
        ax.set(yscale="log", xlabel=w("jacobian.x"), xticks=layers)
        ax.set_title(fitted(w(f"jacobian.{stack}"), PANEL_WIDTH, 11), fontsize=11)
        legend_centred(ax, -0.2, ncol=1, fontsize=8.5)  # under the axis: the lines fill it
    fig.supylabel(fitted(w("jacobian.y"), PANEL_HEIGHT, 10), fontsize=10)  # once: both panels measure it
    fig.suptitle(fitted(w("jacobian.title"), fig.get_figwidth(), 10), fontsize=10)
    save(fig, path, w.lang)


def plot_layernorm(cell_path, probe_metrics, path, w=ENGLISH):
    """Lesson 6's LayerNorm cell: each row normalised on its own, and what touching row 4 does."""
    rows = read_numbers(cell_path)
    index = [int(r["row"]) for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    for offset, key in enumerate(("in", "out", "affine")):
        xs = [i + (offset - 1) * 0.25 for i in index]
        means, deviations = [r[f"{key}_mean"] for r in rows], [r[f"{key}_std"] for r in rows]
        left.errorbar(xs, means, yerr=deviations, fmt="o", capsize=3, label=w(f"layernorm.{key}"))
    left.set_xticks(index, [w("layernorm.row", row=i) for i in index])
    left.set_title(w("layernorm.left"))
    left.set(xlabel=w("layernorm.x"), ylabel=w("layernorm.y"))
    legend_centred(left, -0.16, ncol=3, fontsize=8)  # under the axis: no whisker hidden
    shifts = [probe_metrics[f"layernorm_row0_shift_per_{along}"] for along in ("row", "column")]
    right.bar([w("layernorm.per_row"), w("layernorm.per_column")], shifts, color=["cb:green", "cb:red"])
    for i, v in enumerate(shifts):
        right.annotate(w("value3", value=v), (i, v), textcoords="offset points", xytext=(0, 4), ha="center")
    right.set(title=w("layernorm.right"), ylabel=w("layernorm.right_y"))
    right.set_ylim(0, max(shifts) * 1.25)
    save(fig, path, w.lang)


# ------------------------------------------------------------- the seeds of trained claims

COLUMNS = 2  # panels side by side: each wide enough to read at a page's width
SHADE = {"pass": "cb:green", "fail": "cb:red", "wide": "grey"}


def plot_seed_distributions(claims, path, w=ENGLISH):
    """One small panel per trained claim, zoomed so that the interval's edges show."""
    trained = [c for c in claims if c.per_seed]
    rows = math.ceil(len(trained) / COLUMNS)
    height = 1.35 * rows + 1.3  # inches: the panels, and a band on top for the title and the legend
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(4.1 * COLUMNS, height), squeeze=False)
    for ax, c in zip(axes.flat, trained, strict=False):
        scale = 100 if c.percent else 1
        low, high = (scale * v for v in c.band)
        values = [scale * v for v in (*c.per_seed, c.lesson_value)] + [low, high]  # the band: scaled above
        pad = 0.25 * (max(values) - min(values)) or 1.0
        shade = SHADE["wide" if c.undecided else c.status]
        ax.axvspan(low, high, color=shade, alpha=0.15, lw=0)
        for edge in (low, high):
            ax.axvline(edge, color=shade, lw=1)
        ax.scatter(values[:-3], [0] * len(c.per_seed), s=40, color="cb:blue", alpha=0.7, zorder=3)
        ax.scatter([scale * c.lesson_value], [0], marker="D", s=70, color="cb:red", zorder=4)
        ax.set(xlim=(min(values) - pad, max(values) + pad), yticks=[], ylim=(-1, 1))
        verdict = w("seeds.undecided" if c.undecided else f"seeds.{c.status}")
        ax.set_title(f"{w.given('claims', c.id)} ({verdict})", fontsize=10)
        ax.tick_params(axis="x", labelsize=9)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.set_xlabel("%" if c.percent else w("seeds.loss"), fontsize=9, labelpad=1)
    for ax in list(axes.flat)[len(trained) :]:
        ax.axis("off")
    handles = [
        plt.Line2D([], [], marker="o", ls="", color="cb:blue", label=w("seeds.seed")),
        plt.Line2D([], [], marker="D", ls="", color="cb:red", label=w("seeds.lesson")),
        plt.Rectangle((0, 0), 1, 1, color="cb:green", alpha=0.3, label=w("seeds.band")),
        plt.Rectangle((0, 0), 1, 1, color="grey", alpha=0.3, label=w("seeds.wide")),
    ]
    fig.tight_layout(rect=(0, 0, 1, 1 - 1.25 / height))
    title = w("seeds.title", seeds=len(trained[0].per_seed) if trained else 0)
    fig.suptitle(fitted(title, fig.get_figwidth(), 12), y=1 - 0.1 / height, va="top", fontsize=12)
    legend_centred(fig, 1 - 0.6 / height, ncol=2, fontsize=10, handles=handles, frameon=False)
    save(fig, path, w.lang)


# -------------------------------------------------------------------------- the speed report


def load_benchmark(data):
    """metrics/benchmark.json and the CSVs in metrics/benchmark/ beside it, as {name: rows}."""
    json_path = Path(data)
    csvs = sorted(json_path.with_suffix("").glob("*.csv"))
    return {"metrics": read_json(json_path)} | {path.stem: read_rows(path) for path in csvs}


def plot_benchmark(data, path, w=ENGLISH):
    """Four panels from `data` (metrics/benchmark.json): the training step against nn.Transformer, greedy
    decoding with and without the cache, evaluation throughput, and three seeds at once against one."""
    t = load_benchmark(data)
    m = t["metrics"]
    # one panel a row: legible at a page's width
    fig, axes = plt.subplots(4, 1, figsize=(PAGE_WIDTH, 16), layout="constrained")
    draw_train_step(axes[0], t["train_step"], m, w)
    draw_decoding(axes[1], t["decoding"], m, w)
    draw_throughput(axes[2], t["throughput"], w)
    draw_seeds(axes[3], t["seeds"], m, w)
    mode = m.get("numerics_mode", "?")  # records before it lack it
    title = w("speed.title", cpu=m["cpu"], cores=m["cpu_count"], torch=m["torch"], threads=m["threads"],
              mode=mode, before=m["load_average_before"], after=m["load_average_after"])  # fmt: skip
    fig.suptitle(fitted(title, PAGE_WIDTH, 10), fontsize=10)
    save(fig, path, w.lang)


def draw_train_step(ax, rows, m, w):
    """Our training step against nn.Transformer's, median and quartiles."""
    names = [w.given("implementations", r["implementation"]) for r in rows]
    median = [float(r["median_ms"]) for r in rows]
    low = [float(r["median_ms"]) - float(r["q1_ms"]) for r in rows]  # the whiskers' lengths
    high = [float(r["q3_ms"]) - float(r["median_ms"]) for r in rows]
    ax.barh(names, median, xerr=[low, high], color=["cb:blue"] + ["tab:gray"] * (len(rows) - 1), capsize=3)
    ax.invert_yaxis()
    for i, value in enumerate(median):
        note = w("speed.ms_against", ms=value, times=value / median[0]) if i else w("speed.ms", ms=value)
        ax.text(value + high[i], i, "  " + note, va="center", fontsize=9)
    ax.set_title(w("speed.step_title", times=m["train_step_speedup"]))
    # room right of the longest bar for its label, in either language
    ax.set(xlabel=w("speed.step_x"), xlim=(0, max(median) * 1.9))


def draw_decoding(ax, rows, m, w):
    """Greedy decoding time by output length, re-running the decoder against the cache."""
    lengths = [int(r["length"]) for r in rows]
    for key, fmt in [("uncached", "o-"), ("cached", "s-")]:
        growth = m[f"decode_growth_exponent_{key}"]
        ax.loglog(lengths, [float(r[f"{key}_ms"]) for r in rows], fmt, label=w(f"speed.{key}", growth=growth))
    for r in rows:  # each speed-up beside a dotted line from one time to the other
        n, times = int(r["length"]), (float(r["cached_ms"]), float(r["uncached_ms"]))
        ax.vlines(n, *times, color="grey", ls=":", lw=1)
        ax.text(
            n * 1.04,
            (times[0] * times[1]) ** 0.5,
            w("speed.faster", times=float(r["speedup"])),
            fontsize=9,
            va="center",
        )
    ax.set_xlim(min(lengths) / 1.15, max(lengths) * 2.6)  # room right of the last line for its label
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_title(w("speed.decoding_title", rows=m["decode_rows"]))
    ax.set(xlabel=w("speed.decoding_x"), ylabel=w("speed.decoding_y"))
    legend_centred(ax, -0.16, ncol=1, fontsize=9)  # under the axis: the lines and labels fill it


def draw_throughput(ax, rows, w):
    names = [w.given("decoders", r["decoder"]) for r in rows]
    ax.barh(names, [float(r["sequences_per_s"]) for r in rows], color="cb:green")
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(5))  # thousands of sequences: few ticks stay readable
    ax.set(title=w("speed.throughput_title"), xlabel=w("speed.throughput_x"))


def draw_seeds(ax, rows, m, w):
    """Wall time of one seed against every seed side by side, with what the cores allow (seeds / cores
    times one seed)."""
    walls = [float(r["wall_s"]) for r in rows]
    labels = [
        w("speed.setup", setup=w.given("setups", r["setup"]), seeds=r["seeds"], processes=r["processes"],
          share=100 * float(r["cpu_share"]), seeds_word=w.plural("speed.seeds_word", r["seeds"]),
          processes_word=w.plural("speed.processes_word", r["processes"]))
        for r in rows
    ]  # fmt: skip
    ax.bar(labels, walls, color=["cb:blue"] + ["cb:orange"] * (len(rows) - 1))
    ideal = m["seeds_ratio_ideal"]
    ax.axhline(ideal * walls[0], color="black", ls="--", lw=1)
    # the note in the top left corner, above every bar, its label and the dashed line, wherever they are
    ax.text(0.02, 0.97, w("speed.ideal", times=ideal), va="top", fontsize=9, transform=ax.transAxes)
    for i, r in enumerate(rows):
        as_long = w("speed.as_long", times=float(r["ratio_to_one"]))
        ax.text(i, walls[i], as_long, ha="center", va="bottom", fontsize=9)
    ax.set(title=w("speed.seeds_title", steps=m["seeds_steps"]), ylabel=w("speed.seeds_y"))
    ax.set_ylim(0, max(*walls, ideal * walls[0]) * 1.7)  # the top third: the bars' labels and the note
    ax.tick_params(axis="x", labelsize=9)

"""The length study's figures: one figure, one function, each reading saved files, never a model."""

import numpy as np

from pipeline.report.inputs import read_json, read_rows
from pipeline.report.style import plt, save


def plot_study_accuracy(table_path, meta_path, path):
    """Exact-sequence accuracy against input length, one line per variant with its seed range."""
    rows = read_rows(table_path)
    meta = read_json(meta_path)
    bar = meta["bar"]["accuracy"]
    lengths = np.array([int(r["length"]) for r in rows])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [3, 2]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (variant, info) in enumerate(meta["variants"].items()):
        tested = np.array([r[variant] != "" for r in rows])
        x = lengths[tested]
        mean, low, high = (
            np.array([100 * float(r[f"{variant}{s}"]) for r, t in zip(rows, tested, strict=True) if t])
            for s in ("", "_min", "_max")
        )
        color = colors[i % len(colors)]
        trained = np.isin(x, info["train_lengths"])
        span = info["train_lengths"]
        trained_on = (
            "set by hand" if not span else f"trained on {span[0]}" + (f"-{span[-1]}" if len(span) > 1 else "")
        )
        label = f"{variant} ({trained_on})"
        style = "--" if info.get("attention", "softmax") != "softmax" else "-"  # other attention dashed
        for ax in axes:
            ax.plot(x, mean, style, color=color, lw=1.5, label=label)
            ax.fill_between(x, low, high, color=color, alpha=0.18, lw=0)
            ax.plot(x[trained], mean[trained], "o", color=color, ms=4)
    for ax in axes:
        ax.axhline(100 * bar, color="black", ls="--", lw=1)
        ax.axvline(20.5, color="grey", ls=":", lw=1)
        ax.set_xlabel("input length (digits)")
    axes[0].set(ylabel="sequences sorted exactly (%)", ylim=(-2, 102), title="All tested lengths")
    axes[0].annotate(
        f"{100 * bar:.0f} %",
        (lengths.max(), 100 * bar),
        textcoords="offset points",
        xytext=(-20, -12),
        fontsize=8,
    )
    axes[0].annotate("bar: lengths 1-20", (20.5, 50), textcoords="offset points", xytext=(4, 0), fontsize=8)
    axes[1].set(ylim=(90, 100.5), xlim=(0.5, 20.5), title="Zoom on the bar (lengths 1-20, 90-100 %)")
    axes[1].set_xticks(range(2, 21, 2))
    axes[1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(
        "Length generalisation: mean over seeds, band = seed range, dots = trained lengths, "
        "dashed = attention other than softmax, black dashed = the bar",
        fontsize=10,
    )
    save(fig, path)


def plot_study_heatmap(table_path, meta_path, path):
    """Every variant at every tested length at a glance: one row per variant, the mean over seeds as
    a colour and a number, trained lengths outlined, the bar's lengths left of the dotted line."""
    rows = read_rows(table_path)
    meta = read_json(meta_path)
    variants = list(meta["variants"])
    lengths = [int(r["length"]) for r in rows]
    grid = np.array([[100 * float(r[v]) if r[v] != "" else np.nan for r in rows] for v in variants])
    fig, ax = plt.subplots(figsize=(max(8, 0.32 * len(lengths) + 3), 0.45 * len(variants) + 1.6))
    image = ax.imshow(grid, aspect="auto", cmap="RdYlGn", vmin=0, vmax=100, interpolation="nearest")
    for i, v in enumerate(variants):
        for j, n in enumerate(lengths):
            if np.isnan(grid[i, j]):
                continue
            value = grid[i, j]
            # one decimal near the bar, so that 98.6 never reads as 99
            text = "100" if value >= 99.95 else f"{value:.1f}" if value >= 90 else f"{value:.0f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=5.5, color="black")
            if n in meta["variants"][v]["train_lengths"]:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=1.2, ec="black"))
    bar_edge = lengths.index(20) + 0.5 if 20 in lengths else None
    if bar_edge is not None:
        ax.axvline(bar_edge, color="black", ls=":", lw=1.2)
    ax.set_xticks(range(len(lengths)), lengths, fontsize=7)
    ax.set_yticks(range(len(variants)), variants, fontsize=8)
    ax.grid(False)
    ax.set_xlabel("input length (digits); outlined: trained on; dotted line: end of the bar's lengths 1-20")
    fig.colorbar(image, ax=ax, fraction=0.025, pad=0.01, label="sorted exactly (%)")
    ax.set_title("Exact-sequence accuracy by variant and length, mean over seeds (%)", fontsize=10)
    save(fig, path)


def plot_study_diagnosis(diagnosis_path, path):
    """Why the pipeline's model fails: how fast its outputs move through the sorted input, where its
    outputs go wrong, and the lesson's habit guesses."""
    diag = read_json(diagnosis_path)
    d, ref = diag["lengths"], max(diag["trained_lengths"])
    lengths = sorted(int(n) for n in d)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(lengths)))
    ax = axes[0]
    for n, color in zip(lengths, colors, strict=True):
        steps = np.arange(n)
        ax.plot(steps, d[str(n)]["emitted_rank"], "o-", color=color, ms=3, label=f"length {n}")
        ax.plot(steps, d[str(n)]["correct_rank"], ":", color=color, lw=1)
    ax.plot([], [], ":", color="grey", label="correct (dotted)")
    ax.set(
        title=f"Place in the sorted input of the digit written\n(correct: one place a step; model: {ref}ths)",
        xlabel="decoding step",
        ylabel="rank of the written digit in the input",
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    ax = axes[1]
    for n, color in zip(lengths, colors, strict=True):
        ax.plot(
            np.arange(n), 100 * np.array(d[str(n)]["acc_by_position"]), "o-", color=color, ms=3, label=f"{n}"
        )
    ax.set(
        title="Digits right, by output position",
        xlabel="output position",
        ylabel="correct (%)",
        ylim=(-2, 102),
    )
    ax.legend(fontsize=7, title="length", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=6)
    ax = axes[2]
    keys = [
        ("missing_digit", "leaves out an input digit"),
        ("extra_digit", "has a digit not in the input"),
        ("starts_with_0_given_no_0", "starts with 0, input has no 0"),
        ("ends_with_9_given_no_9", "ends with 9, input has no 9"),
    ]
    width = 0.8 / len(keys)
    for k, (key, label) in enumerate(keys):
        values = [100 * (d[str(n)][key] or 0.0) for n in lengths]
        ax.bar(np.arange(len(lengths)) + (k - (len(keys) - 1) / 2) * width, values, width, label=label)
    ax.set_xticks(range(len(lengths)), [f"{n}\n(trained)" if n == ref else str(n) for n in lengths])
    ax.set(
        title="How outputs fail, and the lesson's habit guess", xlabel="input length", ylabel="outputs (%)"
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2)
    fig.suptitle(
        f"Why the model trained on length {ref} fails elsewhere (mean over seeds)", fontsize=11, y=1.04
    )
    save(fig, path)


def plot_study_attention(diagnosis_path, path, variants_shown=3):
    """Cross-attention of the last decoder layer, inputs ordered by rank, averaged over inputs and
    heads: the ridge shows which place of the sorted input each step reads. One row for the
    pipeline's model, one for each of the `variants_shown` variants most accurate over the
    diagnosis lengths."""
    diag = read_json(diagnosis_path)
    ref = max(diag["trained_lengths"])
    variants = diag.get("variants", {})
    trained = [v for v in variants if v != "handset"]  # the hand-set model's gates count, not point
    best = sorted(trained, key=lambda v: -np.mean([d["seq_acc"] for d in variants[v].values()]))
    panels = {"pipeline (models/)": diag["lengths"], **{v: variants[v] for v in best[:variants_shown]}}
    lengths = sorted(int(n) for n in diag["lengths"])
    vmax = max(np.max(d[str(n)]["attention_by_rank"]) for d in panels.values() for n in lengths)
    fig, axes = plt.subplots(
        len(panels), len(lengths), figsize=(3.3 * len(lengths), 3.3 * len(panels) + 0.6), squeeze=False
    )
    for row, (name, d) in zip(axes, panels.items(), strict=True):
        for ax, n in zip(row, lengths, strict=True):
            weights = np.array(d[str(n)]["attention_by_rank"])  # (steps, ranks)
            image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=vmax, aspect="auto")
            steps = np.arange(n)
            ax.plot(steps, steps, "w--", lw=1, label="rank = step (correct)")
            if d is diag["lengths"]:  # the pipeline's model: the clock set to its training length
                ax.plot(
                    np.minimum(steps * n / ref, n - 1),
                    steps,
                    "r:",
                    lw=1.2,
                    label=f"rank = step x length/{ref}",
                )
            ax.set_title(f"{name}: length {n}", fontsize=8)
            ax.set_xlim(-0.5, n - 0.5)
            ax.set_ylim(n - 0.5, -0.5)
            ax.grid(False)
            ax.set_xlabel("rank in the sorted input", fontsize=8)
            if n == lengths[0]:
                ax.set_ylabel("decoding step")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.subplots_adjust(hspace=0.45, bottom=0.08)
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    fig.suptitle(
        "Where the decoder's cross-attention looks, inputs ordered by rank "
        "(last layer, mean over heads and inputs)",
        fontsize=10,
        y=0.92 + 0.02 / len(panels),
    )
    save(fig, path)


COUNTS = ("1", "2", "3", "4", "5", "6", "7+")


def plot_study_counting(diagnosis_path, path, length="20"):
    """How each variant counts: the weight each of its attentions sums per query as the input grows
    (the one that grows most), and exact sequences at one length by the largest number of copies of
    one digit in the input."""
    diag = read_json(diagnosis_path)
    panels = {"pipeline (models/)": diag["lengths"], **diag.get("variants", {})}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / len(panels)
    for i, (name, d) in enumerate(panels.items()):
        lengths = sorted(int(n) for n in d if d[n].get("attention_mass"))
        if lengths:
            masses = {
                k: [d[str(n)]["attention_mass"][k] for n in lengths]
                for k in d[str(lengths[0])]["attention_mass"]
            }
            widest = max(masses, key=lambda k: masses[k][-1])
            axes[0].plot(
                lengths, masses[widest], "o-", color=colors[i % len(colors)], ms=3, label=f"{name}: {widest}"
            )
        counts = d.get(length, {}).get("seq_acc_by_repeats", {})
        bars = [100 * counts[k] if counts.get(k) is not None else np.nan for k in COUNTS]
        axes[1].bar(
            np.arange(len(COUNTS)) + (i - (len(panels) - 1) / 2) * width,
            bars,
            width,
            color=colors[i % len(colors)],
            label=name,
        )
    axes[0].set(
        title="The attention that sums most: total weight per query",
        xlabel="input length (digits)",
        ylabel="sum of weights per query (1 = an average)",
    )
    axes[0].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    axes[1].set_xticks(range(len(COUNTS)), COUNTS)
    axes[1].set(
        title=f"Exact sequences at length {length} by the largest count of one digit",
        ylim=(0, 105),
        xlabel="copies of the most frequent digit in the input",
        ylabel="sorted exactly (%)",
    )
    axes[1].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    fig.suptitle("How the study's models count (mean over seeds)", fontsize=11)
    save(fig, path)

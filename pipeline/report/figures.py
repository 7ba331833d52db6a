"""The lessons' and the probes' figures: one figure, one function; each reads saved metrics, never a model."""

from itertools import product

from pipeline.report.inputs import memory_tokens, read_json, read_numbers, read_rows
from pipeline.report.style import legend_centred, plt, save

NORM_COLORS = {"post": "cb:blue", "pre": "cb:orange"}
SUM_STYLES = {"with_sum": "o-", "without_sum": "x--"}
PATHS = {"encoder": "encoder: embedding → memory", "source_to_output": "whole model: embedding → output"}
JACOBIAN_NOTE = (  # what the reader sees, in words
    "Jacobian-vector norm at initialisation as depth grows. Solid: with the residual sum; dashed: without.\n"
    "A dashed line above its solid one: without the sum, the output moves more for the same nudge of the\n"
    "input. Each added layer multiplies a line by the factor in its legend (under 1: the line falls)"
)


def plot_loss(losses_by_seed, floor, lesson_losses, path):
    """Lesson 10, "La pérdida y su piso": every seed's loss, the lesson's printed losses and the floor
    label smoothing sets. `lesson_losses`: {step: the loss the lesson printed}."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, losses in enumerate(losses_by_seed):
        label = f"each of our {len(losses_by_seed)} seeds" if i == 0 else None
        ax.plot(range(1, len(losses) + 1), losses, lw=0.6, alpha=0.55, color="cb:blue", label=label)
    steps, printed = list(lesson_losses), list(lesson_losses.values())
    ax.scatter(steps, printed, marker="D", s=40, color="cb:red", zorder=3, label="the lesson's printed loss")
    ax.axhline(floor, color="black", ls="--", lw=1.2, label=f"floor (entropy of q) = {floor:.3f}")
    ax.set(yscale="log", ylim=(floor * 0.9, None), title="Training loss and its floor under label smoothing")
    ax.set_xlabel("training step (one batch of 64 sequences)")
    ax.set_ylabel("label-smoothed cross-entropy (nats, log scale)")
    ax.legend(loc="upper right", fontsize=8)
    save(fig, path)


def plot_length_accuracy(table_path, trained_lengths, lesson_table, path):
    """Lesson 10, "Secuencias perfectas según el largo": exact sequences by input length, our seeds
    against the lesson's one run (`lesson_table`: {length: fraction})."""
    rows = read_numbers(table_path)
    lengths = [int(r["length"]) for r in rows]
    mean = [100 * r["seq_acc"] for r in rows]
    low = [100 * (r["seq_acc"] - r["seq_acc_min"]) for r in rows]  # the whiskers' lengths
    high = [100 * (r["seq_acc_max"] - r["seq_acc"]) for r in rows]
    colors = ["cb:green" if n in trained_lengths else "cb:blue" for n in lengths]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(lengths, mean, width=1.2, color=colors, alpha=0.8, label="this replication: mean of seeds")
    ax.errorbar(lengths, mean, [low, high], fmt="none", ecolor="black", capsize=4, label="range over seeds")
    stated = [(n, 100 * v) for n, v in lesson_table.items() if n in lengths]
    if stated:  # only where this run tested the lesson's lengths
        ax.scatter(*zip(*stated, strict=True), marker="D", color="cb:red", zorder=3, label="lesson 10")
    for n, m in zip(lengths, mean, strict=True):
        ax.annotate(f"{m:.1f}%", (n + 0.62, 2), ha="left", fontsize=8, rotation=90)
    ax.set_xticks(lengths, [f"{n}\n(trained)" if n in trained_lengths else str(n) for n in lengths])
    ax.set(ylim=(0, 110), title="Greedy exact-sequence accuracy by input length (trained on green)")
    ax.set(xlabel="input length (digits)", ylabel="sequences sorted exactly (%)")
    ax.legend(loc="upper left", fontsize=8)
    save(fig, path)


def plot_cross_attention(example_path, path):
    """The decoder's cross-attention on the lesson's example: which input digit each step reads."""
    example = read_json(example_path)
    layers = example["cross_attention"]  # [layer][head][output step][input position]
    n_layers, n_heads = len(layers), len(layers[0])
    size = (2.3 * n_heads + 1, 2.4 * n_layers + 0.6)
    fig, axes = plt.subplots(n_layers, n_heads, figsize=size, squeeze=False)
    memory, emitted = memory_tokens(example), [str(d) for d in example["output"]]
    steps = [f"{r}→{e}" for r, e in zip(["BOS"] + emitted[:-1], emitted, strict=True)]  # reads → emits
    for i, layer in enumerate(layers):
        for h, weights in enumerate(layer):
            ax = axes[i][h]
            image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(memory)), memory, fontsize=7)
            ax.set_yticks(range(len(emitted)), steps if h == 0 else [], fontsize=7)
            ax.grid(False)
            ax.set_title(f"layer {i + 1}, head {h + 1}", fontsize=9)
            if h == 0:
                ax.set_ylabel("decoder step: reads → emits")
            if i == n_layers - 1:
                ax.set_xlabel("input digit (position)")
    fig.colorbar(image, ax=axes, shrink=0.7, label="attention weight")
    fig.suptitle(
        f"Cross-attention while sorting {' '.join(map(str, example['input']))} (seed {example['seed']}): "
        "each step looks up the next digit",
        fontsize=10,
    )
    save(fig, path)


def plot_residual(table_path, path):
    """Lesson 6's residual cell: d(output)/d(one input coordinate) through 12 stacked FFNs."""
    rows = read_numbers(table_path)
    layers = [int(r["layers"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label, color in [
        ("with_sum", "with the sum x + FFN(x)", "cb:green"),
        ("without_sum", "without the sum: FFN(x)", "cb:red"),
    ]:
        difference, exact = [r[f"{key}_fd"] for r in rows], [r[f"{key}_autograd"] for r in rows]
        ax.plot(layers, difference, "o-", color=color, label=f"{label}: finite difference")
        ax.plot(layers, exact, "x", color="black", ms=8)
    ax.plot([], [], "x", color="black", label="exact (autograd Jacobian-vector product)")
    ax.set(yscale="log", xticks=layers)
    ax.set_title("How much the output moves when one input coordinate moves (lesson 6)")
    ax.set(xlabel="stacked position-wise FFNs (layers)", ylabel="||d output / d x[0, 0]|| (log scale)")
    ax.legend(fontsize=8, loc="lower left")
    save(fig, path)


def plot_gradient_depth(grad_path, path):
    """The loss gradient at each sublayer's input through the real model's depth."""
    rows = read_rows(grad_path)
    names = [f"{r['stack'][:3]}{int(r['layer']) + 1} {r['sublayer'].replace('_attn', '')}" for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    gradients = {f"{n}_{when}": (n, when == "trained") for n in NORM_COLORS for when in ("init", "trained")}
    for column in [c for c in rows[0] if c in gradients]:  # the table's order: the figure's layers
        norm, trained = gradients[column]
        values = [float(r[column]) if r[column] else float("nan") for r in rows]
        label = f"{norm}-norm, {'after training' if trained else 'at initialisation'}"
        ax.plot(range(len(rows)), values, "o-" if trained else "s--", color=NORM_COLORS[norm], label=label)
    for norm, x in (("post", len(rows) - 0.6), ("pre", len(rows) - 0.3)):  # the report's ratios
        v, color = [float(r[f"{norm}_init"]) for r in rows], NORM_COLORS[norm]
        encoder = [g for g, r in zip(v, rows, strict=True) if r["stack"] == "encoder"]
        ax.hlines(v[0], 0, x, color=color, ls=":", lw=0.8)  # the bottom's level, carried to the top's
        ax.annotate("", (x, v[0]), (x, v[-1]), arrowprops={"arrowstyle": "<->", "color": color})
        ratios = f"bottom / top:\n{v[0] / v[-1]:.3f}\nencoder\nmax / min:\n{max(encoder) / min(encoder):.2f}"
        ax.text(len(rows) - 0.1, (v[0] * v[-1]) ** 0.5, ratios, color=color, fontsize=7.5, va="center")
    ax.set(yscale="log", xlim=(-0.5, len(rows) + 1.3))  # room on the right for the ratios
    ax.set_xticks(range(len(rows)), names, rotation=45, ha="right", fontsize=8)
    ax.set_title("Gradient of the loss at each sublayer's input, bottom (left) to top (right)")
    ax.set(xlabel="sublayer (encoder, then decoder)", ylabel="||d loss / d x|| (log scale)")
    ax.legend(fontsize=8)
    save(fig, path)


def plot_jacobian_sweep(sweep_path, path):
    """Input-output Jacobian norm at initialisation as layers are stacked, with and without sums."""
    rows = read_numbers(sweep_path)
    layers = [int(r["layers"]) for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    for ax, (stack, title) in zip(axes, PATHS.items(), strict=True):
        for norm, sums in product(NORM_COLORS, SUM_STYLES):
            key = f"{stack}_{norm}_{sums}"
            if key in rows[0]:
                values = [max(r[key], 1e-300) for r in rows]  # a zero stays on the log scale
                factor = (values[-1] / values[0]) ** (1 / (layers[-1] - layers[0]))  # geometric mean
                label = f"{norm}-norm, {sums.replace('_', ' ')}: ×{factor:.3f} a layer"
                ax.plot(layers, values, SUM_STYLES[sums], color=NORM_COLORS[norm], label=label)
        ax.set(yscale="log", title=title, xlabel="layers per stack", ylabel="||J v|| (log scale)")
        ax.legend(fontsize=7)
    fig.suptitle(JACOBIAN_NOTE, fontsize=9.5, y=1.06)
    save(fig, path)


def plot_layernorm(cell_path, probe_metrics, path):
    """Lesson 6's LayerNorm cell: each row normalised on its own, and what touching row 4 does."""
    rows = read_numbers(cell_path)
    index = [int(r["row"]) for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    stages = [("in", "input"), ("out", "LayerNorm"), ("affine", "γ = 4, β = −1")]
    for offset, (key, label) in enumerate(stages):
        xs = [i + (offset - 1) * 0.25 for i in index]
        means, deviations = [r[f"{key}_mean"] for r in rows], [r[f"{key}_std"] for r in rows]
        left.errorbar(xs, means, yerr=deviations, fmt="o", capsize=3, label=label)
    left.set_xticks(index, [f"row {i}" for i in index])
    left.set_title("Each row's mean (dot) ± its deviation (whisker)")
    left.set(xlabel="position (row of X)", ylabel="value")
    legend_centred(left, -0.16, ncol=3, fontsize=8)  # under the axis: no whisker hidden
    shifts = [probe_metrics[f"layernorm_row0_shift_per_{along}"] for along in ("row", "column")]
    right.bar(["per row\n(LayerNorm)", "per column\n(batch-style)"], shifts, color=["cb:green", "cb:red"])
    for i, v in enumerate(shifts):
        right.annotate(f"{v:.3f}", (i, v), textcoords="offset points", xytext=(0, 4), ha="center")
    right.set(title="Row 4 += 10: how far row 0 moves", ylabel="max |change in row 0|")
    right.set_ylim(0, max(shifts) * 1.25)
    save(fig, path)

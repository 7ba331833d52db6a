"""The speed report's figure: one function, reading only what `python -m pipeline.tools.benchmark` saved."""

from pathlib import Path

from matplotlib.ticker import MaxNLocator, NullFormatter

from pipeline.report.inputs import read_json, read_rows
from pipeline.report.style import plt, save


def load_benchmark(data):
    """metrics/benchmark.json and the CSVs in metrics/benchmark/ beside it, as {name: rows}."""
    json_path = Path(data)
    csvs = sorted(json_path.with_suffix("").glob("*.csv"))
    return {"metrics": read_json(json_path)} | {path.stem: read_rows(path) for path in csvs}


def plot_benchmark(data, path):
    """Four panels from `data` (metrics/benchmark.json): the training step against nn.Transformer, greedy
    decoding with and without the cache, evaluation throughput, and three seeds at once against one."""
    t = load_benchmark(data)
    m = t["metrics"]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    draw_train_step(axes[0, 0], t["train_step"], m)
    draw_decoding(axes[0, 1], t["decoding"], m)
    draw_throughput(axes[1, 0], t["throughput"])
    draw_seeds(axes[1, 1], t["seeds"], m)
    mode = f", numerics {m['numerics_mode']}" if "numerics_mode" in m else ""  # records before it lack it
    fig.suptitle(
        f"Speed on {m['cpu']} ({m['cpu_count']} cores), torch {m['torch']}, {m['threads']} thread{mode}; "
        f"load average {m['load_average_before']:.2f} before the run, {m['load_average_after']:.2f} after it",
        fontsize=10,
    )
    fig.tight_layout()
    save(fig, path)


def draw_train_step(ax, rows, m):
    """Our training step against nn.Transformer's, median and quartiles."""
    names, median = [r["implementation"] for r in rows], [float(r["median_ms"]) for r in rows]
    low = [float(r["median_ms"]) - float(r["q1_ms"]) for r in rows]  # the whiskers' lengths
    high = [float(r["q3_ms"]) - float(r["median_ms"]) for r in rows]
    ax.barh(names, median, xerr=[low, high], color=["cb:blue"] + ["tab:gray"] * (len(rows) - 1), capsize=3)
    ax.invert_yaxis()
    for i, value in enumerate(median):
        note = f"{value:.1f} ms" + (f", {value / median[0]:.2f}x ours" if i else "")
        ax.text(value + high[i], i, "  " + note, va="center", fontsize=8)
    ax.set_title(f"Training step, one thread (ours {m['train_step_speedup']:.2f}x faster)")
    ax.set(xlabel="ms per step (median, quartiles)", xlim=(0, max(median) * 1.6))


def draw_decoding(ax, rows, m):
    """Greedy decoding time by output length, re-running the decoder against the cache."""
    lengths = [int(r["length"]) for r in rows]
    for key, fmt, how in [("uncached", "o-", "re-running the decoder"), ("cached", "s-", "key/value cache")]:
        growth = m[f"decode_growth_exponent_{key}"]
        ax.loglog(lengths, [float(r[f"{key}_ms"]) for r in rows], fmt, label=f"{how} (~n^{growth:.1f})")
    for r in rows:  # each speed-up beside a dotted line from one time to the other, clear of the axis
        n, times = int(r["length"]), (float(r["cached_ms"]), float(r["uncached_ms"]))
        ax.vlines(n, *times, color="grey", ls=":", lw=1)
        ax.text(
            n * 1.04, (times[0] * times[1]) ** 0.5, f"{float(r['speedup']):.1f}x", fontsize=8, va="center"
        )
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_title(f"Greedy decoding, {m['decode_rows']} sequences (labels: speed-up)")
    ax.set(xlabel="output length n (tokens)", ylabel="ms per batch (median)")
    ax.legend(fontsize=8)


def draw_throughput(ax, rows):
    ax.barh([r["decoder"] for r in rows], [float(r["sequences_per_s"]) for r in rows], color="cb:green")
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(5))  # thousands of sequences: few ticks stay readable
    ax.set(title="Evaluation throughput, length 10, one thread", xlabel="sequences per second")


def draw_seeds(ax, rows, m):
    """Wall time of one seed against every seed side by side, with what the cores allow (seeds / cores
    times one seed)."""
    walls = [float(r["wall_s"]) for r in rows]
    template = "{setup}\n{seeds} seed(s), {processes} proc.\n{share:.0%} core each"
    labels = [template.format(**r, share=float(r["cpu_share"])) for r in rows]
    ax.bar(labels, walls, color=["cb:blue"] + ["cb:orange"] * (len(rows) - 1))
    ideal = m["seeds_ratio_ideal"]
    ax.axhline(ideal * walls[0], color="black", ls="--", lw=1, label=f"seeds / cores: {ideal:g}x one seed")
    for i, r in enumerate(rows):
        ax.text(i, walls[i], f"{float(r['ratio_to_one']):.2f}x", ha="center", va="bottom", fontsize=8)
    ax.set(title=f"Seeds side by side, {m['seeds_steps']} steps each", ylabel="wall seconds")
    ax.tick_params(axis="x", labelsize=8)
    ax.legend(fontsize=8, loc="lower right")

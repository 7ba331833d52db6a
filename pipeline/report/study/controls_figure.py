"""What training adds, beside its controls, as one figure: each judged recipe a panel, exact
sequences (mean over the verdict's three kinds of input and the seeds read) against the length, for
the architecture untrained, set by hand and trained, each decoded by its own layers and, where its
count can be read by hand, by the hand-set readout too."""

import textwrap

from pipeline.report.inputs import read_json
from pipeline.report.style import ENGLISH, cycle_color, plt, save
from pipeline.study.verdict_rows import READOUT, TRAINED

# (weights, decoder) -> how the line is drawn: the trained model in its recipe's colour
LINES = {
    ("untrained", TRAINED): {"color": "grey", "ls": "--", "marker": "o", "mfc": "grey"},
    ("untrained", READOUT): {"color": "grey", "ls": "none", "marker": "D", "mfc": "none", "ms": 8},
    ("handset", TRAINED): {"color": "black", "ls": ":", "marker": "s", "mfc": "black", "ms": 4},
    ("trained", TRAINED): {"ls": "-", "marker": "o", "lw": 1.8},
    ("trained", READOUT): {"ls": "none", "marker": "D", "mfc": "none", "ms": 5},
}


def plot_controls(record_path, path, longest_trained, w=ENGLISH):
    """`longest_trained`: the recipes' longest training length, the shaded lengths."""
    record = read_json(record_path)
    controls, max_train = record["controls"], longest_trained
    recipes = list(controls)
    fig, axes = plt.subplots(
        1, len(recipes), figsize=(4.6 * len(recipes), 4.4), sharey=True, layout="constrained", squeeze=False
    )
    handles = {}
    for i, (ax, recipe) in enumerate(zip(axes[0], recipes, strict=True)):
        for (weights, decoder), style in LINES.items():
            at = controls[recipe].get(weights, {}).get(decoder)
            if not at:
                continue
            lengths = sorted(at, key=int)
            style = {"lw": 1.2, "ms": 5, "color": cycle_color(i), **style}
            label = w(f"controls_figure.{weights}_{decoder}")
            line = ax.plot([int(n) for n in lengths], [100 * at[n]["mean"] for n in lengths], **style)[0]
            handles.setdefault(label, line)
        if max_train:
            ax.axvspan(0, max_train, color="grey", alpha=0.12, lw=0)
        ax.set(
            title=textwrap.fill(w.given("variants", recipe), 46),
            xlabel=w("input_length"),
            ylim=(-4, 104),
            xlim=(0, None),
        )
        ax.title.set_fontsize(9)
    axes[0, 0].set_ylabel(w("sorted_exactly"))
    if max_train:
        handles[w("controls_figure.trained_lengths", high=max_train)] = plt.Rectangle(
            (0, 0), 1, 1, color="grey", alpha=0.12
        )
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=3, fontsize=8)
    fig.suptitle(w("controls_figure.title", size=record["test_size"]), fontsize=10)
    save(fig, path, w.lang)

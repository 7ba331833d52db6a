"""What training adds, beside its controls, as one figure: each judged recipe a panel, exact
sequences (mean over the verdict's three kinds of input and the seeds read) against the length, for
the architecture untrained, set by hand and trained, each decoded by its own layers and, where its
count can be read by hand, by the hand-set readout too."""

from pipeline.report.inputs import read_json
from pipeline.report.style import ENGLISH, cycle_color, fitted, plt, save
from pipeline.study.verdict_rows import READOUT, TRAINED

# (weights, decoder) -> how the line is drawn: the trained model in its recipe's colour; a line joins
# the lengths measured, far apart, dotted: nothing between them is measured, nothing is to be read there
LINES = {
    ("untrained", TRAINED): {"color": "grey", "ls": ":", "marker": "o", "mfc": "grey"},
    ("untrained", READOUT): {"color": "grey", "ls": "none", "marker": "D", "mfc": "none", "ms": 9},
    ("handset", TRAINED): {"color": "black", "ls": ":", "marker": "s", "mfc": "black", "ms": 5},
    ("trained", TRAINED): {"ls": ":", "marker": "o", "ms": 6.5},
    ("trained", READOUT): {"ls": "none", "marker": "D", "mfc": "none", "ms": 6},
}


def plot_controls(record_path, path, longest_trained, w=ENGLISH):
    """`longest_trained`: the recipes' longest training length, the shaded lengths."""
    record = read_json(record_path)
    controls, max_train = record["controls"], longest_trained
    recipes = list(controls)
    fig, axes = plt.subplots(
        1, len(recipes), figsize=(2.9 * len(recipes), 5.4), sharey=True, layout="constrained", squeeze=False
    )
    handles, measured = {}, set()
    for i, (ax, recipe) in enumerate(zip(axes[0], recipes, strict=True)):
        for (weights, decoder), style in LINES.items():
            at = controls[recipe].get(weights, {}).get(decoder)
            if not at:
                continue
            lengths = sorted(at, key=int)
            measured.update(int(n) for n in lengths)
            style = {"lw": 1.2, "ms": 5, "color": cycle_color(i), **style}
            label = w(f"controls_figure.{weights}_{decoder}")
            line = ax.plot([int(n) for n in lengths], [100 * at[n]["mean"] for n in lengths], **style)[0]
            handles.setdefault(label, line)
        if max_train:
            ax.axvspan(0, max_train, color="grey", alpha=0.12, lw=0)
        ax.set(xlabel=fitted(w("input_length"), 2.5, 10), ylim=(-4, 104), xlim=(0, None))
        ax.set_title(w.recipe(recipe), fontsize=10)
    axes[0, 0].set_ylabel(w("sorted_exactly"))
    if max_train:
        handles[w("controls_figure.trained_lengths", high=max_train)] = plt.Rectangle(
            (0, 0), 1, 1, color="grey", alpha=0.12
        )
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=1, fontsize=9)
    lengths = ", ".join(map(str, sorted(measured)))
    title = w("controls_figure.title", size=record["test_size"], lengths=lengths)
    fig.suptitle(fitted(title, fig.get_figwidth(), 10.5), fontsize=10.5)
    save(fig, path, w.lang)

"""Where the study's training time goes, as one figure: each trained variant's loss against the
step (mean over its seeds, the band their range), with the steps its recipe trains for: a recipe
whose curve is flat long before its last step pays for steps it does not need."""

import textwrap

import numpy as np

from pipeline.report.inputs import read_rows
from pipeline.report.style import ENGLISH, cycle_color, plt, save


def plot_loss_curves(curves_path, path, w=ENGLISH):
    rows = read_rows(curves_path)
    fig, ax = plt.subplots(figsize=(9, 5.8), layout="constrained")
    for i, variant in enumerate(dict.fromkeys(r["variant"] for r in rows)):
        by_step = {}
        for r in rows:
            if r["variant"] == variant:
                by_step.setdefault(int(r["step"]), []).append(float(r["loss"]))
        steps = sorted(by_step)
        seeds = len(by_step[steps[0]])
        mean = [np.mean(by_step[s]) for s in steps]
        color = cycle_color(i)
        label = w("loss_figure.variant", name=w.given("variants", variant), seeds=seeds, steps=steps[-1])
        ax.plot(steps, mean, color=color, lw=1.4, label=label)
        low, high = ([f(by_step[s]) for s in steps] for f in (np.min, np.max))
        ax.fill_between(steps, low, high, color=color, alpha=0.15, lw=0)
        ax.plot(steps[-1:], mean[-1:], "o", color=color, ms=4)  # where the recipe stops
    # both axes logarithmic: the first hundred steps fall by a factor of ten, the rest approach the
    # label-smoothing floor, where the recipes differ
    ax.set(xscale="log", yscale="log", xlabel=w("loss_figure.x"), ylabel=w("loss_figure.y"))
    ax.set_title(textwrap.fill(w("loss_figure.title"), 90), fontsize=10)
    fig.legend(fontsize=8, loc="outside lower center", ncol=1)  # under the axes: no curve hidden
    save(fig, path, w.lang)

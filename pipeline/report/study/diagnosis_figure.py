"""Why the pipeline's model fails away from its trained length, as one figure: how fast its outputs
move through the sorted input and how many digits it gets right at each output position (side by
side, one colour a length), and, under them across the page, where its outputs go wrong beside the
lesson's habit guesses."""

import numpy as np

from pipeline.report.inputs import read_json
from pipeline.report.style import ENGLISH, PAGE_WIDTH, fitted, grouped_bar, legend_centred, plt, save

# how an output goes wrong, then the lesson's habit guesses
FAILURES = ("missing_digit", "extra_digit", "starts_with_0_given_no_0", "ends_with_9_given_no_9")
PANEL_WIDTH = 3.6  # inches of a top panel's title line
LEGEND_SIZE = 9


def plot_study_diagnosis(diagnosis_path, path, w=ENGLISH):
    diag = read_json(diagnosis_path)
    d, ref = diag["lengths"], max(diag["trained_lengths"])
    lengths = sorted(int(n) for n in d)
    fig = plt.figure(figsize=(PAGE_WIDTH, 10.2), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=(1.25, 1))
    ranks, hits, fails = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
    for n, color in zip(lengths, plt.cm.viridis(np.linspace(0, 0.9, len(lengths))), strict=True):
        steps, at = np.arange(n), d[str(n)]
        # its measured pace beside that of a clock set to the trained length
        pace = w("diagnosis.length", n=n, pace=at["rank_speed"], ref=ref, clock=n / ref)
        ranks.plot(steps, at["emitted_rank"], "o-", color=color, ms=3, label=pace)
        ranks.plot(steps, at["correct_rank"], ":", color=color, lw=1)
        hits.plot(steps, 100 * np.array(at["acc_by_position"]), "o-", color=color, ms=3, label=f"{n}")
    ranks.plot([], [], ":", color="grey", label=w("diagnosis.correct"))
    ranks.set_title(fitted(w("diagnosis.ranks_title"), PANEL_WIDTH, 10, balanced=True), fontsize=10)
    ranks.set(xlabel=w("decoding_step"), ylabel=fitted(w("diagnosis.ranks_y"), 3.0, 10, balanced=True))
    pace_title = fitted(w("diagnosis.pace_legend", ref=ref), PANEL_WIDTH, LEGEND_SIZE)
    legend_centred(ranks, -0.17, ncol=1, fontsize=LEGEND_SIZE, title=pace_title, title_fontsize=LEGEND_SIZE)
    hits.set_title(fitted(w("diagnosis.hits_title"), PANEL_WIDTH, 10), fontsize=10)
    hits.set(xlabel=w("diagnosis.hits_x"), ylabel=w("diagnosis.hits_y"), ylim=(-2, 102))
    legend_centred(
        hits,
        -0.17,
        ncol=3,
        fontsize=LEGEND_SIZE,
        title=w("diagnosis.hits_legend"),
        title_fontsize=LEGEND_SIZE,
    )
    for k, key in enumerate(FAILURES):
        values = [100 * (d[str(n)][key] or 0.0) for n in lengths]
        grouped_bar(
            fails, k, len(FAILURES), values, lang=w.lang, size=LEGEND_SIZE, label=w(f"diagnosis.{key}")
        )
    trained = w("length.trained")
    fails.set_xticks(range(len(lengths)), [f"{n}\n{trained}" if n == ref else str(n) for n in lengths])
    fails.set_title(fitted(w("diagnosis.fails_title"), PAGE_WIDTH, 10), fontsize=10)
    fails.set(xlabel=w("input_length"), ylabel=w("diagnosis.fails_y"))
    fig.legend(*fails.get_legend_handles_labels(), loc="outside lower center", ncol=2, fontsize=LEGEND_SIZE)
    fig.suptitle(fitted(w("diagnosis.title", ref=ref), PAGE_WIDTH, 11), fontsize=11)
    save(fig, path, w.lang)

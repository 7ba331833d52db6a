"""The search's rows aimed at the readout that drifts with length, as the report shows them: each row
tested on the verdict's three kinds of input (drawn from the search's own seed, study.seed), how far
it sorts each kind at the search's bar and all three, and its mean on each kind at the longest length
tested; and one figure of the rows that go furthest beside the study's signed recipe screened again."""

import numpy as np

from pipeline.report.style import ENGLISH, PAGE_WIDTH, cycle_color, fitted, plt, save
from pipeline.study.bar import as_trained, reach, recipe_of, search_rank
from pipeline.study.options import counts_written

SHOWN = 4  # rows the figure draws beside the line every row is read against
STEP = 5  # % the zoomed axis's foot is rounded down to
PANEL_WIDTH = 2.4  # inches of a panel's title line: a kind a panel, the three side by side
LEGEND_SIZE = 9


def per_seed(by_seed, n):
    return [acc[str(n)] for acc in by_seed.values()]


def kinds_row(row, bar):
    """One row judged on the three kinds: its reach on each kind and on all three, its mean on each
    kind at the longest length tested."""
    lengths = sorted({int(n) for acc in row["kinds"]["uniform"].values() for n in acc})
    by_kind = {k: {n: per_seed(acc, n) for n in lengths} for k, acc in row["kinds"].items()}
    longest = lengths[-1]
    return {
        **row,
        "kind_reach": {k: reach(at, bar) for k, at in by_kind.items()},
        "at_longest": {k: float(np.mean(at[longest])) for k, at in by_kind.items()},
        "by_kind": by_kind,
        "longest": longest,
    }


def signed_recipe(study):
    """What the verdict's (first) signed variant trains, or None where it judges none."""
    signed = [v for v in study.verdict.variants if counts_written(study.recipes[v][0].attention)]
    return recipe_of(study, signed[0]) if signed else None


def readout_search(rows, study):
    """The search's rows judged on the three kinds, in the rows file's order (`rows`: every row), with
    the screens aimed at the readout, the one the search ranks first (among equals the one on more
    seeds), the rows as far as it on all three kinds (`level`), and the line every other is read
    against: the row that trains what the verdict's signed variant trains (its screen)."""
    bar = study.bar
    judged = [kinds_row(r, bar) for r in rows if "kinds_reach" in r]
    if not judged:
        return None
    line = [r for r in judged if as_trained(r["recipe"]) == signed_recipe(study)]
    line = min(line, key=lambda r: len(r["seeds"])) if line else None  # its screen
    screen = list(study.search_seeds.screen)
    best = max(judged, key=lambda r: (search_rank(r), len(r["seeds"])))  # a confirmation first
    return {
        "rows": judged,
        "aimed": [r for r in judged if r is not line and r["seeds"] == screen],  # the screens tried
        "best": best,
        "level": [r for r in judged if r is not best and r["kinds_reach"] == best["kinds_reach"]],
        "line": line,
        "longest": judged[0]["longest"],
    }


def shown_rows(found):
    """The line every row is read against, then the rows ranked first (the confirmation of a recipe
    where it has one, rather than its screen), at most SHOWN of them."""
    line, chosen, recipes = found["line"], [], set()
    by_seeds = sorted(found["rows"], key=lambda r: len(r["seeds"]), reverse=True)  # confirmations first
    for r in sorted(by_seeds, key=search_rank, reverse=True):
        key = repr(r["recipe"])
        if key in recipes or (line and as_trained(r["recipe"]) == as_trained(line["recipe"])):
            continue
        recipes.add(key)
        chosen.append(r)
    return ([line] if line else []) + chosen[:SHOWN]


def plot_readout_search(found, bar, path, w=ENGLISH):
    """Narrow enough to read at a page's width: a panel a kind, as the verdict's figure lays them, the
    legend in one column under them, each row's words wrapped to the page."""
    kinds = list(found["rows"][0]["by_kind"])
    size = (PAGE_WIDTH, 7.0)
    fig, axes = plt.subplots(1, len(kinds), figsize=size, sharey=True, layout="constrained")
    handles, lowest = {}, 100 * bar.accuracy
    for i, row in enumerate(shown_rows(found)):
        color = "black" if row is found["line"] else cycle_color(i - (found["line"] is not None))
        label = w(
            "readout_figure.row",
            name=w.given("search_rows", row["name"]),
            seeds=len(row["seeds"]),
            reach=row["kinds_reach"],
        )
        label = fitted(label, PAGE_WIDTH - 0.6, LEGEND_SIZE, balanced=True)
        for ax, kind in zip(np.atleast_1d(axes), kinds, strict=True):
            at = row["by_kind"][kind]
            lengths = list(at)
            mean = [100 * np.mean(at[n]) for n in lengths]
            style = {"ls": "--", "lw": 1.2} if row is found["line"] else {"ls": "-", "lw": 1.5}
            handles[label] = ax.plot(lengths, mean, color=color, **style)[0]
            low = [100 * min(at[n]) for n in lengths]
            if len(row["seeds"]) > 1:
                ax.fill_between(lengths, low, mean, color=color, alpha=0.12, lw=0)
            lowest = min(lowest, *low)
    # the rows sit near the top: the axis zoomed down to the lowest seed drawn, a step below it
    foot = max(0, STEP * np.floor((lowest - 1) / STEP))
    for ax, kind in zip(np.atleast_1d(axes), kinds, strict=True):
        ax.axhline(100 * bar.accuracy, color="grey", ls=":", lw=1)
        ax.axvspan(0, 10.5, color="grey", alpha=0.08, lw=0)
        title = fitted(w(f"verdict_figure.kind.{kind}"), PANEL_WIDTH, 10, balanced=True)
        ax.set(xlabel=fitted(w("input_length"), PANEL_WIDTH, 10), ylim=(foot, 101))
        ax.set_title(title, fontsize=10)
        ax.set_xlim(0, found["longest"] + 1)
    np.atleast_1d(axes)[0].set_ylabel(w("sorted_exactly"))
    handles[w("readout_figure.bar", bar=100 * bar.accuracy)] = plt.Line2D([], [], color="grey", ls=":", lw=1)
    handles[w("readout_figure.spread")] = plt.Rectangle((0, 0), 1, 1, color="grey", alpha=0.3, lw=0)
    handles[w("ladder.trained")] = plt.Rectangle((0, 0), 1, 1, color="grey", alpha=0.08, lw=0)
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=1, fontsize=LEGEND_SIZE)
    title = w("readout_figure.title", longest=found["longest"])
    fig.suptitle(fitted(title, PAGE_WIDTH, 10.5), fontsize=10.5)
    save(fig, path, w.lang)

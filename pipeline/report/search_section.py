"""The length study's search (metrics/search.json, written by the frozen stage `search`): every
configuration tried, failures included, as a table with the command that reproduces each row."""

from pipeline.study.text import pct

ORDER_NOTE = "Rows are in the order they were tried; each is one seed unless it lists more."


def setting(row):
    """What the row changed from the study's recipe, in a few words."""
    entry = row["variant"]
    changes = [
        f"{section}.{k}={v}"
        for section in ("model", "train", "data")
        for k, v in entry.get(section, {}).items()
    ]
    return ", ".join(changes) or "the study's recipe"


def search_table(rows):
    lines = [
        "| variant | changed | seeds | at the bar up to | at 20 | at 40 | worst seed, 1-20 | why |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        at20, at40 = (pct(r[k]) if r[k] is not None else "-" for k in ("acc_20", "acc_40"))
        lines.append(
            f"| {r['name']} | {setting(r)} | {len(r['seeds'])} | {r['reach']} | {at20} | {at40} | "
            f"{pct(r['min_seed'])} | {r['why']} |"
        )
    return lines


def best_rows(rows, count=5):
    """The rows that reach furthest at the bar, then sort most at 20 and at 40."""
    return sorted(rows, key=lambda r: (r["reach"], r["acc_20"] or 0, r["acc_40"] or 0), reverse=True)[:count]


RANDOMIZED_LENGTHS = (3, 5, 8, 10, 12, 15, 20)


def randomized_table(rows):
    """Randomized positions tested as Ruoss et al. do (positions drawn for every test sequence) and
    as before (0, 1, 2, ...), on the same trained models: the mean over each row's seeds."""
    measured = [r for r in rows if "accuracy_plain_positions" in r]
    if not measured:
        return []
    lines = [
        "Randomized positions (Ruoss et al., 2023) were first tested at positions 0, 1, 2, ..., which "
        "training almost never shows; their code draws a sorted random subset at test time too, as "
        "training does, and so does this project now. The same trained models, tested both ways (exact "
        "sequences by length):",
        "",
        "| variant | tested at | " + " | ".join(str(n) for n in RANDOMIZED_LENGTHS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in RANDOMIZED_LENGTHS) + " |",
    ]
    for r in measured:
        for words, key in (
            ("drawn positions (now)", "accuracy"),
            ("0, 1, 2, ... (before)", "accuracy_plain_positions"),
        ):
            seeds = r[key].values()
            tested = [all(str(n) in a for a in seeds) for n in RANDOMIZED_LENGTHS]
            cells = [
                pct(sum(a[str(n)] for a in seeds) / len(seeds)) if ok else "-"
                for n, ok in zip(RANDOMIZED_LENGTHS, tested, strict=True)
            ]
            lines.append(f"| {r['name']} | {words} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def section(search):
    rows = search["rows"]
    if not rows:
        return []
    first, last = search["bar"]["lengths"]
    confirmed = [r for r in rows if len(r["seeds"]) >= 3]
    met = [r for r in confirmed if r["meets_bar"]]
    best = best_rows(rows, 1)[0]
    verdict = (
        f"{len(met)} confirmed configuration(s) meet the bar at every length {first}-{last}."
        if met
        else f"No configuration meets the bar at every length {first}-{last}; the furthest, "
        f"{best['name']} "
        f"({setting(best)}, {len(best['seeds'])} seed(s)), sorts at the bar up to length {best['reach']}"
        + (f" and {pct(best['acc_20'])} at 20." if best["acc_20"] is not None else ".")
    )
    return [
        "### The search: sums instead of averages",
        "",
        "Softmax attention averages, so a count read through it shrinks as the input grows. The search "
        "tries attention that adds instead (sigmoid weights, Ramapuram et al., 2024), where it applies, the "
        "gate's starting bias, positions, width and training length; it screens with one seed and confirms "
        f"with three. {verdict} {ORDER_NOTE}",
        "",
        *search_table(rows),
        "",
        *randomized_table(rows),
        "Each row is reproduced as the pipeline's own study by the command in "
        "[metrics/search.json](../metrics/search.json) (for example `" + best["command"] + "`), and the "
        "whole search by the frozen stage `search` (its rows: pipeline/study/search.yaml).",
        "",
    ]

"""The length study's verdict as the pages show it (stage verdict's record and rows): each row's
standing, each seed at the table's lengths, and which part of a trained signed model fails first as
the length grows, its trained readout or its count read by hand."""

import statistics

from pipeline.study.verdict_rows import HANDSET, READOUT, TRAINED


def first_below(at, accuracy):
    """The first of the table's lengths (`at`: {length: {"mean", "lowest"}}) whose mean is below
    `accuracy`, or None."""
    return next((int(n) for n, v in at.items() if v["mean"] < accuracy), None)


def seeds_at(rows, variant, kind, length):
    """Every seed's exact sequences, one variant, kind and length, as trained."""
    return [
        r["seq_acc"]
        for r in rows
        if (r["variant"], r["kind"], r["decoder"], r["length"]) == (variant, kind, TRAINED, length)
    ]


def verdict_row(name, row, rows, accuracy, longest):
    """One row of the verdict with what the pages say of it: where it first fails (mean and lowest
    seed there), at the table's lengths where each decoding first falls below the bar's accuracy, and
    each decoding's means at `longest` (the table's longest length, as text)."""
    first = min((n for n in row["first_failing"].values() if n is not None), default=None)
    at_first = {}
    for kind in row["fails_first_on"]:
        values = seeds_at(rows, name, kind, first)
        at_first[kind] = {"mean": statistics.fmean(values), "lowest": min(values)}
    falls = {
        decoder: {kind: first_below(at, accuracy) for kind, at in by_kind.items()}
        for decoder, by_kind in row["table"].items()
    }
    at_longest = {
        decoder: {kind: at[longest]["mean"] for kind, at in by_kind.items() if longest in at}
        for decoder, by_kind in row["table"].items()
    }
    exact = all(r["seq_acc"] == 1.0 for r in rows if r["variant"] == name and r["decoder"] == TRAINED)
    return {
        **row,
        "name": name,
        "first": first,
        "at_first": at_first,
        "falls": falls,
        "at_longest": at_longest,
        "exact": exact,
    }


def by_seed(rows, variant, lengths):
    """{kind: {seed: {length: exact sequences}}} of one trained variant at `lengths`, as trained."""
    table = {}
    for r in rows:
        if r["variant"] == variant and r["decoder"] == TRAINED and r["length"] in lengths:
            table.setdefault(r["kind"], {}).setdefault(str(r["seed"]), {})[r["length"]] = r["seq_acc"]
    return table


def verdict_context(record, per_seed):
    """The verdict for the pages, from its record (metrics/verdict.json) and its rows (a DataFrame of
    metrics/verdict/per_seed.csv): every row, the first trained one read by hand too (`signed`), the
    first trained one that is not (`ordinary`, the verdict's second variant), the trained rows after
    them (`others`), the hand-set row, and every trained row's seeds at the table's lengths."""
    rows = per_seed.to_dict("records")
    accuracy, lengths = record["bar"]["accuracy"], record["table_lengths"]
    longest = str(max(lengths))  # the table's longest length
    shown = {
        name: verdict_row(name, row, rows, accuracy, longest) for name, row in record["variants"].items()
    }
    trained = [v for v in shown.values() if v["trained"]]
    signed = next((v for v in trained if READOUT in v["table"]), None)
    ordinary = next((v for v in trained if READOUT not in v["table"]), None)
    return {
        **{k: record[k] for k in ("bar", "kinds", "max_length", "test_size", "seed", "table_lengths")},
        "certificates": record.get("certificates", {}),
        "controls": controls_context(record.get("controls", {}), record.get("control_seeds", {})),
        "coverage": {name: coverage_context(c) for name, c in record.get("coverage", {}).items()},
        "rows": shown,
        "signed": signed,
        "ordinary": ordinary,
        "others": [v for v in trained if v is not signed and v is not ordinary],
        "handset": shown.get(HANDSET),
        "by_seed": {v["name"]: by_seed(rows, v["name"], lengths) for v in trained},
    }


def controls_context(controls, seeds):
    """{recipe: {weights: {decoder: {length (int): mean}}}}, the lengths they share (short first) and
    the seeds they read (each recipe's first, the same for every recipe of one study)."""
    table = {
        recipe: {
            weights: {
                decoder: {int(n): v["mean"] for n, v in at.items()} for decoder, at in by_decoder.items()
            }
            for weights, by_decoder in by_weights.items()
        }
        for recipe, by_weights in controls.items()
    }
    lengths = sorted({n for w in table.values() for d in w.values() for at in d.values() for n in at})
    shared = sorted({s for recipe_seeds in seeds.values() for s in recipe_seeds})
    return {"recipes": table, "lengths": lengths, "seeds": shared}


def coverage_context(found):
    """The training rows' coverage of the states, each missed state as the pages name it: the token
    just written, the digits still owed, and the digits its shortest input needs."""
    missed = []
    for fed, owed in found["missed"]:
        digits = [q for q in range(10) if owed >> q & 1]
        missed.append(
            {
                "fed": "BOS" if fed == 10 else str(fed),
                "owed": digits,
                "digits": len(digits) + (fed != 10),
            }
        )
    held = found.get("inputs", {})  # {length: [inputs the training rows hold, possible inputs]}
    inputs = {int(n): {"held": k, "possible": every} for n, (k, every) in held.items()}
    return {"states": found["states"], "visited": found["visited"], "missed": missed, "inputs": inputs}


def models_context(verdict, shown_after=2):
    """What the study's first page says its best model is, before what it scored: the first judged
    recipe after the comparisons (`others`), the lengths whose every input its training rows hold
    (`whole`) and the share they hold of the next `shown_after` lengths, and its controls at the
    shortest and longest length they read. None where the verdict has no such recipe."""
    best = verdict["others"][0] if verdict["others"] else None
    if best is None or best["name"] not in verdict["coverage"]:
        return None
    inputs = verdict["coverage"][best["name"]]["inputs"]
    whole = [n for n in sorted(inputs) if inputs[n]["held"] == inputs[n]["possible"]]
    partial = [
        {"n": n, "share": inputs[n]["held"] / inputs[n]["possible"]} for n in sorted(inputs) if n not in whole
    ][:shown_after]
    controls = verdict["controls"]
    short, long = controls["lengths"][0], controls["lengths"][-1]
    weights = controls["recipes"].get(best["name"], {})
    return {"name": best["name"], "whole": whole, "partial": partial, "short": short, "long": long, **weights}

"""The numbers the length study's templates write sentences around: computed here from the study's
saved metrics (and the lesson's where it compares with them), never phrased here
(pipeline/report/study/templates/ holds every sentence)."""

import re
import statistics

from pipeline.infra.locale import Phrase
from pipeline.infra.outputs import select
from pipeline.report.claims import shorter_untrained
from pipeline.report.study.lesson_claims import positionless_row
from pipeline.report.study.readout_search import readout_search
from pipeline.report.study.verdict_context import models_context, verdict_context
from pipeline.study.bar import best_variant, confirmation, row_reach
from pipeline.tokens import DIGITS


def cross_attention_share(diagnosis, trained):
    """The last decoder layer's cross-attention on the input positions holding the digit being
    written, mean over the seeds and the study's sequences at the trained length."""
    at = diagnosis["lengths"].get(str(trained))
    return at and at["attention_on_written_digit"]


def even_share(length, digits=DIGITS):
    """What an attention spread evenly over `length` random digits puts, on average over the steps
    writing the sorted input, on the positions holding the digit written. A value present c times gets
    c/length of the weight at each of its c steps: the sum of c²/length² over the `digits` values.
    Each value's count c is binomial (length draws, probability p = 1/digits): mean length·p, variance
    length·p·(1 - p); so the share is digits·(mean² + variance)/length² = p + (1 - p)/length."""
    p = 1 / digits
    mean, variance = length * p, length * p * (1 - p)
    return {
        "share": digits * (mean**2 + variance) / length**2,
        "length": length,
        "digits": digits,
        "p": p,
        "count_mean": mean,
        "count_variance": variance,
        "count_square": mean**2 + variance,  # the mean of c² over the values
        "not_p": 1 - p,  # the chance that a position holds another value
    }


def clock(lesson_model, trained):
    """The lesson's model's pace through the sorted input at each diagnosed length (rank_speed: 1 is
    one place a step), beside the pace L/trained that writing as if every input had `trained` digits
    would give; the lengths where the measured pace is under that, and whether the pace errs on the
    clock's side (under 1 below the trained length, over 1 above it)."""
    rates = {
        int(n): {"measured": x["rank_speed"], "clock": int(n) / trained, "attention": x["attention_speed"]}
        for n, x in lesson_model.items()
    }
    other = [n for n in rates if n != trained]
    return {
        "rates": rates,
        "other": other,
        "under": [n for n in other if rates[n]["measured"] < rates[n]["clock"]],
        "over": [n for n in other if rates[n]["measured"] > rates[n]["clock"]],
        "clock_side": all((rates[n]["measured"] - 1) * (n - trained) > 0 for n in other),
    }


SHOWN = (20, 30, 40)  # the lengths at which the verdict gives every seed's accuracy


def first_length(by_length):
    """The shortest length of {length (a string): value}."""
    return min(by_length, key=int)


def last_length(by_length):
    return max(by_length, key=int)


GROWN = 1.2  # a LayerNorm divisor this many times its value at length 10 by length 40 has grown
MARGIN_EVERY = 10  # the margin table shows a length every 10 positions, the span its drift is given per

# What tests/test_handset.py checks of the hand-set counting sort, which the appendix reports (the test
# and the words both read these): it sorts every length 1-HANDSET_LONGEST, and rows of that length
# holding all but one copy of one digit; without its constant or its balance it fails at HANDSET_BREAKS.
HANDSET_LONGEST, HANDSET_BREAKS = 40, 20


def lowest_owed_1(margins):
    """The lowest margin with a copy still owed at the longest length measured, and the count of
    copies it is at (NaN and None when no count is measured)."""
    at_longest = {
        int(k.split("_")[1]): m["margin"][last_length(m["margin"])]
        for k, m in margins.items()
        if k.endswith("_owed_1")
    }
    count = min(at_longest, key=at_longest.get, default=None)
    return {
        "owed_1_longest_min": at_longest[count] if count is not None else float("nan"),
        "owed_1_longest_min_count": count,
    }


def margin_measured(rows):
    """What the count-margin measurement read, from its rows (the study stage's count_margin.csv): the
    fewest and most copies of the digit decided on, the input lengths, the lengths its table shows
    (every MARGIN_EVERY positions from the shortest, and the longest), and GROWN."""
    lengths = sorted(int(n) for n in rows["length"].unique())
    shown = [n for n in lengths if (n - lengths[0]) % MARGIN_EVERY == 0]
    return {
        "counts": (int(rows["count"].min()), int(rows["count"].max())),
        "lengths": lengths,
        "shown": shown if shown[-1] == lengths[-1] else [*shown, lengths[-1]],
        "grown": GROWN,
    }


def count_margin_context(summary):
    """The count-margin measurement as the appendix shows it, per model measured: its margins, its
    decoder's LayerNorm divisors, the one that grew most, and whether the margin with a copy still
    owed falls with the length while a divisor in the decoder grows (the scale mismatch); the shortest
    and longest lengths its margins are read at."""
    out = {}
    for variant, found in summary.items():
        lengths = sorted({int(n) for m in found["margins"].values() for n in m["margin"]})
        decoder = {k: d for k, d in found["divisors"].items() if k.startswith("decoder")}
        grown = max(decoder, key=lambda k: decoder[k]["ratio_longest_to_shortest"]) if decoder else None
        grown_ratio = decoder[grown]["ratio_longest_to_shortest"] if grown else None
        owed_1 = [m["margin"] for k, m in found["margins"].items() if k.endswith("_owed_1")]
        owed_0 = [m["margin"] for k, m in found["margins"].items() if k.endswith("_owed_0")]
        # falls: at some count shown, the margin with a copy owed is at the longest length less than
        # half what it is at the shortest; rises: with none owed, a quarter of the way or more to 0
        falls = any(m[last_length(m)] < 0.5 * m[first_length(m)] for m in owed_1)
        wrong = [m["wrong_share"] for m in found["margins"].values()]
        out[variant] = {
            **found,
            "shortest": lengths[0],
            "longest": lengths[-1],
            "decoder_divisors": decoder,
            "most_grown": grown,
            "most_grown_ratio": grown_ratio,
            "owed_1_falls": falls,
            **lowest_owed_1(found["margins"]),
            "owed_0_rises": any(m[last_length(m)] > 0.75 * m[first_length(m)] for m in owed_0),
            # shrinks: with a copy owed, lower at the longest length than at the shortest at every count
            "owed_1_shrinks": bool(owed_1) and all(m[last_length(m)] < m[first_length(m)] for m in owed_1),
            "grown": grown is not None and grown_ratio > GROWN,
            "wrong_max": max(max(w.values()) for w in wrong),
            "wrong_longest": max(w[last_length(w)] for w in wrong),
            "mismatch": falls and grown is not None and grown_ratio > GROWN,
        }
    return out


def study_context(tables, meta, diagnosis, study):
    """Each variant's parameters and results (its row of the bar table, its mean by length); a trained
    variant's own settings (`own`, from `study`: StudyParams) and where its gates start."""
    bar_rows = {r["variant"]: r for r in tables["study/bar"].to_dict("records")}
    names = [v for v in meta["variants"] if v not in ("pipeline", "handset")]  # the trained variants
    accuracy = tables["study/per_seed"]
    rows = {}
    for v in meta["variants"]:
        standing, mine = bar_rows[v], select(accuracy, variant=v)
        rows[v] = {  # the variant's parameters, then its results
            **meta["variants"][v],
            "reach": standing["bar_up_to_length"],
            "lowest": standing["bar_min_seq_acc"],
            "worst_length": standing["bar_worst_length"],
            "seed_floor": standing["bar_min_seed_seq_acc"],
            "meets": standing["meets_bar"],
            "by_length": {int(n): statistics.fmean(g["seq_acc"]) for n, g in mine.groupby("length")},
            "by_seed": {  # each seed at the lengths the verdict names
                int(seed): {
                    int(n): float(a) for n, a in zip(g["length"], g["seq_acc"], strict=True) if n in SHOWN
                }
                for seed, g in mine.groupby("seed")
            },
            "diagnosis": diagnosis["variants"].get(v, {}),
            "gates": diagnosis.get("gates", {}).get(v, {}),
        }
        if v in study.variants:
            config = study.recipes[v][0]
            rows[v] |= {"own": study.variants[v], "sigmoid_bias": config.sigmoid_bias}
    return {
        "bar": meta["bar"],
        "best": best_variant(bar_rows, names) if names else None,
        "variants": rows,
        "lesson_model": diagnosis["lengths"],
        "trained": diagnosis["trained_lengths"],
    }


def habits(diagnosis, trained):
    """The lesson's habit guess at every diagnosed length past the trained one: of the inputs without
    a 0, how many outputs start with 0; of those without a 9, how many end with 9. A habit counts as
    learned where the outputs follow it more often than not at some such length."""
    at = diagnosis["lengths"]
    lengths = {
        int(n): {"starts": d["starts_with_0_given_no_0"], "ends": d["ends_with_9_given_no_9"]}
        for n, d in at.items()
        if int(n) != trained and d["starts_with_0_given_no_0"] is not None
    }
    learned = lambda key: any(h[key] > 0.5 for h in lengths.values())  # noqa: E731
    return {"lengths": lengths, "starts_learned": learned("starts"), "ends_learned": learned("ends")}


def shortest(per_seed, train_lengths):
    """The lesson's model on the study's short inputs (mean exact sequences over seeds): one digit
    (`single`), and every length from 2 up to the longest trained that training never drew."""
    mine = select(per_seed, variant="pipeline")
    mean = lambda n: statistics.fmean(select(mine, length=n)["seq_acc"])  # noqa: E731
    return {"single": mean(1), "shorter": {n: mean(n) for n in shorter_untrained(train_lengths)}}


# A stopped row's message as pipeline/core/loop.py's check_loss writes it, the cause left out
DIVERGED = re.compile(
    r"training diverged at step (\d+): loss (\S+) \(learning rate (\S+)\); the likely cause"
)


def searched(row, bar):
    """A search row as the report shows it: its reach under the study's rule for its variants (mean
    and every seed), and a stopped row's message read back into its numbers, without the trainer's
    guess at the cause (a row of the same recipe trains on another seed: the guess is not the data's);
    a message of another form as it stands."""
    shown = row | {"reach": row_reach(row, bar)}
    for key in ("failed", "stopped_before"):
        if key in row:
            read, cut = DIVERGED.match(row[key]), row[key].split("; the likely cause")[0]
            pattern = "training diverged at step {}: loss {:.4g} (learning rate {:.2e})"
            shown[key] = (
                Phrase(pattern, int(read[1]), *map(float, read.groups()[1:])) if read else Phrase(cut)
            )
    return shown


def positionless(search):
    """The recipe of the search's row with no position vectors («no es por la posición»)."""
    row = positionless_row(search)
    return row and {"steps": row["recipe"]["train"]["steps"], "dropout": row["recipe"]["model"]["dropout"]}


RECORDED = re.compile(r"acc_(\d+)")  # a search row's mean accuracy at one length, pipeline/study/search.py's


def recorded_lengths(rows):
    """The lengths at which the search records every row's mean accuracy (its fields acc_<length>)."""
    return sorted({int(m[1]) for r in rows for k in r if (m := RECORDED.fullmatch(k))})


def search_context(search, rows):
    """The search's rows (`rows`: with the bar's reach recomputed) ranked by reach, the furthest first,
    the lengths each row's mean is recorded at (`at`: 20 and 40), and the rows that start from the
    softened hand-set weights (`stability`: does the recipe keep an exact solution it starts from?
    reported apart, never the study's verdict), each seed's accuracy at 10 and at those lengths."""
    recorded = recorded_lengths(rows)
    reach = lambda r: (r["reach"], *(r.get(f"acc_{n}") or 0 for n in recorded))  # noqa: E731
    ranked = sorted(rows, key=reach, reverse=True)
    stability = []
    for r in rows:
        if r["recipe"]["train"].get("init") == "handset_soft" and r["accuracy"]:
            at = {n: [acc[str(n)] for acc in r["accuracy"].values()] for n in (10, *recorded)}
            stability.append({**r, "at": at, "kept": kept_or_lost(at, search["bar"])})
    best = ranked[0] if ranked else None
    return {"rows": rows, "best": best, "bar": search["bar"], "at": recorded, "stability": stability}


def kept_or_lost(at, bar):
    """What training did to the exact solution it started from ({length: each seed's accuracy} at 10,
    then at the longer lengths the search records, 20 and 40): `kept` when every seed stays at the
    bar's floor at the longer lengths, `decayed` when lengths up to 10 stay there and a longer one does
    not (the loss does not prefer the exact solution), `lost` when even length 10 falls."""
    floor = bar["seed_floor"]
    first, *longer = at
    if min(x for n in longer for x in at[n]) >= floor:
        return "kept"
    return "decayed" if min(at[first]) >= floor else "lost"


def study_pages_context(params, m, claims, habit_claims):
    """Everything the study's templates need: `m` holds the study's results and the lesson's it reads;
    `claims`: the lesson's statements judged here; `habit_claims`: the lesson's habit claims."""
    trained = max(params.data.train_lengths)
    # the frozen search's reach, read under the study's rule for its variants (mean and every seed)
    search_rows = [searched(r, params.study.bar) for r in m["search"]["rows"]]
    tables = m["tables"]
    verdict = verdict_context(m["verdict"], tables["verdict/per_seed"])
    return {
        "claims": claims,
        "by_id": {c.id: c for c in [*claims, *habit_claims]},
        "habits": habits(m["diagnosis"], trained),
        "shortest": shortest(tables["study/per_seed"], params.data.train_lengths),
        "positionless": positionless(m["search"]),
        "seeds": list(params.train.seeds),
        "test_size": params.data.test_size,
        "trained": trained,
        "attention_share": cross_attention_share(m["diagnosis"], trained),
        "even_share": even_share(trained),
        "clock": clock(m["diagnosis"]["lengths"], trained),
        "study": study_context(tables, m["study_meta"], m["diagnosis"], params.study),
        "margin": count_margin_context(m["count_margin"]),
        "margin_measured": margin_measured(tables["study/count_margin"]),
        "handset_tested": {"longest": HANDSET_LONGEST, "breaks": HANDSET_BREAKS},
        "margins_finite_state": m["study_meta"].get("margins_finite_state", []),
        "verdict": verdict,
        "models": models_context(verdict),
        "certificate_rows": tables["verdict/certificates"].to_dict("records"),
        "search": search_context(m["search"], search_rows),
        "readout": readout_search(search_rows, params.study),
        "confirmation": confirmation(params.study, search_rows),
        "params": params,
    }

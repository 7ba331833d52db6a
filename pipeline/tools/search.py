"""`python -m pipeline.tools.search [--only TEXT] [--workers N]`: the length study's search, recorded.

Each row of pipeline/tools/search_rows.yaml is one study variant trained with some study.* values
changed from params.yaml, on one seed (a screen) or more (a confirmation). Every row, failures
included, goes to metrics/search.json as it finishes: its effective recipe, how far from length 1
it sorts at the bar (>= 99 % exact sequences, mean over its seeds), its accuracy at 20 and 40, and
the `dvc exp run` command that reproduces it as a pipeline result. The report draws its table from
that file. Rows already recorded with the same recipe are kept, not rerun, so an interrupted search
resumes where it stopped; the file is rewritten after every row, so nothing done is lost.
"""

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import yaml

from pipeline.infra import files
from pipeline.infra.errors import ConfigError, stage_entry
from pipeline.infra.params import as_dict, parse_params
from pipeline.infra.pool import run_jobs
from pipeline.model.attention import uses_sigmoid_bias
from pipeline.study.gather import BAR_LENGTHS, summarise
from pipeline.study.sets import study_test_sets
from pipeline.study.variant import train_and_test, variant_params

ROWS_PATH = Path(__file__).with_name("search_rows.yaml")
RESULTS_PATH = Path("metrics/search.json")


def load_rows(path=ROWS_PATH):
    rows = yaml.safe_load(Path(path).read_text())
    if not isinstance(rows, list):
        raise ConfigError(f"{path}: expected a list of rows, got {type(rows).__name__}")
    for row in rows:
        if not isinstance(row, dict) or set(row) - {"variant", "set", "seeds", "why"} or "variant" not in row:
            raise ConfigError(f"{path}: a row has variant, set, seeds and why, got {row}")
        if not isinstance(row.get("set", {}), dict):
            raise ConfigError(f"{path}: a row's set is a mapping of study.* values, got {row['set']!r}")
        taken = {"study.variants", "study.train.seeds"} & set(row.get("set", {}))
        if taken:
            raise ConfigError(f"{path}: {', '.join(sorted(taken))} belong in the row's variant and seeds")
    return rows


def row_params(raw_params, row):
    """params.yaml with the row's study.* values, its variant and its seeds."""
    raw = copy.deepcopy(raw_params)
    values = {
        "study.variants": [row["variant"]],
        "study.train.seeds": row.get("seeds", [0]),
        **row.get("set", {}),
    }
    for key, value in values.items():
        *path, last = key.split(".")
        if path[:1] != ["study"]:
            raise ConfigError(f"{ROWS_PATH}: {key} is not a study.* parameter")
        section = raw
        for part in path:
            section = section.get(part) if isinstance(section, dict) else None
        if not isinstance(section, dict) or last not in section:
            raise ConfigError(f"{ROWS_PATH}: {key} is not a parameter of params.yaml")
        section[last] = value
    return parse_params(raw)


def command(row):
    """The experiment that reproduces the row as the pipeline's own study."""
    values = {
        "study.variants": f"[{row['variant']}]",
        "study.train.seeds": row.get("seeds", [0]),
        **row.get("set", {}),
    }
    return "dvc exp run " + " ".join(
        f"-S '{k}={json.dumps(v) if isinstance(v, list) else v}'" for k, v in values.items()
    )


def recipe_of(params, variant):
    """What the row trained: everything that decides its result (the sigmoid's bias only where some
    attention is a sigmoid)."""
    recipe = variant_params(params, variant)
    study, model = as_dict(params.study), as_dict(recipe.model)
    if not uses_sigmoid_bias(model["attention"]):
        del model["sigmoid_bias"]
    return {
        "model": model,
        "train": {k: v for k, v in as_dict(params.study.train).items() if k != "seeds"},  # per row
        "train_lengths": list(recipe.data.train_lengths),
        "test": {k: study[k] for k in ("max_length", "test_size", "seed")},
    }


def by_length(accuracy):
    """{seed: {length: exact-sequence accuracy}} from each seed's flat accuracy metrics."""
    return {
        str(s): {int(k.split("_")[1]): v for k, v in a.items() if k.endswith("_seq_acc")}
        for s, a in accuracy.items()
    }


def exact_sequences(accuracy):
    """Only the exact-sequence keys of one seed's metrics: what a recorded row keeps of every seed,
    so that seeds trained now and seeds reused from the file summarise alike."""
    return {k: v for k, v in accuracy.items() if k.endswith("_seq_acc")}


def row_result(row, recipe, accuracy, plain=None):
    """One row of the table from its seeds' accuracy by length (and, for randomized positions, their
    accuracy when tested at positions 0, 1, 2, ... instead of drawn ones)."""
    summary = summarise(accuracy, range(1, recipe["test"]["max_length"] + 1))
    at = {n: summary.get(f"length_{n}_seq_acc") for n in (20, 40)}
    return {
        "variant": row["variant"],
        "set": row.get("set", {}),
        "seeds": list(accuracy),
        "why": row.get("why", ""),
        "recipe": recipe,
        "command": command(row),
        "reach": summary["bar_up_to_length"],
        "acc_20": at[20],
        "acc_40": at[40],
        "min_seed_1_20": summary["min_seed_seq_acc_1_20"],
        "meets_bar": summary["meets_bar"],
        "accuracy": by_length(accuracy),
        **({"accuracy_plain_positions": by_length(plain)} if plain else {}),
    }


def read_results(path=RESULTS_PATH):
    return json.loads(path.read_text())["rows"] if path.exists() else []


def row_key(variant, values, seeds):
    return json.dumps([variant, values, list(seeds)])


def run_search(raw_params, rows, workers=None, path=RESULTS_PATH, all_rows=None):
    """Train and test every row not yet recorded with its recipe; save after each row. A seed that
    another recorded row trained with the same recipe is reused, not retrained."""
    all_rows = all_rows or rows
    order = {row_key(r["variant"], r.get("set", {}), r.get("seeds", [0])): i for i, r in enumerate(all_rows)}
    done = {row_key(r["variant"], r["set"], r["seeds"]): r for r in read_results(path)}
    trained = {
        (json.dumps(r["recipe"]), r["variant"], int(s)): {f"length_{n}_seq_acc": a for n, a in acc.items()}
        for r in done.values()
        for s, acc in r["accuracy"].items()
    }
    plan, jobs, planned = [], [], {}
    for row in rows:
        params = row_params(raw_params, row)
        recipe, seeds = recipe_of(params, row["variant"]), list(params.study.train.seeds)
        key = row_key(row["variant"], row.get("set", {}), seeds)
        if key in done and done[key]["recipe"] == recipe:
            continue
        tests, _ = study_test_sets(params)
        where = {}
        for s in seeds:
            seed_key = (json.dumps(recipe), row["variant"], s)
            if seed_key in planned:
                where[s] = planned[seed_key]
            elif seed_key not in trained:
                where[s] = planned[seed_key] = len(jobs)
                jobs.append(
                    (
                        variant_params(params, row["variant"]),
                        row["variant"],
                        s,
                        tests,
                        params.evaluate.batch_size,
                    )
                )
        plan.append((key, row, recipe, seeds, where))
    print(f"search: {len(plan)} rows to run ({len(jobs)} seeds to train), {len(rows) - len(plan)} recorded")
    finished = {}

    def save(key, row, recipe, seeds, where):
        accuracy = {
            s: exact_sequences(finished[where[s]]["accuracy"])
            if s in where
            else trained[(json.dumps(recipe), row["variant"], s)]
            for s in seeds
        }
        new = [finished[where[s]] for s in seeds if s in where]
        plain = None
        if len(new) == len(seeds) and all("accuracy_plain_positions" in f for f in new):
            plain = {s: f["accuracy_plain_positions"] for s, f in zip(seeds, new, strict=True)}
        done[key] = r = row_result(row, recipe, accuracy, plain)
        kept = sorted((k for k in done if k in order), key=order.get)
        files.write_json(
            path, {"bar_lengths": [BAR_LENGTHS.start, BAR_LENGTHS.stop - 1], "rows": [done[k] for k in kept]}
        )
        print(
            f"search: {row['variant']} {row.get('set', {})} seeds {seeds}: reach {r['reach']}, "
            f"at 20 {100 * (r['acc_20'] or 0):.1f} %, at 40 {100 * (r['acc_40'] or 0):.1f} %",
            flush=True,
        )

    def on_result(index, result):
        finished[index] = result
        for entry in plan:
            if entry[4] and max(entry[4].values()) == index:
                save(*entry)

    for entry in plan:  # rows whose every seed was trained by another row
        if not entry[4]:
            save(*entry)
    run_jobs(train_and_test, jobs, workers, on_result=on_result)


@stage_entry
def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.tools.search", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--only", default="", help="run only rows whose variant contains this text")
    parser.add_argument(
        "--workers", type=int, default=None, help="processes side by side (default: one per core)"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    raw = yaml.safe_load(Path("params.yaml").read_text())
    every_row = load_rows()
    rows = [r for r in every_row if args.only in r["variant"]]
    try:
        run_search(raw, rows, args.workers, all_rows=every_row)
    except KeyboardInterrupt:
        print(f"interrupted: the rows finished so far are in {RESULTS_PATH}", file=sys.stderr)
        sys.exit(130)
    print(f"search: done in {time.perf_counter() - start:.0f} s; results in {RESULTS_PATH}")


if __name__ == "__main__":
    main()

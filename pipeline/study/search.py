"""The length study's search: variants tried beyond the default study, every one recorded.

Each row of the search's rows file (pipeline/study/search.yaml) is a named study variant, an entry
as study.variants takes it (positions, attention, and any study.model, study.train or study.data
value it changes), trained on its `seeds`, with `why` it was tried, and, where it says `kinds: true`,
tested also on the verdict's three kinds of input (uniform, repeat-heavy, long counts), drawn from the
search's own seed (study.seed), never the verdict's, and ranked first by how far it sorts all three at
the bar (`kinds_reach`). A row's seeds name one of the
search's seed sets (study.search_seeds): `screen` (the default, a row's first look) or `confirm` (the
rows near the bar, retrained); a list of seeds is kept for the rows recorded before the sets. No row
may train a seed the study holds out (its variants' seeds). Every row, failures included, goes to
the search's results (metrics/search.json) as it finishes: its effective recipe, how far from length
1 it sorts at the bar, its accuracy at 20 and 40, each seed's accuracy and diagnosis, and the
`dvc exp run` that reproduces it as the pipeline's own study. A row already recorded with the same
recipe is kept, not rerun, and a seed another row trained with the same recipe is reused, so an
interrupted search resumes where it stopped.
"""

import dataclasses
import json
import statistics
from pathlib import Path

import numpy as np
import yaml

import pipeline
from pipeline.core.loop import FAR_ABOVE, RUNNING_WINDOW
from pipeline.core.seed_axis import seed_groups
from pipeline.infra.errors import ConfigError, TrainingDiverged
from pipeline.infra.outputs import write_rows_so_far
from pipeline.infra.pool import run_jobs
from pipeline.infra.workers import seed_processes
from pipeline.numerics.pin import pinned_environment
from pipeline.params.rules import as_dict
from pipeline.study.bar import bar_standing, reach, recipe_of, study_seeds
from pipeline.study.params import StudyParams, with_variant
from pipeline.study.sets import study_test_sets
from pipeline.study.variant import train_and_test
from pipeline.study.verdict_sets import verdict_set

ROW_KEYS = {"name", "variant", "seeds", "why", "kinds"}
GROUP_MOST = 3  # seeds a search job trains together


def load_rows(path):
    """The rows file: a list of {name, variant, seeds, why}, names unique."""
    try:
        rows = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path} not found") from None
    if not isinstance(rows, list):
        raise ConfigError(f"{path}: expected a list of rows, got {type(rows).__name__}")
    for row in rows:
        if not isinstance(row, dict) or set(row) - ROW_KEYS or not {"name", "variant"} <= set(row):
            raise ConfigError(f"{path}: a row has a name, a variant entry, seeds and why; got {row}")
        if "seeds" in (row["variant"].get("train") or {}):
            raise ConfigError(f"{path}: row {row['name']}: seeds go on the row, not in its variant")
        if row.get("kinds", True) is not True:
            raise ConfigError(f"{path}: row {row['name']}: kinds is true or absent, got {row['kinds']!r}")
    names = [row["name"] for row in rows]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"{path}: row names must be unique; repeated: {', '.join(repeated)}")
    return rows


SEED_SETS = ("screen", "confirm")  # the names a row's seeds may take: study.search_seeds' fields


def with_seeds(rows, study: StudyParams):
    """The rows with their seeds resolved to lists; a row that would train a held-out seed (one of
    the study's variants' seeds) is refused."""
    held = study_seeds(study)
    resolved = []
    for row in rows:
        seeds = row.get("seeds", "screen")
        if seeds in SEED_SETS:
            seeds = getattr(study.search_seeds, seeds)
        elif not isinstance(seeds, list) or not all(isinstance(s, int) and s >= 0 for s in seeds):
            raise ConfigError(
                f"row {row['name']}: seeds = {seeds!r} is invalid: expected {' or '.join(SEED_SETS)}, "
                "or a list of integers >= 0"
            )
        if held & set(seeds):
            raise ConfigError(
                f"row {row['name']} trains seed {min(held & set(seeds))}, which the study holds out "
                "(study.train.seeds and the variants' own): a search row uses study.search_seeds"
            )
        resolved.append({**row, "seeds": [int(s) for s in seeds]})
    return resolved


def row_study(study: StudyParams, row):
    """The study with the row as its one variant, trained on the row's seeds."""
    entry = json.loads(json.dumps(row["variant"]))
    entry.setdefault("train", {})["seeds"] = row["seeds"]
    return with_variant(study, row["name"], entry)


def row_recipe(study: StudyParams, row):
    """What the row trains and is tested on: its variant's recipe (recipe_of), and where the row is
    tested on the three kinds, those kinds and their size."""
    recipe = recipe_of(study, row["name"])
    if row.get("kinds"):
        recipe["test"]["kinds"] = {"kinds": list(study.verdict.kinds), "size": study.verdict.test_size}
    return recipe


def kind_sets(study: StudyParams):
    """The search's sets of each of the verdict's kinds ({kind: {length: sources}}), lengths 1 to
    study.max_length, study.verdict.test_size of each, from the search's seed (study.seed)."""
    size, lengths = study.verdict.test_size, range(1, study.max_length + 1)
    return {k: {n: verdict_set(k, n, size, study.seed) for n in lengths} for k in study.verdict.kinds}


def kinds_reach(by_kind, bar):
    """How far from length 1 every kind is sorted at the bar, from {kind: {length: one value a seed}}."""
    return min(reach(seq_acc, bar) for seq_acc in by_kind.values())


def command(row):
    """The experiment that reproduces the row as a variant of the pipeline's own study (added to
    study.variants, which trains that variant only)."""
    entry = json.loads(json.dumps(row["variant"]))
    entry.setdefault("train", {})["seeds"] = row["seeds"]
    flow = yaml.safe_dump(entry, default_flow_style=True, width=1000, sort_keys=False).strip()
    return f"dvc exp run -S '+study.variants.{row['name']}={flow}'"


def by_length(accuracy, lengths):
    """{seed: {length: exact-sequence accuracy}} (search.json's form) from each seed's accuracy
    rows {length, seq_acc, ...}."""
    return {
        str(s): {r["length"]: r["seq_acc"] for r in rows if r["length"] in lengths}
        for s, rows in accuracy.items()
    }


def try_train_and_test(config, recipe, data, variant, seeds, tests, data_seed, diagnosis, batch, kinds):
    """Worker: train_and_test of `seeds` together (tested also on `kinds` where not None), with a run
    that diverges recorded as such for each of them (a failure is a result). The test sets arrive
    read-only through Ray's object store: each is taken as its own array, as torch expects of the
    arrays it reads."""
    tests = {n: np.array(sources) for n, sources in tests.items()}
    if kinds is not None:
        kinds = {k: {n: np.array(sources) for n, sources in sets.items()} for k, sets in kinds.items()}
    try:
        return train_and_test(
            config, recipe, data, variant, seeds, tests, data_seed, diagnosis, batch, kinds=kinds
        )
    except TrainingDiverged as err:
        return [{"failed": str(err)}] * len(seeds)


def row_result(row, recipe, seeds, bar, trained):
    """One row of the results from each seed's training result (accuracy by length, diagnosis)."""
    base = {
        "name": row["name"],
        "variant": row["variant"],
        "seeds": list(seeds),
        "why": row.get("why", ""),
        **({"stopped_before": row["stopped_before"]} if "stopped_before" in row else {}),
        "recipe": recipe,
        "command": command(row),
    }
    failed = [trained[s]["failed"] for s in seeds if "failed" in trained[s]]
    if failed:
        return {
            **base,
            "reach": 0,
            "acc_20": None,
            "acc_40": None,
            "min_seed": 0.0,
            "meets_bar": False,
            "accuracy": {},
            "failed": failed[0],
            "divergence_rule": DIVERGENCE_RULE,
        }
    accuracy = {s: trained[s]["accuracy"] for s in seeds}
    lengths = range(1, recipe["test"]["max_length"] + 1)
    found = by_length(accuracy, lengths)
    seq_acc = {n: [found[str(s)][n] for s in seeds] for n in lengths if n in found[str(seeds[0])]}
    summary = bar_standing(seq_acc, len(seeds), bar)
    mean_at = lambda n: statistics.fmean(seq_acc[n]) if n in seq_acc else None  # noqa: E731
    result = {
        **base,
        "reach": summary["bar_up_to_length"],
        "acc_20": mean_at(20),
        "acc_40": mean_at(40),
        "min_seed": summary["bar_min_seed_seq_acc"],
        "meets_bar": summary["meets_bar"],
        "accuracy": found,
    }
    if all("kinds" in trained[s] for s in seeds) and "kinds" in recipe["test"]:
        result["kinds"] = {
            kind: by_length({s: trained[s]["kinds"][kind] for s in seeds}, lengths)
            for kind in recipe["test"]["kinds"]["kinds"]
        }
        per_length = {
            kind: {n: [acc[str(s)][n] for s in seeds] for n in lengths}
            for kind, acc in result["kinds"].items()
        }
        result["kinds_reach"] = kinds_reach(per_length, bar)
    for key in ("accuracy_plain_positions", "diagnosis", "gate_biases"):
        if all(key in trained[s] for s in seeds):
            found = {s: trained[s][key] for s in seeds}
            result[key] = (
                by_length(found, lengths)
                if key == "accuracy_plain_positions"
                else {str(s): d for s, d in found.items()}
            )
    return result


# The divergence check a failed row was stopped by (pipeline/core/loop.py, check_loss). A row stopped
# by another rule is rerun, and the earlier stop is kept on it (`stopped_before`) for the record.
DIVERGENCE_RULE = (
    f"non-finite, or {FAR_ABOVE:g} times the mean of the last {RUNNING_WINDOW} losses after the warm-up"
)


def stopped_by_another_rule(row):
    return "failed" in row and row.get("divergence_rule") != DIVERGENCE_RULE


def read_results(path):
    path = Path(path)
    return json.loads(path.read_text())["rows"] if path.exists() else []


def seed_key(recipe, seed):
    return json.dumps([recipe, int(seed)], sort_keys=True)


def accuracy_rows(by_length):
    """{length: exact sequences} (search.json's form, lengths as text) as train_and_test's rows."""
    return [{"length": int(n), "seq_acc": a} for n, a in by_length.items()]


def recorded_seeds(done):
    """What recorded rows already trained, per (recipe, seed): accuracy and, where kept, diagnosis,
    gate biases and the accuracy on each of the three kinds."""
    seeds = {}
    for r in done.values():
        for s, acc in r["accuracy"].items():
            kinds = {k: accuracy_rows(by_seed[s]) for k, by_seed in r.get("kinds", {}).items()}
            seeds[seed_key(r["recipe"], s)] = {
                "accuracy": accuracy_rows(acc),
                **{k: r[k][s] for k in ("diagnosis", "gate_biases") if k in r},
                **({"kinds": kinds} if kinds else {}),
            }
    return seeds


def plan_search(study: StudyParams, rows, done, trained, shared=(), kinds=None):
    """What is left to run: (plan, jobs). `plan`: (row, recipe, seeds, where) for every row not yet
    recorded with its recipe and seeds, `where` placing each of its seeds in a job (a seed another
    row trained or plans with the same recipe is not trained again); `jobs`: the arguments of
    try_train_and_test for each group of at most GROUP_MOST new seeds of a row, `shared` (the test
    sets and testing values) and then, for a row tested on the three kinds, `kinds` (their sets),
    else None, ending each."""
    plan, jobs, planned = [], [], {}
    for row in rows:
        trying = row_study(study, row)
        recipe, seeds = row_recipe(trying, row), row["seeds"]
        old = done.get(row["name"])
        if old and old["recipe"] == recipe and old["seeds"] == seeds and not stopped_by_another_rule(old):
            continue
        if old and stopped_by_another_rule(old):
            row = {**row, "stopped_before": old.get("stopped_before") or old["failed"]}
        config, train_recipe, data = trying.recipes[row["name"]]
        where, new = {}, []  # where: seed -> (job, its place in the job's seeds)
        for s in seeds:
            key = seed_key(recipe, s)
            if key in planned:
                where[s] = planned[key]
            elif key not in trained:
                new.append(s)
        # the row's seeds not trained before, together in groups of at most GROUP_MOST: a row of
        # eight seeds is three jobs, so that both cores work on it (alone or beside others, a seed
        # trains to the same bytes: pipeline/core/seed_axis.py)
        for group in seed_groups(new, -(-len(new) // GROUP_MOST), together_from=1) if new else []:
            for s in group:
                where[s] = planned[seed_key(recipe, s)] = (len(jobs), group.index(s))
            recipe_of_group = dataclasses.replace(train_recipe, seeds=tuple(group))
            row_kinds = kinds if row.get("kinds") else None
            jobs.append((config, recipe_of_group, data, row["name"], group, *shared, row_kinds))
        plan.append((row, recipe, seeds, where))
    return plan, jobs


def on_ray(address=None):
    """Ray for a search (pipeline/infra/ray_pool.py, imported here alone): joined at `address` or
    started on this machine, every worker pinned to this process's numerics and importing this very
    code; yields the `run` that run_search takes."""
    from pipeline.infra.ray_pool import ray_session  # Ray's import, for a run on Ray alone

    return ray_session(address, env=pinned_environment(), ship=[Path(pipeline.__file__).parent])


def run_search(study: StudyParams, batch_size, rows, path, workers=None, run=None):
    """Train and test every row not yet recorded with its recipe (each a variant of `study`, tested
    `batch_size` rows at a time); save after each row. `run(function, jobs, on_result)` runs the
    jobs (a row's group of seeds each): Ray's tasks (pipeline/infra/ray_pool.py, the stage's
    default) or, where None, the project's process pool on this machine with `workers` processes."""
    done = {r["name"]: r for r in read_results(path)}
    trained = recorded_seeds(done)
    bar, rows = study.bar, with_seeds(rows, study)
    tests, _ = study_test_sets(
        study.train, study.data, study.seed, study.max_length, study.test_size, study.diagnosis_lengths
    )
    kinds = kind_sets(study) if any(row.get("kinds") for row in rows) else None
    plan, jobs = plan_search(
        study, rows, done, trained, (tests, study.seed, study.diagnosis_lengths, batch_size), kinds
    )
    new = sum(len(job[4]) for job in jobs)
    print(f"search: {len(plan)} rows to run ({new} seeds to train), {len(rows) - len(plan)} recorded")
    order = [r["name"] for r in rows]

    def save(row, recipe, seeds, where, finished):
        results = {
            s: finished[where[s][0]][where[s][1]] if s in where else trained[seed_key(recipe, s)]
            for s in seeds
        }
        done[row["name"]] = r = row_result(row, recipe, seeds, bar, results)
        kept = [done[n] for n in order if n in done]
        write_rows_so_far(path, {"bar": as_dict(bar)}, kept)
        on_kinds = f", on all three kinds {r['kinds_reach']}" if "kinds_reach" in r else ""
        print(
            f"search: {row['name']} seeds {seeds}: reach {r['reach']}{on_kinds}, "
            f"at 20 {100 * (r['acc_20'] or 0):.1f} %, at 40 {100 * (r['acc_40'] or 0):.1f} %",
            flush=True,
        )

    finished = {}

    def on_result(index, result):  # a row is saved when the last of its jobs finishes
        finished[index] = result
        for row, recipe, seeds, where in plan:
            jobs_of_row = {job for job, _ in where.values()}
            if index in jobs_of_row and jobs_of_row <= set(finished):
                save(row, recipe, seeds, where, finished)

    for row, recipe, seeds, where in plan:  # rows whose every seed was trained by another row
        if not where:
            save(row, recipe, seeds, where, finished)
    if run is None:
        run_jobs(try_train_and_test, jobs, workers or seed_processes(study.train.device), on_result=on_result)
    else:
        run(try_train_and_test, jobs, on_result)

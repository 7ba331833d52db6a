"""Stage `study` (issue 7, "sort any length"): why the lesson's model fails away from the length it
was trained on, and which positional scheme and training lengths make a model that does not.

Each variant of `study.variants` is a positional scheme (model.positions) trained on the lesson's
length (`<positions>_fixed`: data.train_lengths) or on mixed lengths (`<positions>_mixed`:
study.train_lengths), one model per `study.seeds`, by the pipeline's own `train_model` with
`study.steps` steps and `study.dropout`, on training sequences of its own. The variant `pipeline` is
the pipeline's checkpoints (models/), tested, not retrained. Every model is tested by greedy decoding
with the key/value cache at every length from 1 to `study.max_length` its positions allow, on test
sets of this stage's own: every sequence there is where there are at most `study.test_size`, else
`study.test_size` random ones, redrawn wherever they occur in a training set of the study.

The diagnosis probes the pipeline's checkpoints at `study.diagnosis_lengths`: which outputs fail and
how (by output position, digit, repeats, the lesson's "starts with 0 / ends with 9" habits), how far
through the sorted input each decoding step moves, and where the cross-attention looks.
"""

import dataclasses
import math
import multiprocessing
import os
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from pipeline import files, runlog
from pipeline.batching import make_batch
from pipeline.checkpoint import checkpoint_path, load_checkpoint
from pipeline.data import TRAIN_PATH, draw_test_set, load_npz, random_sources, row_keys, sorted_targets
from pipeline.decoding import greedy_cached, teacher_forced
from pipeline.errors import stage_entry
from pipeline.params import Params, load_params, variant_recipe
from pipeline.stats import across_seeds
from pipeline.study_report import diagnosis_text
from pipeline.tokens import BOS, DIGITS
from pipeline.train import MODELS_DIR, _ignore_sigint, resolve_device, train_model

METRICS_PATH = "metrics/study.json"
OUT_DIR = Path("metrics/study")
BAR, BAR_LENGTHS = 0.99, range(1, 21)  # issue 7's bar: >= 99 % exact sequences at every length 1-20
# What the diagnosis keeps of each trained variant (the pipeline's checkpoints keep everything).
VARIANT_DIAGNOSIS = (
    "seq_acc",
    "rank_speed",
    "attention_speed",
    "attention_on_written_digit",
    "emitted_rank",
    "correct_rank",
    "attention_by_rank",
)


# ------------------------------------------------------------------------------------ test sets


def every_sequence(length):
    """All DIGITS**length sources of one length, in counting order: (10**n, n) int8."""
    codes = np.arange(DIGITS**length)
    powers = DIGITS ** np.arange(length - 1, -1, -1)
    return (codes[:, None] // powers % DIGITS).astype(np.int8)


def training_set(lengths, size, seed):
    """A variant's training sequences: `size` rows over `lengths` in equal shares (pipeline.data)."""
    rng = np.random.default_rng([seed, 0, *sorted(lengths)])
    source, row_lengths = random_sources(rng, size, lengths)
    return {"source": source, "lengths": row_lengths, "target": sorted_targets(source, row_lengths)}


def make_test_sets(lengths, size, seed, train_keys):
    """Per length: its sources, and how many of them also occur in training (only where every
    sequence of that length is tested, or the space is nearly exhausted)."""
    sets, overlap = {}, {}
    for n in lengths:
        if DIGITS**n <= size:
            source = every_sequence(n)
            overlap[n] = sum(k in train_keys for k in row_keys(source, np.full(len(source), n)))
        else:
            source, _, overlap[n] = draw_test_set(np.random.default_rng([seed, 1, n]), size, n, train_keys)
        sets[n] = source
    return sets, overlap


def longest_input(config):
    """The longest source a model reads: max_len, one less with positions bos (BOS opens it)."""
    return config.max_len - (config.positions == "bos")


# ------------------------------------------------------------------------------------ variants


def variant_params(params: Params, variant) -> Params:
    """The pipeline's parameters with the variant's positions and training lengths, and the study's
    steps, seeds and dropout."""
    positions, lengths = variant_recipe(variant, params)
    s = params.study
    return dataclasses.replace(
        params,
        data=dataclasses.replace(
            params.data, train_lengths=lengths, train_size=s.steps * params.train.batch_size
        ),
        model=dataclasses.replace(params.model, positions=positions, dropout=s.dropout),
        train=dataclasses.replace(params.train, steps=s.steps, seeds=s.seeds),
    )


@torch.no_grad()
def accuracy_by_length(model, tests, batch_size, device):
    """Greedy (key/value-cached) exact-sequence and digit accuracy at every length the model reads."""
    out = {}
    for n, source in tests.items():
        if n > longest_input(model.config):
            continue
        correct = []
        for start in range(0, len(source), batch_size):
            rows = np.asarray(source[start : start + batch_size])
            src = torch.as_tensor(rows, dtype=torch.long, device=device)
            target = torch.as_tensor(np.sort(rows, axis=1), dtype=torch.long, device=device)
            correct.append((greedy_cached(model, src) == target).cpu())
        correct = torch.cat(correct)
        out[f"length_{n}_seq_acc"] = correct.all(1).float().mean().item()
        out[f"length_{n}_digit_acc"] = correct.float().mean().item()
    return out


def train_and_test(params: Params, variant, seed, tests, batch_size):
    """Worker: train one seed of one variant, then test it at every length."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    device = resolve_device(params.train.device)
    data = training_set(params.data.train_lengths, params.data.train_size, params.study.seed)
    log_every = params.train.log_every

    def on_step(step, loss, lr):
        if step % log_every == 0 or step == params.train.steps:
            print(f"study {variant} seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}", flush=True)

    start = time.perf_counter()
    model, losses = train_model(params, seed, data, device, on_step)
    seconds = time.perf_counter() - start
    model.eval().cpu()
    diagnosis = {
        str(n): {k: v for k, v in diagnose(model, tests[n]).items() if k in VARIANT_DIAGNOSIS}
        for n in params.study.diagnosis_lengths
        if n <= longest_input(model.config)
    }
    results = accuracy_by_length(model, tests, batch_size, "cpu")
    return {
        "seconds": seconds,
        "loss_last100_mean": statistics.fmean(losses[-100:]),
        "diagnosis": diagnosis,
    } | results


def run_jobs(jobs, workers):
    """Run train_and_test for each (params, variant, seed, tests, batch_size), `workers` at a time."""
    if workers == 1:
        return [train_and_test(*job) for job in jobs]
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_ignore_sigint)
    try:
        handles = [pool.apply_async(train_and_test, job) for job in jobs]
        results = [h.get() for h in handles]
        pool.close()
        return results
    finally:
        pool.terminate()  # on error or interrupt, stop every worker now
        pool.join()


def summarise(per_seed, lengths):
    """Flat metrics of one variant from {seed: results}: each length's mean, std and seed values, the
    worst length of 1-20 and whether it clears the bar, and the mean beyond 20."""
    first = next(iter(per_seed.values()))
    keys = [k for n in lengths for k in (f"length_{n}_seq_acc", f"length_{n}_digit_acc") if k in first]
    out = across_seeds(per_seed, keys)
    tested = [n for n in lengths if f"length_{n}_seq_acc" in out]
    worst = min((n for n in tested if n in BAR_LENGTHS), key=lambda n: out[f"length_{n}_seq_acc"])
    out["min_seq_acc_1_20"] = out[f"length_{worst}_seq_acc"]
    out["worst_length_1_20"] = worst
    out["meets_bar"] = set(BAR_LENGTHS) <= set(tested) and out["min_seq_acc_1_20"] >= BAR
    reach = 0  # the longest L with every length 1..L at the bar
    while reach + 1 in tested and out[f"length_{reach + 1}_seq_acc"] >= BAR:
        reach += 1
    out["bar_up_to_length"] = reach
    beyond = [n for n in tested if n > BAR_LENGTHS.stop - 1]
    if beyond:
        out[f"mean_seq_acc_21_{max(beyond)}"] = statistics.fmean(out[f"length_{n}_seq_acc"] for n in beyond)
    return out


# ----------------------------------------------------------------------------------- diagnosis


def midpoint_rank(source, digits):
    """Where each digit falls in its row's sorted source: (#smaller + #smaller-or-equal) / 2."""
    less = (source[:, None, :] < digits[:, :, None]).sum(2)
    less_equal = (source[:, None, :] <= digits[:, :, None]).sum(2)
    return (less + less_equal) / 2  # (B, T)


def slope(values):
    """Least-squares slope of values against their index."""
    x = np.arange(len(values))
    return float(np.polyfit(x, values, 1)[0])


def fit_steps(n):
    """The steps over which to measure how fast outputs move through the sorted input: the first 60 %
    (later steps of long inputs pile up on the largest digit), at least two."""
    return max(2, math.ceil(0.6 * n))


@torch.no_grad()
def cross_attention(model, source, output):
    """Last decoder layer's cross-attention (mean over heads) while it reads the model's own outputs,
    over the input positions only: (B, T_dec, T_enc)."""
    src = torch.as_tensor(source, dtype=torch.long)
    tgt_in = torch.cat(
        [torch.full_like(src[:, :1], BOS), torch.as_tensor(output[:, :-1], dtype=torch.long)], 1
    )
    trace = []
    model.decode(tgt_in, model.encode(src), trace=trace)
    weights = trace[-1].cross_attention.mean(1).numpy()  # (B, T_dec, T_mem)
    return weights[:, :, weights.shape[2] - source.shape[1] :]  # without the BOS row of positions bos


def attention_by_rank(weights, source):
    """Cross-attention (B, T_dec, T_enc) with the input positions reordered by their rank in the
    sorted input (ties in input order), mean over rows: (T_dec, T_enc)."""
    order = np.argsort(source, axis=1, kind="stable")  # input position of rank 0, 1, ...
    return np.take_along_axis(weights, order[:, None, :], axis=2).mean(0)


@torch.no_grad()
def diagnose(model, source, batch_size=1000):
    """Numbers on how one model sorts one set of equal-length sources."""
    n = source.shape[1]
    src = torch.as_tensor(source, dtype=torch.long)
    target = np.sort(source, axis=1)
    pred = torch.cat([greedy_cached(model, src[i : i + batch_size]) for i in range(0, len(src), batch_size)])
    pred = pred.numpy()
    batch = make_batch(source, target, np.full(len(source), n))
    forced = teacher_forced(model, batch.src, batch.tgt_in).numpy()
    right = pred == target
    wrong_rows = ~right.all(1)
    counts_in = np.stack([(source == d).sum(1) for d in range(DIGITS)], 1)
    counts_out = np.stack([(pred == d).sum(1) for d in range(DIGITS)], 1)
    no0, no9 = counts_in[:, 0] == 0, counts_in[:, DIGITS - 1] == 0
    repeats = counts_in.max(1)
    emitted, correct = midpoint_rank(source, pred).mean(0), midpoint_rank(source, target).mean(0)
    weights = cross_attention(model, source[:200], pred[:200])  # (200, n, n)
    attention = attention_by_rank(weights, source[:200])
    on_written = (weights * (source[:200, None, :] == pred[:200, :, None])).sum(2)  # (200, n)
    attended = attention.argmax(1)  # the rank each step's cross-attention peaks at
    fit = fit_steps(n)
    correct_slope = slope(correct[:fit])
    first_error = right.argmin(1)[wrong_rows]
    return {
        "seq_acc": float(right.all(1).mean()),
        "digit_acc": float(right.mean()),
        "tf_seq_acc": float((forced == target).all(1).mean()),
        "sorted": float((np.diff(pred, axis=1) >= 0).all(1).mean()),
        "same_digits": float((counts_in == counts_out).all(1).mean()),
        "missing_digit": float(((counts_out == 0) & (counts_in > 0)).any(1).mean()),
        "extra_digit": float(((counts_out > 0) & (counts_in == 0)).any(1).mean()),
        "too_few_copies": float((counts_out < counts_in).any(1).mean()),
        "first_error_mean": float(first_error.mean()) if len(first_error) else None,
        "starts_with_0_given_no_0": float((pred[no0, 0] == 0).mean()) if no0.any() else None,
        "ends_with_9_given_no_9": float((pred[no9, -1] == DIGITS - 1).mean()) if no9.any() else None,
        "inputs_without_0": int(no0.sum()),
        "inputs_without_9": int(no9.sum()),
        "rank_speed": slope(emitted[:fit]) / correct_slope,  # 1: one place of the sorted input a step
        "attention_speed": slope(attended[:fit]) / correct_slope,
        "attention_on_written_digit": float(on_written.mean()),  # cross-attention on the digit written
        "acc_by_position": right.mean(0).tolist(),
        "acc_by_digit": [
            float(right[target == d].mean()) if (target == d).any() else None for d in range(DIGITS)
        ],
        "seq_acc_by_repeats": {
            label: float(right.all(1)[mask].mean())
            for label, mask in [
                ("1", repeats == 1),
                ("2", repeats == 2),
                ("3", repeats == 3),
                ("4+", repeats >= 4),
            ]
            if mask.any()
        },
        "emitted_rank": emitted.tolist(),
        "correct_rank": correct.tolist(),
        "attended_rank": attended.astype(float).tolist(),
        "attention_by_rank": attention.tolist(),
    }


def _mean(values):
    """Mean and sample std of the defined values (None where a seed had nothing to measure)."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return None, None
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def mean_over_seeds(runs):
    """Scalars: mean, std and each seed's value; lists and dicts: element-wise means."""
    first = next(iter(runs.values()))
    out = {}
    for key, value in first.items():
        values = [r[key] for r in runs.values()]
        if isinstance(value, list) and value and isinstance(value[0], list):  # a map
            out[key] = np.mean(np.array(values), axis=0).tolist()
        elif isinstance(value, list):
            columns = zip(*values, strict=True)
            out[key] = [_mean(column)[0] for column in columns]
        elif isinstance(value, dict):
            out[key] = {k: _mean(r[key].get(k) for r in runs.values())[0] for k in value}
        else:
            out[key], out[f"{key}_std"] = _mean(values)
            out.update({f"{key}_seed{s}": r[key] for s, r in runs.items()})
    return out


def run_diagnosis(models, tests, lengths):
    """The diagnosis of every checkpoint in `models` ({seed: model}) at each length, seeds averaged."""
    return {str(n): mean_over_seeds({s: diagnose(m, tests[n]) for s, m in models.items()}) for n in lengths}


# ------------------------------------------------------------------------------------- outputs


def length_table(summaries, lengths):
    """Wide CSV: per length, each variant's mean, std, min and max over seeds (blank where untested)."""
    header = ["length"] + [f"{v}{suffix}" for v in summaries for suffix in ("", "_std", "_min", "_max")]
    rows = [",".join(header)]
    for n in lengths:
        cells = [str(n)]
        for m in summaries.values():
            key = f"length_{n}_seq_acc"
            if key not in m:
                cells += [""] * 4
                continue
            seeds = [v for k, v in m.items() if k.startswith(f"{key}_seed")]
            cells += [f"{m[key]:.6f}", f"{m[key + '_std']:.6f}", f"{min(seeds):.6f}", f"{max(seeds):.6f}"]
        rows.append(",".join(cells))
    return "\n".join(rows) + "\n"


def variant_table(summary, lengths):
    """One variant's CSV for `dvc plots` (one plot per variant, comparable across experiments)."""
    rows = ["length,seq_acc,seq_acc_std,digit_acc"]
    for n in lengths:
        key = f"length_{n}_seq_acc"
        if key in summary:
            digits = summary[f"length_{n}_digit_acc"]
            rows.append(f"{n},{summary[key]:.6f},{summary[key + '_std']:.6f},{digits:.6f}")
    return "\n".join(rows) + "\n"


def seed_table(per_seed):
    rows = ["variant,seed,length,seq_acc,digit_acc"]
    for (variant, seed), result in per_seed.items():
        for key, value in result.items():
            if key.endswith("_seq_acc"):
                n = key.split("_")[1]
                rows.append(f"{variant},{seed},{n},{value:.6f},{result[f'length_{n}_digit_acc']:.6f}")
    return "\n".join(rows) + "\n"


def rank_table(diagnosis):
    rows = ["length,step,emitted_rank,correct_rank,attended_rank,acc_by_position"]
    for n, d in diagnosis.items():
        for t in range(int(n)):
            rows.append(
                f"{n},{t},{d['emitted_rank'][t]:.4f},{d['correct_rank'][t]:.4f},"
                f"{d['attended_rank'][t]:.4f},{d['acc_by_position'][t]:.4f}"
            )
    return "\n".join(rows) + "\n"


def run_study(params: Params, workers=None):
    """Every variant's metrics and the diagnosis; returns (metrics, outputs by file name, timings)."""
    s, device = params.study, resolve_device(params.train.device)
    lengths = list(range(1, s.max_length + 1))
    trained = [v for v in s.variants if v != "pipeline"]
    recipes = {v: variant_params(params, v) for v in trained}
    # Test sets exclude every training sequence of the pipeline and of both kinds of variant, run or
    # not, so that every choice of study.variants is tested on the same sequences.
    pipeline_train = load_npz(TRAIN_PATH, ["source", "lengths"])
    train_keys = set(row_keys(pipeline_train["source"], pipeline_train["lengths"]))
    for lengths_of in (params.data.train_lengths, s.train_lengths):
        data = training_set(lengths_of, s.steps * params.train.batch_size, s.seed)
        train_keys |= set(row_keys(data["source"], data["lengths"]))
    tests, overlap = make_test_sets(sorted({*lengths, *s.diagnosis_lengths}), s.test_size, s.seed, train_keys)

    per_seed, seconds = {}, {}
    loaded = {seed: load_checkpoint(checkpoint_path(MODELS_DIR, seed), device) for seed in params.train.seeds}
    checkpoints = {seed: model for seed, (model, _) in loaded.items()}
    record = loaded[params.train.seeds[0]][1]  # what the train stage recorded in the checkpoint
    pipeline_lengths = record.get("train_lengths", list(params.data.train_lengths))  # older checkpoints
    start = time.perf_counter()
    if "pipeline" in s.variants:
        for seed, model in checkpoints.items():
            per_seed["pipeline", seed] = accuracy_by_length(model, tests, params.evaluate.batch_size, device)
        seconds_taken = time.perf_counter() - start
        print(
            f"study pipeline: tested the {len(checkpoints)} checkpoints of models/ in {seconds_taken:.1f} s"
        )
    readable = longest_input(checkpoints[params.train.seeds[0]].config)
    diagnosis = run_diagnosis(checkpoints, tests, [n for n in s.diagnosis_lengths if n <= readable])
    print(f"study diagnosis of models/ at lengths {list(diagnosis)} done")

    jobs = [(recipes[v], v, seed, tests, params.evaluate.batch_size) for v in trained for seed in s.seeds]
    workers = workers or max(1, min(len(jobs), os.cpu_count() or 1))
    variant_diagnosis = {}
    for (_, v, seed, _, _), result in zip(jobs, run_jobs(jobs, workers) if jobs else [], strict=True):
        seconds.setdefault(v, []).append(result.pop("seconds"))
        result.pop("loss_last100_mean")
        variant_diagnosis.setdefault(v, {})[seed] = result.pop("diagnosis")
        per_seed[v, seed] = result

    metrics, summaries = {}, {}
    for v in s.variants:
        summary = summarise({seed: r for (name, seed), r in per_seed.items() if name == v}, lengths)
        summaries[v] = summary
        metrics.update({f"{v}_{k}": val for k, val in summary.items()})
    metrics["bar_met"] = any(summaries[v]["meets_bar"] for v in s.variants)
    metrics["test_overlap_total"] = int(sum(overlap.values()))
    meta = {
        "variants": {
            v: {
                "positions": checkpoints[params.train.seeds[0]].config.positions
                if v == "pipeline"
                else recipes[v].model.positions,
                "train_lengths": list(pipeline_lengths if v == "pipeline" else recipes[v].data.train_lengths),
                "steps": record["steps"] if v == "pipeline" else s.steps,
                "seeds": list(params.train.seeds if v == "pipeline" else s.seeds),
                "source": "models/ (the pipeline's train stage)"
                if v == "pipeline"
                else "trained by this stage",
            }
            for v in s.variants
        },
        "test_sets": {
            str(n): {
                "size": len(tests[n]),
                "every_sequence": DIGITS**n <= s.test_size,
                "in_training": overlap[n],
            }
            for n in lengths
        },
        "bar": {
            "accuracy": BAR,
            "lengths": [BAR_LENGTHS.start, BAR_LENGTHS.stop - 1],
            "met_by": [v for v in s.variants if summaries[v]["meets_bar"]],
        },
    }
    diagnosis_json = {
        "models": f"{MODELS_DIR}/seed_*.pt",
        "seeds": list(params.train.seeds),
        "trained_lengths": list(pipeline_lengths),
        "test_sequences": {str(n): len(tests[n]) for n in s.diagnosis_lengths},
        "lengths": diagnosis,
        "variants": {
            v: {n: mean_over_seeds({seed: runs[seed][n] for seed in runs}) for n in next(iter(runs.values()))}
            for v, runs in variant_diagnosis.items()
        },
    }
    outputs = {
        "length_accuracy.csv": length_table(summaries, lengths),
        **{f"lengths/{v}.csv": variant_table(summaries[v], lengths) for v in s.variants},
        "per_seed.csv": seed_table(per_seed),
        "meta.json": meta,
        "diagnosis.json": diagnosis_json,
        "rank_by_step.csv": rank_table(diagnosis),
        "diagnosis.md": diagnosis_text(diagnosis_json),
    }
    return metrics, outputs, {v: statistics.fmean(t) for v, t in seconds.items()}


def write_outputs(metrics, outputs):
    """All outputs at once: the directory is written aside and moved into place, then the metrics."""
    staging = files.staging_dir(OUT_DIR)
    try:
        for name, content in outputs.items():
            if isinstance(content, str):
                files.write_text(staging / name, content)
            else:
                files.write_json(staging / name, content)
        files.replace_dir(staging, OUT_DIR)
        files.write_json(METRICS_PATH, metrics)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@stage_entry
def main():
    start = time.perf_counter()
    params = load_params()
    torch.set_num_threads(1)
    metrics, outputs, seconds = run_study(params)
    write_outputs(metrics, outputs)
    print("study: exact-sequence accuracy, mean over seeds (lengths 1-20; the bar is >= 99 % at each)")
    for v in params.study.variants:
        row = " ".join(
            f"{100 * metrics[f'{v}_length_{n}_seq_acc']:.0f}"
            for n in BAR_LENGTHS
            if f"{v}_length_{n}_seq_acc" in metrics
        )
        print(f"  {v:22s} {row}  min {100 * metrics[f'{v}_min_seq_acc_1_20']:.1f} %")
    met = [v for v in params.study.variants if metrics[f"{v}_meets_bar"]]
    print(f"study: bar met by {', '.join(met) or 'no variant'}")
    for v, t in seconds.items():
        print(f"study: {v} trains in {t:.0f} s per seed")
    runlog.record_run("study", time.perf_counter() - start, train_seconds_per_seed=seconds)


if __name__ == "__main__":
    main()

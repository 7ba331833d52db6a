"""Stage `train`: one model per entry of train.seeds, with the paper's recipe (lesson 10, part 3).

    python -m pipeline.stages.train --data data/train.npz --models models --metrics metrics/train.json

Each seed trains in its own process on one thread (pipeline.core.training.train_model), so the seeds
run side by side on a multi-core machine and every seed's bytes are the same whatever the machine's
core count. Checkpoints and per-step loss logs (dvclive's layout, in the metrics' folder) are written to
staging folders and moved into place only when every seed has finished: all of them or none.
"""

import json
import time

from tqdm import tqdm

from pipeline.core.data import load_npz
from pipeline.core.params import Params, load_params
from pipeline.core.recipe import loss_floor
from pipeline.core.resume import for_seed as resume_for_seed
from pipeline.core.training import loss_summary, train_model
from pipeline.infra import files, runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.device import set_up_worker
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import detail_dir
from pipeline.infra.pool import run_jobs, seed_workers
from pipeline.infra.results import spread
from pipeline.infra.rules import as_dict
from pipeline.model.checkpoint import checkpoint_path, save_checkpoint
from pipeline.tokens import VOCAB

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("model", "train", "data.train_lengths")


def write_step_log(folder, losses, lrs):
    """Each step's loss and learning rate in dvclive's layout (plots/metrics/<name>.tsv and the last
    values in metrics.json), which `dvc plots` reads: written once when training ends, since writing
    it every step cost as much as the step itself."""
    for name, values in (("loss", losses), ("lr", lrs)):
        rows = "".join(f"{step}\t{value!r}\n" for step, value in enumerate(values))
        files.write_text(folder / "plots" / "metrics" / f"{name}.tsv", f"step\t{name}\n{rows}")
    last = {"loss": losses[-1], "lr": lrs[-1], "step": len(losses) - 1}
    files.write_text(folder / "metrics.json", json.dumps(last, indent=4) + "\n")


def train_one_seed(params: Params, seed, position, data_path, staging: dict):
    """Worker: train seed `seed`, write its checkpoint and step log under `staging`."""
    device = set_up_worker(params.train.device)
    data = load_npz(data_path, ["source", "target", "lengths"])
    tp = params.train
    bar = tqdm(total=tp.steps, desc=f"seed {seed}", position=position, disable=None, leave=True)
    start, lrs = time.perf_counter(), []

    def on_step(step, loss, lr):
        lrs.append(lr)
        bar.update()
        if step % tp.log_every == 0 or step == tp.steps:
            bar.set_postfix(loss=f"{loss:.3f}")
            tqdm.write(f"seed {seed}  step {step:5d}  loss {loss:.3f}  lr {lr:.1e}")

    saved = resume_for_seed(params.model, tp, seed, len(data["source"]))
    model, losses = train_model(params.model, tp, seed, data, device, on_step, saved)
    write_step_log(staging["log"] / f"seed_{seed}", losses, lrs)
    bar.close()
    seconds = time.perf_counter() - start
    save_checkpoint(
        checkpoint_path(staging["models"], seed),
        model,
        seed=seed,
        steps=tp.steps,
        train=as_dict(tp),
        train_lengths=list(params.data.train_lengths),
    )
    if saved:
        saved.clear()  # the checkpoint in staging now holds the result
    return {"seed": seed, "seconds": seconds, **loss_summary(losses, tp.log_every)}


def train_all(params: Params, data_path, models_dir, metrics_path, workers=None):
    """Train every seed, then move all outputs into place at once: all of them or none."""
    with files.staged(models_dir, detail_dir(metrics_path)) as (models, log):
        staging = {"models": models, "log": log}
        jobs = [(params, seed, i, data_path, staging) for i, seed in enumerate(params.train.seeds)]
        runs = run_jobs(train_one_seed, jobs, workers or seed_workers(jobs))
    floor, _, _ = loss_floor(params.train.label_smoothing, VOCAB)
    final, final_std = spread(r["loss_final"] for r in runs)
    metrics = {"loss_final": final, "loss_final_std": final_std, "loss_floor": floor}
    metrics["loss_gap_to_floor"] = final - floor
    files.write_json(metrics_path, metrics)  # the detail: each seed's step log (its loss at every step)
    return metrics, runs


@stage_entry
def main():
    args = stage_paths(__doc__, "data", "models", "metrics")
    params = load_params(reads=READS)
    start = time.perf_counter()
    metrics, runs = train_all(params, args.data, args.models, args.metrics)
    for run in runs:
        print(f"seed {run['seed']}: final loss {run['loss_final']:.3f} in {run['seconds']:.1f} s")
    print(
        f"train: loss {metrics['loss_final']:.3f} ± {metrics['loss_final_std']:.3f} "
        f"(floor {metrics['loss_floor']:.3f}) for {len(runs)} seeds in {time.perf_counter() - start:.1f} s"
    )
    runlog.record_run("train", time.perf_counter() - start)


if __name__ == "__main__":
    main()

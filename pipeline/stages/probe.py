"""Stage `probe`: lesson 6's claims ("Apilar sin perder lo de abajo") measured with numbers this
stage regenerates: its NumPy cells, the parameter accounting, gradient and Jacobian probes.

    python -m pipeline.stages.probe --models models --test data/test.npz --metrics metrics/probe.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/probes/summary.py.
"""

import dataclasses
import time

import numpy as np
import torch

from pipeline.core.data import load_npz
from pipeline.core.params import load_params
from pipeline.infra import files, runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import detail_dir
from pipeline.infra.metrics import write as write_metrics
from pipeline.infra.tables import csv_text
from pipeline.model.checkpoint import check_fits, checkpoint_path, load_checkpoint
from pipeline.probes import accounting, lesson6
from pipeline.probes import depth as depth_probes
from pipeline.probes.summary import (
    FD_STEPS,
    GRAD_BATCH,
    HEADLINE,
    LESSON_N,
    MAX_PATH_BLOCKS,
    PAPER_VOCAB,
    SWEEP_BATCH,
    finite,
    grad_metrics,
    grad_table,
    layernorm_rows,
    lesson6_metrics,
    print_tables,
    probe_batch,
    sweep_metrics,
)

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("probe", "train.seeds", "data.train_lengths")


def model_free_probes(p):
    """Lesson 6's cells and counts: its LayerNorm cell, the residual table at `probe.depths`, the
    finite-difference steps, the paths check, the parameter accounting."""
    ln = lesson6.layernorm_cell()
    cell = lesson6.residual_cell(N=LESSON_N, extra_layers=max(0, max(p.depths) - LESSON_N))
    table = lesson6.residual_table(cell, sorted(p.depths))
    steps = lesson6.step_sweep(cell, max(p.depths), FD_STEPS)
    path_blocks = sorted({2, *(n for n in p.depths if n <= MAX_PATH_BLOCKS)})
    paths = lesson6.path_check(np.random.default_rng(p.seed), path_blocks)
    acct, acct_32 = accounting.parameter_accounting(), accounting.parameter_accounting(32, 128, 4)
    decoder_block, base = accounting.decoder_block_params(), accounting.model_params(vocab=PAPER_VOCAB)
    return ln, table, steps, paths, acct, acct_32, decoder_block, base


def model_probes(params, models_dir, test_path):
    """Real models: the first seed's checkpoint and fresh models at initialisation, their gradients
    through depth and the Jacobian sweep; (model, gradient runs, their table, the sweep)."""
    p, seed = params.probe, params.train.seeds[0]
    path = checkpoint_path(models_dir, seed)
    model, record = load_checkpoint(path)
    length = params.data.train_lengths[0]
    check_fits(model, [length], path)
    batch = probe_batch(load_npz(test_path), length, GRAD_BATCH, test_path)
    smoothing = record["train"]["label_smoothing"]
    trained_norm = model.config.norm
    runs = {}
    for norm in ("post", "pre"):
        init = depth_probes.seeded_model(dataclasses.replace(model.config, norm=norm), seed)
        runs[f"{norm}_init"] = depth_probes.sublayer_grad_norms(init, batch, smoothing)
    runs[f"{trained_norm}_trained"] = depth_probes.sublayer_grad_norms(model, batch, smoothing)
    grads = grad_table(runs)
    sweep = depth_probes.depth_sweep(
        model.config, sorted(p.sweep_layers), batch.src[:SWEEP_BATCH], batch.tgt_in[:SWEEP_BATCH], p.seed
    )
    return model, runs, grads, sweep


@stage_entry
def main():
    args = stage_paths(__doc__, "models", "test", "metrics")
    start = time.perf_counter()
    params = load_params(reads=READS)
    torch.set_num_threads(1)  # the same bytes on any machine
    ln, table, steps, paths, acct, acct_32, decoder_block, base = model_free_probes(params.probe)
    model, runs, grads, sweep = model_probes(params, args.models, args.test)
    trained_norm = model.config.norm
    metrics = lesson6_metrics(ln, table, steps, paths, acct, decoder_block, base, acct_32)
    metrics.update(grad_metrics(grads, runs))
    metrics.update(sweep_metrics(sweep))
    metrics["layernorm_eps_model"] = model.encoder[0].sub[0].ln.eps
    metrics["grad_trained_is_post"] = trained_norm == "post"
    metrics["grad_other_norm_trained"] = False
    tables = {
        "layernorm_cell.csv": layernorm_rows(ln),
        "residual_table.csv": table,
        "fd_steps.csv": steps,
        "paths.csv": paths,
        "grad_norms.csv": grads,
        "jacobian_sweep.csv": sweep,
    }
    texts = {name: csv_text(rows) for name, rows in tables.items()}  # every float exactly
    files.write_dir(detail_dir(args.metrics), {**texts, "summary.json": finite(metrics)})
    write_metrics(args.metrics, finite(metrics), HEADLINE, detail=False)  # the detail: summary.json

    print_tables(ln, table, steps, paths, acct, base, grads, sweep)
    runlog.record_run("probe", time.perf_counter() - start)


if __name__ == "__main__":
    main()

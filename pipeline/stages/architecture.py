"""Stage `architecture`: lesson 10's structural claims, measured on freshly built layers.

    python -m pipeline.stages.architecture --metrics metrics/architecture.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/probes/architecture.py.
"""

import time

from pipeline.core import lesson
from pipeline.core.params import load_params
from pipeline.infra import runlog
from pipeline.infra.cli import stage_paths
from pipeline.infra.errors import stage_entry
from pipeline.infra.metrics import headline
from pipeline.infra.results import write_detail
from pipeline.model.transformer import Transformer
from pipeline.model.transformer import count_parameters as count
from pipeline.probes.architecture import HEADLINE, heads_table, measure

# the params.yaml keys this stage reads; dvc.yaml's params: are written from them
READS = ("model",)


@stage_entry
def main():
    args = stage_paths(__doc__, "metrics")
    start = time.perf_counter()
    params = load_params(reads=READS)
    # The lesson's claims are about the lesson's size; the configured model's count is recorded
    # beside them for experiments that change the size.
    metrics = measure(lesson.MODEL)
    metrics["configured_model_params"] = count(Transformer(params.model))
    by_heads = heads_table(metrics)
    tables = {"by_heads.csv": (by_heads, ["heads", "attention_params", "attention_mults"])}
    write_detail(args.metrics, tables, headline(metrics, HEADLINE), {"summary.json": metrics})
    print(
        f"architecture: {metrics['model_params']:,} parameters (encoder layer "
        f"{metrics['encoder_layer_params']:,}, decoder layer {metrics['decoder_layer_params']:,}, "
        f"embeddings {metrics['embedding_params']} in {metrics['embedding_matrices']} matrix); "
        f"causal mask keeps tokens 0-3: {metrics['mask_demo_first4_unchanged']}"
    )
    runlog.record_run("architecture", time.perf_counter() - start)


if __name__ == "__main__":
    main()

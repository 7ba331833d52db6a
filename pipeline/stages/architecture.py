"""Stage `architecture`: lesson 10's structural claims, measured on freshly built layers.

    python -m pipeline.stages.architecture --metrics metrics/architecture.json

A thin entry point that reads inputs and writes outputs; the work is in pipeline/probes/architecture.py.
"""

import time

from pipeline.infra.entry import record_run, stage_entry, stage_paths
from pipeline.infra.outputs import headline_of, write_outputs
from pipeline.params.lesson_load import load_lesson_params
from pipeline.probes.architecture import HEADLINE, heads_table, measure_configured


@stage_entry
def main():
    args = stage_paths(__doc__, "metrics")
    start = time.perf_counter()
    params = load_lesson_params()
    metrics = measure_configured(params.model)
    by_heads = heads_table(metrics)
    tables = {"by_heads.csv": (by_heads, ["heads", "attention_params", "attention_mults"])}
    write_outputs(args.metrics, headline_of(metrics, HEADLINE), tables, {"summary.json": metrics})
    print(
        f"architecture: {metrics['model_params']:,} parameters (encoder layer "
        f"{metrics['encoder_layer_params']:,}, decoder layer {metrics['decoder_layer_params']:,}, "
        f"embeddings {metrics['embedding_params']} in {metrics['embedding_matrices']} matrix); "
        f"causal mask keeps tokens 0-3: {metrics['mask_demo_first4_unchanged']}"
    )
    record_run("architecture", time.perf_counter() - start)


if __name__ == "__main__":
    main()

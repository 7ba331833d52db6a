"""Speed report: `python -m pipeline.tools.benchmark` measures, side by side in one run on this
machine, with warm-up, medians and quartiles:

- our training step against torch.nn.Transformer of identical shape, both trained by train_model
  (pipeline/model/reference.py, train_step);
- the FLOPs of one training step against this machine's measured float32 matmul peak (flops);
- greedy decoding with the key/value cache against re-running the decoder, at lengths 10, 32, 64
  (cached_decoding);
- evaluation throughput in sequences per second (throughput);
- three seeds trained at once in separate one-thread processes, as train_all does, against one (seeds).

Competing implementations run round by round, in turn, so that load from other work falls on all
of them alike; the load average before and after is recorded, with a warning when the machine was
busy at the start (machine). It writes metrics/benchmark.json (flat keys) and the plot data
metrics/benchmark/*.csv (output), which pipeline.report.benchmark_figure draws. A script, not a
pipeline stage: timings differ on every run and on a machine shared with other work, so DVC does not
rerun it; the report stage reads what it wrote.
"""

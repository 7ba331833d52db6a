"""The speed report, the frozen `benchmark` stage's work (`python -m pipeline.stages.benchmark`):
measures, side by side in one run on this machine, with warm-up, medians and quartiles:

- our training step against torch.nn.Transformer of identical shape (pipeline/model/reference.py),
  both trained by the training loop (pipeline.core.loop.train), its FLOPs against this machine's
  float32 matmul peak (step);
- greedy decoding with the key/value cache against re-running the decoder, at lengths 10, 32, 64,
  and evaluation throughput in sequences per second (decoding);
- every seed trained at once in separate one-thread processes, as the train stage does, against one
  (seeds).

Competing implementations run round by round, in turn, so that load from other work falls on all
of them alike; the load average before and after is recorded, with a warning when the machine was
busy at the start (timing). It writes metrics/benchmark.json (flat keys) and the plot data
metrics/benchmark/*.csv (suite), which the report draws. The stage is frozen: timings differ on
every run and on a machine shared with other work, so `dvc repro` does not rerun it; it is run on
purpose on a quiet machine and its results committed.
"""

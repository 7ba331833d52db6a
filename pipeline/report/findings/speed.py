"""The finding on speed, from the benchmark script's saved timings (metrics/benchmark.json)."""

from pipeline.report.findings.finding import Figure, Finding


def speed(b):
    longest = max(int(k.removeprefix("decode_speedup_len")) for k in b if k.startswith("decode_speedup_len"))
    text = (
        f"On one thread our training step is {b['train_step_speedup']:.2f}x as fast as nn.Transformer's "
        f"with the same recipe, and the key/value cache makes greedy decoding "
        f"{b[f'decode_speedup_len{longest}']:.1f}x as fast at {longest} tokens, with the same tokens. "
        "Timings come from `python -m pipeline.tools.benchmark` (metrics/benchmark.json), a script rather "
        "than a stage, on the machine its title names: they change from run to run."
    )
    caption = "Our training step against nn.Transformer, cached decoding, throughput, seeds side by side."
    return Finding("Speed", text, (Figure("benchmark.png", caption),))

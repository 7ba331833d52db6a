"""Where a training step's time goes, in each numerics mode, one model alone and seeds trained
together: torch's profiler over the lesson's model (params.yaml's model and train), one thread, the
operations grouped by kind, per step of one seed.

    python -m pipeline.numerics.step_profile [--steps 40] [--seeds 5]

Each column runs in a fresh process of its own (MKL reads its branch once), one after the other: one
seed alone and `--seeds` seeds together (pipeline/core/loop.py, the stages' training: five a process
is the train stage's ten seeds on two cores), whose times are divided by the seeds. The profiler
adds its own cost to every operation, so the per-step total here is above the benchmark's step;
the groups' shares, side by side, are what it is for. The step median without the profiler is
printed beside it.
"""

import argparse
import collections
import dataclasses
import time

import numpy as np

from pipeline.infra.entry import stage_entry
from pipeline.infra.errors import PipelineError
from pipeline.numerics import pin as numerics
from pipeline.numerics.record import in_fresh_process

# What each group holds: ATen's operator names. Anything else (autograd's bookkeeping, the embedding,
# the loss) is counted under "everything else".
GROUPS = {
    "matrix products (mm, bmm, addmm)": ("aten::mm", "aten::bmm", "aten::addmm"),
    "copies (copy_)": ("aten::copy_",),
    "dropout masks (uniform_, ge, ge_)": ("aten::uniform_", "aten::ge", "aten::ge_"),
    "softmax, forward and backward": ("aten::_softmax", "aten::_softmax_backward_data"),
    "layer norm, forward and backward": ("aten::native_layer_norm", "aten::native_layer_norm_backward"),
    "ReLU, forward and backward": ("aten::clamp_min", "aten::threshold_backward"),
    "elementwise (add, mul, div, sum)": ("aten::add", "aten::add_", "aten::mul", "aten::div", "aten::sum"),
    "views (view, reshape, transpose, t, expand, as_strided)": (
        "aten::view",
        "aten::_unsafe_view",
        "aten::reshape",
        "aten::transpose",
        "aten::t",
        "aten::expand",
        "aten::as_strided",
    ),
    "allocation (empty, empty_strided)": ("aten::empty", "aten::empty_strided"),
}
REST = "everything else (autograd nodes, embedding, loss, Adam)"


def grouped(self_us, calls, steps):
    """{group: (ms per step, calls per step)} from each operator's self time (µs) and call count."""
    named = {op for ops in GROUPS.values() for op in ops}
    members = {**GROUPS, REST: [op for op in self_us if op not in named]}
    return {
        g: (sum(self_us.get(op, 0) for op in ops) / 1e3 / steps, sum(calls.get(op, 0) for op in ops) / steps)
        for g, ops in members.items()
    }


def self_times(events):
    """({operator: self time in µs}, {operator: calls}) of the profiler's events, as torch's
    key_averages() gives them, in one pass (key_averages builds Python objects for every event: 9 s
    for 40 steps of the lesson's model). An event's self time is its span less its children's; an
    operator whose one child is itself again (a redispatch) counts as one call, as torch merges it."""
    spans = sorted(((e.start_ns(), e.end_ns(), e.name()) for e in events), key=lambda s: (s[0], -s[1]))
    self_ns, children, open_spans = collections.Counter(), [[] for _ in spans], []
    for i, (start, end, name) in enumerate(spans):
        while open_spans and spans[open_spans[-1]][1] <= start:
            open_spans.pop()
        if open_spans:  # the innermost open span is the parent: its self time loses this one
            self_ns[spans[open_spans[-1]][2]] -= end - start
            children[open_spans[-1]].append(name)
        self_ns[name] += end - start
        open_spans.append(i)
    calls = collections.Counter(
        name for (_, _, name), kids in zip(spans, children, strict=True) if kids != [name]
    )
    return {name: ns / 1e3 for name, ns in self_ns.items()}, dict(calls)


def profile_this_process(steps, seeds=1):
    """{"step_ms": the median step without the profiler, "groups": grouped()} in this process's mode,
    per seed: one seed alone (`seeds` 1) or `seeds` seeds together."""
    import torch
    from torch.autograd.profiler import profile  # torch.profiler's own front imports its compiler (2 s)

    from pipeline.core.data import synthetic_rows
    from pipeline.core.loop import train
    from pipeline.params.lesson_load import load_lesson_params

    torch.set_num_threads(1)  # as the stages train
    params = load_lesson_params()
    short = dataclasses.replace(params.train, steps=steps)
    data = synthetic_rows(steps * short.batch_size * seeds, params.data.train_lengths[0])

    def run(on_step=None):
        train(params.model, short, list(range(seeds)), data, on_step=on_step)

    stamps = []
    run(on_step=lambda *_: stamps.append(time.perf_counter()))
    with profile() as prof:
        run()
    self_us, calls = self_times(prof.kineto_results.events())
    step_ms = float(np.median(np.diff(stamps)[min(5, steps // 4) :]) * 1e3)  # the first steps warm up
    return {"step_ms": step_ms / seeds, "groups": grouped(self_us, calls, steps * seeds)}


def profile_mode(mode, steps, seeds=1):
    """profile_this_process() in a fresh process running in numerics mode `mode`."""
    code = (
        "import pipeline, json; from pipeline.numerics import step_profile as p; "
        f"print(json.dumps(p.profile_this_process({steps}, {seeds})))"
    )
    return in_fresh_process(mode, code, "the step profile")


def table(profiles):
    """The groups side by side, one column of ms per step per mode, then the calls per step."""
    modes = list(profiles)
    lines = [
        f"{'per training step of one seed':58s}" + "".join(f"{m:>12s}" for m in modes) + f"{'calls':>8s}"
    ]
    for g in profiles[modes[0]]["groups"]:
        ms = "".join(f"{profiles[m]['groups'][g][0]:9.2f} ms" for m in modes)
        lines.append(f"{g:58s}{ms}{profiles[modes[0]]['groups'][g][1]:8.1f}")
    totals = "".join(f"{sum(v[0] for v in profiles[m]['groups'].values()):9.2f} ms" for m in modes)
    lines.append(f"{'total under the profiler':58s}{totals}")
    steps = "".join(f"{profiles[m]['step_ms']:9.2f} ms" for m in modes)
    lines.append(f"{'the step without the profiler (median)':58s}{steps}")
    return "\n".join(lines)


@stage_entry
def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.numerics.step_profile", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--steps", type=int, default=40, help="training steps profiled in each mode (40)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds trained together beside one model (5)")
    args = parser.parse_args(argv)
    if args.steps < 8:
        raise PipelineError(
            f"--steps = {args.steps} is invalid: expected an integer >= 8 (the first warm up)"
        )
    if args.seeds < 1:
        raise PipelineError(f"--seeds = {args.seeds} is invalid: expected an integer >= 1")
    profiles = {}
    for mode in numerics.MODES:
        for seeds, name in ((1, "one"), (args.seeds, f"{args.seeds} tog.")):
            print(f"profiling {args.steps} steps in mode {mode}, {name} ...", flush=True)
            profiles[f"{mode[:4]} {name}"] = profile_mode(mode, args.steps, seeds)
    print(table(profiles))


if __name__ == "__main__":
    main()

"""Looking inside a model through forward hooks on its weighting modules while a block of code runs:
every attention's weights, read. The forward path carries no instrumentation and no switch; the
probes, the evaluation's example and the study's diagnosis all go through here (the study's gates
rounded to 0 or 1 likewise: pipeline/study/attention.py, rounded_gates)."""

import contextlib

from pipeline.model.transformer import MultiHeadAttention


@contextlib.contextmanager
def attention_weights(module):
    """{name: the weights (B, h, T_q, T_k) of each call, in order} of every attention inside
    `module`, named as `module.named_modules()` names it (`decoder.1.cross`; `attn` inside one layer),
    for the forward passes run inside the block. The hooks are removed on exit."""
    found, handles = {}, []
    for name, sub in module.named_modules():
        if isinstance(sub, MultiHeadAttention):
            calls = found.setdefault(name, [])
            hook = lambda _module, _inputs, weights, calls=calls: calls.append(weights.detach())  # noqa: E731
            handles.append(sub.weights.register_forward_hook(hook))
    try:
        yield found
    finally:
        for handle in handles:
            handle.remove()

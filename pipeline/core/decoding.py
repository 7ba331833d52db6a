"""Decoding (lesson 10, part 4): greedy generation token by token (re-running the decoder, or with a
key/value cache), the paper's beam search, and teacher forcing; and the one way a test set is
decoded and scored by length, which the evaluate stage, the pre-norm comparison, the length study
and its diagnosis share."""

import numpy as np
import torch

from pipeline.core.batching import decoder_input
from pipeline.tokens import BOS


def seed_test_draws(length):
    """A model whose positions draw at test time (the length study's randomized) draws from torch's
    generator: seed it by the length measured, so that a test's draws depend on nothing else, not on
    the seeds a worker evaluated before. The paper's model draws nothing at test time."""
    torch.manual_seed(1_000_003 * length)


def never_bos(logits):
    """The logits (..., vocab) with BOS ruled out, in place: BOS opens the output and is never in it."""
    logits[..., BOS] = float("-inf")
    return logits


@torch.no_grad()
def greedy(model, src, out_len=None, src_mask=None):
    """Greedy decoding: the encoder runs once; each step appends the most probable token, never BOS.

    Every step re-runs the decoder over all tokens written so far (no cache): simple and exact.
    Returns (B, out_len) tokens, out_len defaulting to the input length (sorting keeps length).
    """
    out_len = src.shape[1] if out_len is None else out_len
    decode = model.decoding(model.encode(src, src_mask), src_mask)  # the decoder bound to this source
    y = torch.full((src.shape[0], 1), BOS, dtype=torch.long, device=src.device)
    for _ in range(out_len):
        logits = never_bos(decode(y)[:, -1])  # (B, vocab): the last position
        y = torch.cat([y, logits.argmax(-1, keepdim=True)], dim=1)
    return y[:, 1:]


@torch.no_grad()
def greedy_cached(model, src, out_len=None, src_mask=None):
    """Greedy decoding with a key/value cache: the same tokens as `greedy`, one position per step.

    Cross-attention keys and values are computed once from the memory and each decoder layer keeps
    its self-attention keys and values, so step t costs O(t) instead of re-running all t positions.
    """
    out_len = src.shape[1] if out_len is None else out_len
    memory = model.encode(src, src_mask)
    cache = model.start_cache(memory, src_mask, steps=out_len)
    token = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)
    out = []
    for _ in range(out_len):
        logits = never_bos(model.decode_step(token, cache))  # (B, vocab)
        token = logits.argmax(-1)
        out.append(token)
    return torch.stack(out, dim=1)  # (B, out_len)


def length_penalty(length, alpha):
    """lp(Y) = ((5 + |Y|) / 6)^alpha (Wu et al., 2016); the paper uses alpha = 0.6."""
    return ((5 + length) / 6) ** alpha


@torch.no_grad()
def beam_search(model, src, beam_size=4, alpha=0.6, out_len=None, src_mask=None):
    """Beam search as the paper decodes (section 6.1: beam 4, length penalty alpha = 0.6).

    Keeps the `beam_size` best partial outputs by summed log-probability; at the end each score
    is divided by the length penalty lp(Y) = ((5 + |Y|) / 6)^alpha and the best is returned.
    Sorting fixes the output length to the input length (out_len; there is no end token), so every
    hypothesis has the same |Y|: the penalty divides every score by the same constant and cannot
    change the ranking. It is applied anyway, as the paper's decoder would. A beam of 1 is greedy.
    Returns (B, out_len) tokens.
    """
    out_len = src.shape[1] if out_len is None else out_len
    B, K = src.shape[0], beam_size
    memory = model.encode(src, src_mask)
    memory, mask = (None if x is None else x.repeat_interleave(K, dim=0) for x in (memory, src_mask))
    cache = model.start_cache(memory, mask, steps=out_len)  # memory: (B K, T_enc, d_model)
    # Every beam starts as BOS; only the first is live, so the first step does not pick duplicates.
    scores = torch.full((B, K), float("-inf"), device=src.device)
    scores[:, 0] = 0.0
    token = torch.full((B * K,), BOS, dtype=torch.long, device=src.device)
    history = torch.empty(B, K, 0, dtype=torch.long, device=src.device)
    first_row = torch.arange(B, device=src.device)[:, None] * K  # (B, 1)
    for _ in range(out_len):
        logits = never_bos(model.decode_step(token, cache))  # (B K, vocab)
        vocab = logits.shape[-1]
        total = scores[:, :, None] + logits.log_softmax(-1).view(B, K, vocab)  # (B, K, vocab)
        scores, best = total.view(B, K * vocab).topk(K, dim=1)  # (B, K), best first
        parent, token = best // vocab, best % vocab  # which hypothesis each extends, with what
        cache.reorder((first_row + parent).flatten())
        history = torch.cat([history.gather(1, parent[:, :, None].expand_as(history)), token[:, :, None]], 2)
        token = token.flatten()
    final = scores / length_penalty(out_len, alpha)  # the same divisor for every hypothesis
    return history[torch.arange(B, device=src.device), final.argmax(1)]


def shifted_targets(src):
    """The decoder's input under teacher forcing: BOS, then the sorted source shifted right."""
    return decoder_input(src.sort(-1).values)


@torch.no_grad()
def teacher_forced(model, src, tgt_in, src_mask=None):
    """Each position's most probable token when the decoder reads the correct answer so far."""
    return never_bos(model(src, tgt_in, src_mask)).argmax(-1)


def accuracy(pred, target):
    """(exact-sequence accuracy, per-digit accuracy) as fractions, over the last two dimensions
    (rows, T): two floats for one model's tokens, two lists for many models' (..., rows, T)."""
    correct = pred == target
    if correct.dim() == 2:
        return correct.all(1).float().mean().item(), correct.float().mean().item()
    return correct.all(-1).float().mean(-1).tolist(), correct.flatten(-2).float().mean(-1).tolist()


GREEDY = {"greedy": greedy_cached}  # what the study and the diagnosis decode with


def decode_set(model, source, batch_size, decoders=GREEDY, device="cpu"):
    """The one way a test set is decoded: each of `decoders` ({name: fn(model, src) -> tokens
    (..., B, T)}) on equal-length rows `source` (an int array (rows, T)), `batch_size` rows at a
    time, after seeding the test's random draws by its length (seed_test_draws). Returns {name:
    tokens (..., rows, T) on the CPU}; a model that decodes many seeds at once returns them ahead of
    the rows."""
    seed_test_draws(source.shape[1])
    out = {name: [] for name in decoders}
    for start in range(0, len(source), batch_size):
        src = torch.as_tensor(np.asarray(source[start : start + batch_size]), dtype=torch.long, device=device)
        for name, decode in decoders.items():
            out[name].append(decode(model, src).cpu())
    return {name: torch.cat(parts, dim=-2) for name, parts in out.items()}


def accuracy_by_length(model, tests, batch_size, device="cpu", decoders=GREEDY):
    """Every decoder's accuracy at every length of `tests` ({length: (sources, targets)}, int arrays
    (rows, length)): rows {decoder, length, seq_acc, digit_acc} in the order of `tests`, and the
    tokens decoded ({length: {decoder: tokens}}). `decoders` is one {name: fn} for every length, or
    a function of the length that gives it."""
    rows, decoded = [], {}
    for n, (source, target) in tests.items():
        chosen = decoders(n) if callable(decoders) else decoders
        decoded[n] = decode_set(model, source, batch_size, chosen, device)
        target_t = torch.as_tensor(np.asarray(target), dtype=torch.long)
        for name, pred in decoded[n].items():
            seq_acc, digit_acc = accuracy(pred, target_t)
            rows.append({"decoder": name, "length": n, "seq_acc": seq_acc, "digit_acc": digit_acc})
    return rows, decoded


def sorted_tests(sources):
    """{length: sources} as test sets {length: (sources, their sorted copies)}."""
    return {n: (source, np.sort(source, axis=1)) for n, source in sources.items()}

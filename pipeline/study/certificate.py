"""A certificate for every length, where the architecture allows one: each state a decoding step can
be in, checked once, instead of sampled inputs of each length.

Where the encoder and the decoder have no self-attention, no token carries a position (positions
`bos`) and every decoder layer's cross-attention is the owed count (`signed_owed`,
pipeline/study/owed_count.py), a decoding step is a function of two things alone: the token fed (BOS
or the digit just written) and, per digit, clamp(copies in the input - copies written, -1, 1). On a
correct decoding that is the token fed and the set of digits still owed: BOS with any non-empty set,
or a digit d with a non-empty set of digits >= d. That is 3,059 states, whatever the length.

The certificate checks each state on its shortest input (at most 11 digits): the step's logits, by
the path greedy decoding takes (the key/value cache), name the smallest owed digit, by a margin.
Induction on the steps then proves every length: the first step's state is in the set, a right
answer leads to the next state of a correct decoding, which is in the set again. That holds in exact
arithmetic. In float32 a long input's sums round otherwise than a short one's, so the certificate
also decodes long inputs (LONG_LENGTHS, every kind of the verdict) under teacher forcing and measures
each step's largest distance from its state's logits; a distance below half the smallest margin
cannot change an argmax (each logit moves by less than half the margin). A model is certified when
every state is right and that holds.
"""

import numpy as np
import torch

from pipeline.core.decoding import never_bos
from pipeline.study.options import attention_kinds
from pipeline.study.verdict_sets import verdict_set
from pipeline.tokens import BOS, DIGITS

LONG_LENGTHS = (100, 200)  # the long inputs whose steps are held against their states' logits
LONG_ROWS = 4  # rows of each kind at each of those lengths


def has_finite_state(config):
    """Whether a decoding step of `config`'s model is a function of the token fed and the owed digits
    alone (module docstring)."""
    encoder, decoder, cross = attention_kinds(config.attention)
    return config.positions == "bos" and (encoder, decoder, cross) == ("none", "none", "signed_owed")


def owed_sets(targets):
    """Each step's owed digits as a bit mask (rows, T): at step t, the digits of targets[:, t:]."""
    bits = np.left_shift(1, targets.astype(np.int64))
    return np.bitwise_or.accumulate(bits[:, ::-1], axis=1)[:, ::-1]


def fed_tokens(targets):
    """Each step's token fed (rows, T): BOS, then the target shifted right."""
    return np.concatenate([np.full((len(targets), 1), BOS), targets[:, :-1]], axis=1)


def reachable_states():
    """Every (token fed, owed digits as a bit mask) of a correct decoding, in a fixed order."""
    states = [(BOS, owed) for owed in range(1, 1 << DIGITS)]
    for fed in range(DIGITS):
        below = (1 << fed) - 1
        states += [(fed, owed) for owed in range(1, 1 << DIGITS) if not owed & below]
    return states


def smallest(owed):
    return (owed & -owed).bit_length() - 1


def shortest_input(fed, owed):
    """The shortest (source, tokens fed) in state (fed, owed): the owed digits once each, and the
    digit just written once more, which the decoder has fed after BOS."""
    digits = [q for q in range(DIGITS) if owed >> q & 1]
    if fed == BOS:
        return digits, [BOS]
    return sorted([*digits, fed]), [BOS, fed]


@torch.no_grad()
def forced_step_logits(model, src, fed):
    """The logits of greedy decoding's steps (B, T_fed, vocab, BOS ruled out) when the tokens `fed`
    (B, T_fed) are the ones written: the cached path greedy decoding takes."""
    cache = model.start_cache(model.encode(src), steps=fed.shape[1])
    return torch.stack([never_bos(model.decode_step(fed[:, t], cache)) for t in range(fed.shape[1])], 1)


def state_logits(model, states):
    """Each state's step logits on its shortest input (len(states), vocab), grouped by shape."""
    groups = {}
    for i, state in enumerate(states):
        src, fed = shortest_input(*state)
        groups.setdefault((len(src), len(fed)), []).append((i, src, fed))
    logits = torch.empty(len(states), BOS + 1)
    for members in groups.values():
        index, src, fed = zip(*members, strict=True)
        src, fed = (torch.tensor(list(x), dtype=torch.long) for x in (src, fed))
        logits[list(index)] = forced_step_logits(model, src, fed)[:, -1]
    return logits


def margins(logits, answers):
    """The answer's logit less the largest other digit's, per state."""
    digits = logits[:, :DIGITS].clone()
    right = digits.gather(1, answers[:, None])[:, 0]
    digits.scatter_(1, answers[:, None], float("-inf"))
    return right - digits.max(1).values


def long_inputs(kinds, seed):
    """{length: sources (rows, length)}: LONG_ROWS of each kind at each of LONG_LENGTHS."""
    return {
        n: np.concatenate([verdict_set(kind, n, LONG_ROWS, seed)[:LONG_ROWS] for kind in kinds])
        for n in LONG_LENGTHS
    }


def largest_distance(model, table, index, sources):
    """The largest distance of a long input's step logits from its state's (over the digits), and the
    states those inputs visit."""
    distance, visited = 0.0, set()
    for source in sources.values():
        targets = np.sort(source, axis=1)
        fed, owed = fed_tokens(targets), owed_sets(targets)
        src, fed_t = (torch.as_tensor(x, dtype=torch.long) for x in (source, fed))
        logits = forced_step_logits(model, src, fed_t)[..., :DIGITS]
        rows = torch.as_tensor(np.vectorize(lambda f, o: index[(int(f), int(o))])(fed, owed))
        distance = max(distance, (logits - table[rows][..., :DIGITS]).abs().max().item())
        visited |= set(rows.flatten().tolist())
    return distance, len(visited)


def certify(model, kinds, seed):
    """The certificate of one model whose step has a finite state: {states, wrong_states,
    smallest_margin, long_lengths, long_states, largest_distance, certified}."""
    states = reachable_states()
    table = state_logits(model, states)
    answers = torch.tensor([smallest(owed) for _, owed in states])
    margin = margins(table, answers)
    index = {state: i for i, state in enumerate(states)}
    distance, visited = largest_distance(model, table, index, long_inputs(kinds, seed))
    wrong = int((margin <= 0).sum())
    smallest_margin = margin.min().item()
    return {
        "states": len(states),
        "wrong_states": wrong,
        "smallest_margin": smallest_margin,
        "long_lengths": list(LONG_LENGTHS),
        "long_states": visited,
        "largest_distance": distance,
        "certified": wrong == 0 and 2 * distance < smallest_margin,
    }


def coverage(targets_by_length):
    """How many of the reachable states the training rows visit under teacher forcing, and which are
    missed ({length: sorted targets (rows, length)})."""
    reachable = set(reachable_states())
    visited = set()
    for targets in targets_by_length.values():
        fed, owed = fed_tokens(targets), owed_sets(targets)
        visited |= set(zip(fed.flatten().tolist(), owed.flatten().tolist(), strict=True))
    missed = sorted(reachable - visited)
    return {"states": len(reachable), "visited": len(reachable & visited), "missed": missed}

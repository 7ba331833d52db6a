"""How implementations are timed against each other: in turn, round by round, with the spread."""

import statistics
import time


def round_robin(names, rounds):
    """The order to run `names` in: `rounds` rounds of each name once, every other round reversed.
    Load from other work comes and goes within seconds; taking turns spreads it over all of them
    alike, and reversing stops going first or last from favouring any one."""
    names = list(names)
    for number in range(rounds):
        yield from names if number % 2 == 0 else reversed(names)


def interleaved(runs, rounds):
    """Seconds of every timed call of each of `runs` ({name: fn}), taken in turn (round_robin),
    after one untimed warm-up call of each; and each fn's result of that warm-up call."""
    results = {name: fn() for name, fn in runs.items()}
    seconds = {name: [] for name in runs}
    for name in round_robin(runs, rounds):
        start = time.perf_counter()
        runs[name]()
        seconds[name].append(time.perf_counter() - start)
    return seconds, results


def spread(values):
    """(first quartile, median, third quartile) of `values`. Inclusive quartiles stay within the
    values measured, which matters for the few rounds of a quick run; one value is its own spread."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def spread_ms(values):
    """`spread` of durations in seconds, as {"median_ms", "q1_ms", "q3_ms"}."""
    q1, median, q3 = spread(values)
    return {"median_ms": 1e3 * median, "q1_ms": 1e3 * q1, "q3_ms": 1e3 * q3}

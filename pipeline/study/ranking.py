"""The bar and how the study's variants rank against it: by how far from the bar's first length they
sort at the bar, then by their worst accuracy on the bar's lengths. Pure functions of the study's
flat metrics and study.bar."""

from pipeline.core.params import BarParams


def bar_key(name):
    """A metric over the bar's lengths, named without them ("min_seq_acc" -> "bar_min_seq_acc"), so that
    `dvc exp show` keeps one column for it when study.bar changes."""
    return f"bar_{name}"


def bar_lengths(bar):
    low, high = bar.lengths
    return range(low, high + 1)


def standing(metrics, variant, bar):
    """The key to rank by: the lengths the variant sorts at the bar, then its worst accuracy on the
    bar's lengths."""
    return metrics[f"{variant}_bar_up_to_length"], metrics[f"{variant}_{bar_key('min_seq_acc')}"]


def best_variant(metrics, variants, bar):
    return max(variants, key=lambda v: standing(metrics, v, bar))


def recorded_bar(record):
    """The bar as the study recorded it ({accuracy, lengths, seed_floor, ...}), for the functions
    above."""
    return BarParams(
        accuracy=record["accuracy"],
        lengths=tuple(record["lengths"]),
        seed_floor=record["seed_floor"],
        min_seeds=record.get("min_seeds", 1),  # the search's rows recorded before the bar counted seeds
    )

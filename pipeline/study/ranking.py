"""The bar and how the study's variants rank against it: by how far from the bar's first length they
sort at the bar, then by their worst accuracy on the bar's lengths. Pure functions of the study's
bar table (metrics/study/bar.csv) and study.bar."""


def bar_lengths(bar):
    low, high = bar.lengths
    return range(low, high + 1)


def standing(row):
    """The key to rank by, from a variant's row of the study's bar table: the lengths it sorts at the
    bar, then its worst accuracy on the bar's lengths."""
    return row["bar_up_to_length"], row["bar_min_seq_acc"]


def best_variant(by_variant, variants):
    """The best of `variants`, from {variant: its row of the bar table}."""
    return max(variants, key=lambda v: standing(by_variant[v]))

"""How the study's variants rank: by how far from length 1 they sort at the bar, then by their worst
accuracy on the bar's lengths. Pure functions of the study's flat metrics."""


def standing(metrics, variant):
    """The key to rank by: the lengths from 1 the variant sorts at the bar, then its worst accuracy
    on the bar's lengths."""
    return metrics[f"{variant}_bar_up_to_length"], metrics[f"{variant}_min_seq_acc_1_20"]


def best_variant(metrics, variants):
    return max(variants, key=lambda v: standing(metrics, v))

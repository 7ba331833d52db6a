"""Seeded sorting datasets (lesson 10, "ordenar 10 dígitos").

Sources are uniform random digits; the target is the sorted source. Training sequences are
drawn once and split into the batches of every training seed (each seed reads its own order);
test sets hold `test_size` sequences per length, redrawn wherever a row also occurs in training.
Sequences shorter than the longest are right-padded with 0 and carry their length.
"""

import zipfile

import numpy as np

from pipeline.infra.errors import DataError
from pipeline.params.sections import DataParams
from pipeline.tokens import DIGITS

# the lengths the drawn training set holds: «Lo que nunca vio son secuencias de ese largo»
HEADLINE = (
    "train_size",
    "train_unique",
    "train_lengths_seen",
    "test_overlap_total",
)  # the rest: by_length.csv
# each test set's statistics: the overlap with training before and after the redraw, and how often
# the sorted output starts with 0 and ends with 9
BY_LENGTH = ["length", "overlap_drawn", "overlap", "starts_with_0", "ends_with_9"]


def random_sources(rng, size, lengths):
    """(size, max(lengths)) int8 digits, right-padded with 0, and each row's length."""
    row_lengths = np.resize(np.asarray(lengths), size)  # lengths in equal shares, then shuffled
    rng.shuffle(row_lengths)
    source = rng.integers(0, DIGITS, size=(size, max(lengths)), dtype=np.int8)
    source[np.arange(max(lengths)) >= row_lengths[:, None]] = 0
    return source, row_lengths.astype(np.int16)


def sorted_targets(source, lengths):
    """The target of each row: its first `length` digits sorted, padding left as 0."""
    padded = np.where(np.arange(source.shape[1]) < lengths[:, None], source, DIGITS)
    return np.where(padded == DIGITS, 0, np.sort(padded, axis=1)).astype(np.int8)


def row_keys(source, lengths):
    """A hashable key per row (its length and real digits) to compare datasets."""
    return [row[:n].tobytes() for row, n in zip(source, lengths, strict=True)]


def draw_test_set(rng, size, length, train_keys):
    """`size` sequences of one length, none of them in training while the space allows.

    Returns the sources, how many first draws were found in training, and how many remain.
    """
    source, lengths = random_sources(rng, size, [length])
    first_overlap = remaining = sum(k in train_keys for k in row_keys(source, lengths))
    for _ in range(100):  # resample rows seen in training; gives up only if the space is exhausted
        seen = np.array([k in train_keys for k in row_keys(source, lengths)])
        remaining = int(seen.sum())
        if remaining == 0:
            break
        source[seen] = rng.integers(0, DIGITS, size=(remaining, length), dtype=np.int8)
    return source, first_overlap, remaining


def make_datasets(p: DataParams):
    """Training set, test sets ({length: (sources, targets)}), and their statistics: the headline
    counts, and `by_length`, one row per test length (metrics/data/by_length.csv)."""
    train_src, train_len = random_sources(np.random.default_rng([p.seed, 0]), p.train_size, p.train_lengths)
    train_keys = set(row_keys(train_src, train_len))
    test, by_length = {}, []
    for length in p.test_lengths:
        rng = np.random.default_rng([p.seed, 1, length])  # one stream per length: stable subsets
        source, first_overlap, overlap = draw_test_set(rng, p.test_size, length, train_keys)
        target = sorted_targets(source, np.full(len(source), length))
        test[length] = source, target
        by_length.append(
            {
                "length": length,
                "overlap_drawn": first_overlap,
                "overlap": overlap,
                # The lesson's guess about habits: how often a sorted output starts with 0 / ends with 9.
                "starts_with_0": float(np.mean(target[:, 0] == 0)),
                "ends_with_9": float(np.mean(target[:, -1] == DIGITS - 1)),
            }
        )
    train = {"source": train_src, "lengths": train_len, "target": sorted_targets(train_src, train_len)}
    stats = {
        "train_size": p.train_size,
        "train_unique": len(train_keys),
        "train_lengths_seen": sorted({int(n) for n in np.unique(train_len)}),
        "test_overlap_total": sum(row["overlap"] for row in by_length),
        "by_length": by_length,
    }
    return train, test, stats


def synthetic_rows(rows, length, seed=0):
    """Training rows as the data stage draws them (uniform digits, sorted targets), all one length:
    what the speed measures and the numerics tools train and decode on."""
    source, lengths = random_sources(np.random.default_rng([seed, 9]), rows, [length])
    return {"source": source, "target": sorted_targets(source, lengths), "lengths": lengths}


# ----------------------------------------------------------------- the test sets' file, one layout


def arrays_of_test_sets(tests):
    """{length: (sources, targets)} as a test-set file's arrays, source_<n> and target_<n> per length
    in order (the layout read_test_sets reads)."""
    arrays = {}
    for n, (source, target) in tests.items():
        arrays[f"source_{n}"], arrays[f"target_{n}"] = source, target
    return arrays


def read_test_sets(path, lengths=None):
    """{length: (sources, targets)} of a test-set file, for `lengths` (default: every length it
    holds), or one clear error naming what is missing."""
    held = sorted(int(k.removeprefix("source_")) for k in load_npz(path) if k.startswith("source_"))
    lengths = held if lengths is None else list(lengths)
    arrays = load_npz(path, [f"{kind}_{n}" for n in lengths for kind in ("source", "target")])
    return {n: (arrays[f"source_{n}"], arrays[f"target_{n}"]) for n in lengths}


def load_npz(path, keys=()):
    """Read a dataset file, with a clear error when it is missing, corrupt or incomplete."""
    try:
        with np.load(path) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except FileNotFoundError:
        raise DataError(f"{path} not found: run `dvc repro data` first") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise DataError(f"{path} is corrupt or truncated ({type(err).__name__}): regenerate it") from None
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise DataError(f"{path} lacks {', '.join(missing)}: regenerate it with `dvc repro data`")
    return arrays

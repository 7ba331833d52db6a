import numpy as np

from pipeline.core.data import (
    arrays_of_test_sets,
    make_datasets,
    random_sources,
    read_test_sets,
    row_keys,
    sorted_targets,
)
from tests.conftest import data_params


def test_targets_are_the_sorted_sources():
    train, test, _ = make_datasets(data_params(train_size=500, test_size=50))
    for src, tgt, n in zip(train["source"], train["target"], train["lengths"], strict=True):
        assert tgt[:n].tolist() == sorted(src[:n].tolist())
    for n in (6, 8, 10, 12, 14):
        for src, tgt in zip(*test[n], strict=True):
            assert tgt.tolist() == sorted(src.tolist()) and len(src) == n


def test_padded_rows_sort_only_their_real_digits():
    source = np.array([[3, 1, 2, 0, 0], [9, 8, 7, 6, 5]], dtype=np.int8)
    target = sorted_targets(source, np.array([3, 5]))
    assert target.tolist() == [[1, 2, 3, 0, 0], [5, 6, 7, 8, 9]]


def test_mixed_lengths_come_in_equal_shares():
    source, lengths = random_sources(np.random.default_rng(0), 300, [2, 4, 6])
    assert sorted(np.bincount(lengths)[[2, 4, 6]]) == [100, 100, 100]
    assert (source[lengths == 2][:, 2:] == 0).all()


def test_same_seed_same_bytes_other_seed_other_data():
    a, b, c = (make_datasets(data_params(train_size=300, test_size=30, seed=s)) for s in (0, 0, 1))
    assert a[0]["source"].tobytes() == b[0]["source"].tobytes()
    assert a[1][10][0].tobytes() == b[1][10][0].tobytes()
    assert a[0]["source"].tobytes() != c[0]["source"].tobytes()


def test_test_sets_are_disjoint_from_training_even_when_the_space_is_small():
    # Length 3 has only 1,000 sequences: a 600-row training set forces many redraws.
    p = data_params(train_lengths=(3,), train_size=600, test_lengths=(3,), test_size=100, seed=0)
    train, test, stats = make_datasets(p)
    train_keys = set(row_keys(train["source"], train["lengths"]))
    test_keys = row_keys(test[3][0], np.full(100, 3))
    (row,) = stats["by_length"]
    assert row["overlap_drawn"] > 0  # the first draw did collide
    assert row["overlap"] == 0 and stats["test_overlap_total"] == 0 and not train_keys & set(test_keys)


def test_adding_a_test_length_leaves_the_others_unchanged():
    a = make_datasets(data_params(train_size=200, test_lengths=(6, 10), test_size=20))[1]
    b = make_datasets(data_params(train_size=200, test_lengths=(6, 8, 10), test_size=20))[1]
    assert a[10][0].tobytes() == b[10][0].tobytes()


def test_start_with_zero_statistic_is_near_the_lessons_two_in_three():
    _, _, stats = make_datasets(data_params(train_size=100, test_size=1000))
    exact = 1 - 0.9**10  # P(at least one 0 among ten digits) = 0.651
    (row,) = [r for r in stats["by_length"] if r["length"] == 10]
    assert abs(row["starts_with_0"] - exact) < 0.05
    assert abs(row["ends_with_9"] - exact) < 0.05


def test_truncated_or_incomplete_dataset_is_a_clear_error_naming_the_file(tmp_path):
    import pytest

    from pipeline.core.data import load_npz
    from pipeline.infra import files
    from pipeline.infra.errors import DataError

    files.write_npz(tmp_path / "d.npz", source=np.zeros((4, 3), dtype=np.int8))
    data = (tmp_path / "d.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="cut.npz is corrupt or truncated"):
        load_npz(tmp_path / "cut.npz")
    with pytest.raises(DataError, match="d.npz lacks target"):
        load_npz(tmp_path / "d.npz", ["source", "target"])
    with pytest.raises(DataError, match="nope.npz not found"):
        load_npz(tmp_path / "nope.npz")


def test_a_test_set_file_reads_back_as_written_and_names_a_length_it_lacks(tmp_path):
    import pytest

    from pipeline.infra import files
    from pipeline.infra.errors import DataError

    _, test, _ = make_datasets(data_params(train_size=200, test_lengths=(6, 10), test_size=20))
    files.write_npz(tmp_path / "test.npz", **arrays_of_test_sets(test))
    for lengths in (None, (10,)):
        back = read_test_sets(tmp_path / "test.npz", lengths)
        assert list(back) == list(lengths or test)
        for n, arrays in back.items():
            assert [a.tobytes() for a in arrays] == [a.tobytes() for a in test[n]]
    with pytest.raises(DataError, match="test.npz lacks source_8, target_8"):
        read_test_sets(tmp_path / "test.npz", (6, 8))


def test_the_lengths_the_training_set_holds_are_counted_from_it():
    """«Lo que nunca vio son secuencias de ese largo»: the training set's lengths, read from the rows."""
    _, _, stats = make_datasets(data_params(train_size=300, test_size=10))
    assert stats["train_lengths_seen"] == [10]
    _, _, mixed = make_datasets(data_params(train_lengths=(3, 5), train_size=300, test_size=10))
    assert mixed["train_lengths_seen"] == [3, 5]

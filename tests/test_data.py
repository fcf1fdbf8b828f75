"""The synthetic data sets (seeded, the right shapes, and the shapes they promise),
mini-batches, and scikit-learn's digits split by class."""


import numpy as np
import pytest

from chainrule.data import (
    batches,
    load_digits_split,
    make_blobs,
    make_circles,
    make_moons,
    make_spirals,
    make_toy_regression,
)
from chainrule.data.synthetic import toy_target


def test_moons_shapes_and_labels():
    X, y = make_moons(100, noise=0.1, seed=0)
    assert X.shape == (100, 2) and y.shape == (100,)
    assert sorted(np.unique(y).tolist()) == [0, 1]
    assert (y == 0).sum() == 50 and (y == 1).sum() == 50


def test_moons_without_noise_lie_on_two_half_circles():
    """Upper moon: unit half circle around (0, 0); lower moon: around (1, 0.5), flipped."""
    X, y = make_moons(101, noise=0.0, seed=3)
    upper, lower = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.hypot(upper[:, 0], upper[:, 1]), 1.0, atol=1e-12)
    assert (upper[:, 1] >= -1e-12).all()
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1.0, lower[:, 1] - 0.5), 1.0, atol=1e-12)
    assert (lower[:, 1] <= 0.5 + 1e-12).all()
    assert len(upper) == 50 and len(lower) == 51


def test_moons_same_seed_same_points_other_seed_other_points():
    a, b, c = make_moons(50, seed=7), make_moons(50, seed=7), make_moons(50, seed=8)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_moons_noise_has_the_requested_scale():
    clean, _ = make_moons(2000, noise=0.0, seed=1)
    noisy, _ = make_moons(2000, noise=0.1, seed=1)
    assert abs(np.std(noisy - clean) - 0.1) < 0.01


def test_moons_accepts_a_generator_and_refuses_too_few_points():
    X, _ = make_moons(10, seed=np.random.default_rng(0))
    assert X.shape == (10, 2)
    with pytest.raises(ValueError, match="n_samples"):
        make_moons(1)


def test_toy_regression_is_the_target_function_and_non_negative():
    X, y = make_toy_regression(64, seed=0)
    assert X.shape == (64, 2) and y.shape == (64,)
    assert (np.abs(X) <= 1.5).all()
    np.testing.assert_array_equal(y, toy_target(X))
    assert (y >= 0).all()
    assert toy_target(np.array([0.0, 0.0])) == pytest.approx(1.0)


# --- circles, blobs, spirals ---------------------------------------------------------

def _same_data(a, b):
    return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_circles_shapes_labels_and_balance():
    X, y = make_circles(101, seed=0)
    assert X.shape == (101, 2) and y.shape == (101,) and y.dtype == np.int64
    assert (y == 0).sum() == 51 and (y == 1).sum() == 50


def test_circles_without_noise_lie_on_radii_one_and_factor():
    X, y = make_circles(200, noise=0.0, factor=0.3, seed=1)
    radius = np.hypot(X[:, 0], X[:, 1])
    np.testing.assert_allclose(radius[y == 0], 1.0, atol=1e-12)
    np.testing.assert_allclose(radius[y == 1], 0.3, atol=1e-12)
    # evenly spread in angle: the mean of each circle is its centre
    np.testing.assert_allclose(X[y == 0].mean(axis=0), 0.0, atol=1e-12)


def test_circles_seeded_and_checked():
    assert _same_data(make_circles(50, seed=4), make_circles(50, seed=4))
    assert not _same_data(make_circles(50, seed=4), make_circles(50, seed=5))
    with pytest.raises(ValueError, match="factor"):
        make_circles(10, factor=1.0)
    with pytest.raises(ValueError, match="n_samples"):
        make_circles(1)
    with pytest.raises(ValueError, match="noise"):
        make_circles(10, noise=-0.1)


def test_blobs_shapes_labels_and_balance():
    X, y = make_blobs(100, centers=3, n_features=4, seed=0)
    assert X.shape == (100, 4) and y.shape == (100,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [34, 33, 33]


def test_blobs_cluster_around_given_centres_with_given_spread():
    centres = np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 20.0]])
    X, y = make_blobs(3000, centers=centres, cluster_std=[0.5, 1.0, 2.0], seed=2)
    for k, std in enumerate([0.5, 1.0, 2.0]):
        members = X[y == k]
        np.testing.assert_allclose(members.mean(axis=0), centres[k], atol=0.2)
        np.testing.assert_allclose(members.std(axis=0), std, rtol=0.1)


def test_blobs_seeded_and_checked():
    assert _same_data(make_blobs(60, seed=3), make_blobs(60, seed=3))
    assert not _same_data(make_blobs(60, seed=3), make_blobs(60, seed=4))
    with pytest.raises(ValueError, match="cluster_std"):
        make_blobs(10, centers=3, cluster_std=[1.0, 2.0])
    with pytest.raises(ValueError, match="centers"):
        make_blobs(10, centers=0)
    with pytest.raises(ValueError, match="n_samples"):
        make_blobs(2, centers=3)


def test_spirals_shapes_labels_and_balance():
    X, y = make_spirals(300, n_classes=3, seed=0)
    assert X.shape == (300, 2) and y.shape == (300,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [100, 100, 100]


def test_spirals_without_noise_follow_their_arm():
    """Arm k: radius r in (0, 1] and angle 2 pi (turns r + k / n_classes), modulo 2 pi."""
    turns, n_classes = 1.5, 3
    X, y = make_spirals(301, n_classes=n_classes, noise=0.0, turns=turns, seed=5)
    r = np.hypot(X[:, 0], X[:, 1])
    assert (r > 0).all() and (r <= 1 + 1e-12).all() and r.max() == pytest.approx(1.0)
    expected = 2 * np.pi * (turns * r + y / n_classes)
    gap = np.angle(np.exp(1j * (np.arctan2(X[:, 1], X[:, 0]) - expected)))
    np.testing.assert_allclose(gap, 0.0, atol=1e-9)


def test_spirals_seeded_and_checked():
    assert _same_data(make_spirals(40, seed=1), make_spirals(40, seed=1))
    assert not _same_data(make_spirals(40, seed=1), make_spirals(40, seed=2))
    with pytest.raises(ValueError, match="n_classes"):
        make_spirals(10, n_classes=0)
    with pytest.raises(ValueError, match="turns"):
        make_spirals(10, turns=0)


# --- batches ---------------------------------------------------------------------------

def test_batches_cover_every_row_once_in_order_without_shuffle():
    X, y = np.arange(20).reshape(10, 2), np.arange(10)
    got = list(batches(X, y, 4, shuffle=False))
    assert [len(b[1]) for b in got] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([b[0] for b in got]), X)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in got]), y)


def test_batches_shuffle_keeps_pairs_and_is_seeded():
    X, y = np.arange(50)[:, None] * 10, np.arange(50)
    first = list(batches(X, y, 8, seed=3))
    for xb, yb in first:
        np.testing.assert_array_equal(xb[:, 0], yb * 10)  # rows stay with their labels
    order = np.concatenate([yb for _, yb in first])
    assert sorted(order.tolist()) == list(range(50)) and not np.array_equal(order, y)
    again = np.concatenate([yb for _, yb in batches(X, y, 8, seed=3)])
    other = np.concatenate([yb for _, yb in batches(X, y, 8, seed=4)])
    np.testing.assert_array_equal(order, again)
    assert not np.array_equal(order, other)


def test_batches_with_one_generator_reshuffle_each_epoch():
    X, y = np.zeros((30, 1)), np.arange(30)
    rng = np.random.default_rng(0)
    epoch1 = np.concatenate([yb for _, yb in batches(X, y, 7, seed=rng)])
    epoch2 = np.concatenate([yb for _, yb in batches(X, y, 7, seed=rng)])
    assert not np.array_equal(epoch1, epoch2)


def test_batches_drop_last():
    X, y = np.zeros((10, 3)), np.zeros(10)
    assert [len(yb) for _, yb in batches(X, y, 4, drop_last=True, seed=0)] == [4, 4]
    assert [len(yb) for _, yb in batches(X, y, 5, drop_last=True, seed=0)] == [5, 5]
    assert list(batches(X, y, 11, drop_last=True)) == []


def test_batches_check_their_arguments_at_the_call():
    X, y = np.zeros((10, 2)), np.zeros(10)
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        batches(X, y, 0)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        batches(X, y, 2.5)
    with pytest.raises(ValueError, match="same number of rows, got 10 and 9"):
        batches(X, y[:9], 2)


# --- scikit-learn digits ---------------------------------------------------------------

def test_digits_split_shapes_range_and_strata():
    X_train, y_train, X_test, y_test = load_digits_split(seed=0, test_fraction=0.2)
    assert X_train.shape[1] == X_test.shape[1] == 64
    assert len(X_train) + len(X_test) == 1797 and len(y_train) == len(X_train)
    assert 350 <= len(X_test) <= 370
    assert X_train.dtype == np.float64 and y_train.dtype == np.int64
    assert X_train.min() == 0.0 and X_train.max() == 1.0 and X_test.max() <= 1.0
    counts_test, counts_all = np.bincount(y_test), np.bincount(np.concatenate([y_train, y_test]))
    # every class gives round(20%) of its images to the test part
    np.testing.assert_array_equal(counts_test, np.round(counts_all * 0.2).astype(int))
    assert not np.array_equal(y_train[:50], np.sort(y_train[:50]))  # shuffled


def test_digits_split_is_seeded_and_checked():
    a, b, c = load_digits_split(seed=1), load_digits_split(seed=1), load_digits_split(seed=2)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])
    with pytest.raises(ValueError, match="test_fraction"):
        load_digits_split(test_fraction=1.0)


def test_the_digits_match_scikit_learns():
    """The bundled file is scikit-learn's: the same images and labels."""
    datasets = pytest.importorskip("sklearn.datasets")
    from chainrule.data.digits import _digits_table
    digits = datasets.load_digits()
    np.testing.assert_array_equal(_digits_table()[:, :-1], digits.data)
    np.testing.assert_array_equal(_digits_table()[:, -1], digits.target)




def test_fetch_into_a_file_or_an_unmakeable_folder_says_so(tmp_path):
    """Not Python's "[Errno 17] File exists": the path, and what was expected."""
    from chainrule.data import FetchError, fetch_mnist
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(FetchError, match=r"a-file: is a file, expected a folder"):
        fetch_mnist(blocker, base_url="file:///nowhere/")
    with pytest.raises(FetchError, match=r"a-file/mnist: cannot make the folder: "):
        fetch_mnist(blocker / "mnist", base_url="file:///nowhere/")


# ---------------------------------------------------------------------------------------
# TensorDataset and DataLoader, against torch.utils.data's
# ---------------------------------------------------------------------------------------

def test_a_loader_cuts_batches_as_torchs_does():
    import torch
    from torch.utils.data import DataLoader as TorchLoader, TensorDataset as TorchDataset
    from chainrule.data import DataLoader, TensorDataset
    X, y = np.arange(14.0).reshape(7, 2), np.arange(7)
    for batch_size, drop_last in ((3, False), (3, True), (7, False), (10, True)):
        ours = DataLoader(TensorDataset(X, y), batch_size=batch_size, drop_last=drop_last)
        theirs = TorchLoader(TorchDataset(torch.tensor(X), torch.tensor(y)),
                             batch_size=batch_size, drop_last=drop_last)
        assert len(ours) == len(theirs)
        got = list(ours)
        assert len(got) == len(list(theirs))
        for (xb, yb), (txb, tyb) in zip(got, theirs):
            np.testing.assert_array_equal(xb, txb.numpy())
            np.testing.assert_array_equal(yb, tyb.numpy())


def test_shuffling_is_seeded_and_new_at_each_pass():
    from chainrule.data import DataLoader, TensorDataset
    data = TensorDataset(np.arange(20))
    first = [b.tolist() for b, in DataLoader(data, 6, shuffle=True, generator=3)]
    again = [b.tolist() for b, in DataLoader(data, 6, shuffle=True, generator=3)]
    assert first == again
    assert sorted(sum(first, [])) == list(range(20))
    loader = DataLoader(data, 6, shuffle=True, generator=3)
    passes = [[b.tolist() for b, in loader] for _ in range(2)]
    assert passes[0] == first and passes[1] != first
    rng = np.random.default_rng(5)  # a Generator advances: the caller's stream
    DataLoader(data, 6, shuffle=True, generator=rng)
    assert [b.tolist() for b, in DataLoader(data, 6, shuffle=True, generator=rng)] == \
        [b.tolist() for b, in DataLoader(data, 6, shuffle=True,
                                         generator=np.random.default_rng(5))]


def test_a_loader_over_samples_collates_as_torchs_default_collate():
    from torch.utils.data import default_collate
    from chainrule.data import DataLoader, collate
    samples = [{"x": np.full(2, float(i)), "y": i, "pair": (i, 2.0 * i)} for i in range(5)]
    ours = collate(samples)
    theirs = default_collate(samples)
    np.testing.assert_array_equal(ours["x"], theirs["x"].numpy())
    np.testing.assert_array_equal(ours["y"], theirs["y"].numpy())
    for a, b in zip(ours["pair"], theirs["pair"]):
        np.testing.assert_array_equal(a, b.numpy())
    batches = list(DataLoader(samples, batch_size=2))
    assert [b["y"].tolist() for b in batches] == [[0, 1], [2, 3], [4]]


def test_a_loader_over_tensors_keeps_the_gradient_flowing():
    import chainrule as cr
    from chainrule.data import DataLoader, TensorDataset, collate
    w = cr.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    total = sum(batch.sum() for batch, in DataLoader(TensorDataset(w), batch_size=2))
    total.backward()
    np.testing.assert_array_equal(w.grad, np.ones((3, 2)))
    v = cr.tensor(2.0, requires_grad=True)
    stacked = collate([v, 3 * v])
    stacked.sum().backward()
    assert v.grad == 4.0


def test_a_loader_refuses_what_torch_refuses_in_one_line():
    from chainrule.data import DataLoader, TensorDataset
    with pytest.raises(ValueError, match="DataLoader: batch_size must be a positive int, got 0"):
        DataLoader(TensorDataset(np.zeros(3)), batch_size=0)
    with pytest.raises(ValueError, match=r"TensorDataset: .* same number of rows, got shapes "
                                         r"\[\(3,\), \(4,\)\]"):
        TensorDataset(np.zeros(3), np.zeros(4))

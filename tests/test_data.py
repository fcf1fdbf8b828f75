"""The synthetic data sets: seeded, the right shapes, and the shapes they promise."""

import numpy as np
import pytest

from chainrule.data import make_moons, make_toy_regression
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

"""Synthetic data sets, generated from a seed: the same seed gives the same points."""

import numpy as np

__all__ = ["make_moons", "make_toy_regression", "toy_target"]


def _generator(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def make_moons(n_samples=100, noise=0.1, seed=None):
    """Two interleaving half circles in the plane, the set micrograd's demo learns.

    Returns ``(X, y)``: X of shape (n_samples, 2), y of 0s (upper moon) and 1s (lower
    moon), shuffled; Gaussian noise of standard deviation ``noise`` is added to X.
    ``seed`` is an int, None, or a ``numpy.random.Generator``.
    """
    if n_samples < 2:
        raise ValueError(f"make_moons: n_samples must be at least 2, got {n_samples}")
    rng = _generator(seed)
    n_upper = n_samples // 2
    n_lower = n_samples - n_upper
    t_upper = np.linspace(0.0, np.pi, n_upper)
    t_lower = np.linspace(0.0, np.pi, n_lower)
    upper = np.stack([np.cos(t_upper), np.sin(t_upper)], axis=1)
    lower = np.stack([1.0 - np.cos(t_lower), 0.5 - np.sin(t_lower)], axis=1)
    X = np.concatenate([upper, lower])
    y = np.concatenate([np.zeros(n_upper, dtype=np.int64), np.ones(n_lower, dtype=np.int64)])
    order = rng.permutation(n_samples)
    X, y = X[order], y[order]
    if noise:
        X = X + rng.normal(scale=noise, size=X.shape)
    return X, y


def toy_target(X):
    """The function the toy regression learns: a smooth bump, non-negative, of two inputs."""
    X = np.asarray(X, dtype=float)
    return np.exp(-(X[..., 0] ** 2 + X[..., 1] ** 2)) + 0.5 * np.sin(1.5 * X[..., 0]) ** 2


def make_toy_regression(n_samples=200, noise=0.0, seed=None):
    """Points ``X`` uniform on [-1.5, 1.5]^2 and ``y = toy_target(X)`` (+ optional noise)."""
    rng = _generator(seed)
    X = rng.uniform(-1.5, 1.5, size=(n_samples, 2))
    y = toy_target(X)
    if noise:
        y = y + rng.normal(scale=noise, size=y.shape)
    return X, y

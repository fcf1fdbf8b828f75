"""Synthetic data sets, generated from a seed: the same seed gives the same points."""

import numpy as np

from ._split import generator as _generator

__all__ = [
    "make_moons",
    "make_circles",
    "make_blobs",
    "make_spirals",
    "make_toy_regression",
    "toy_target",
]


def _shuffled_with_noise(parts, labels, noise, rng):
    """The classes' points joined, shuffled together, and moved by Gaussian noise."""
    X, y = np.concatenate(parts), np.concatenate(labels)
    order = rng.permutation(len(X))
    X, y = X[order], y[order]
    if noise:
        X = X + rng.normal(scale=noise, size=X.shape)
    return X, y


def make_moons(n_samples=100, noise=0.1, seed=None):
    """Two interleaving half circles in the plane, the set micrograd's demo learns.

    Returns ``(X, y)``: X of shape (n_samples, 2), y of 0s (upper moon) and 1s (lower
    moon), shuffled; Gaussian noise of standard deviation ``noise`` is added to X.
    ``seed`` is an int, None, or a ``numpy.random.Generator``.

    >>> from chainrule.data import make_moons
    >>> X, y = make_moons(100, noise=0.1, seed=0)
    >>> X.shape, y.shape, np.bincount(y).tolist()
    ((100, 2), (100,), [50, 50])
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


def _check_noise(name, noise):
    if noise < 0:
        raise ValueError(f"{name}: noise must be >= 0, got {noise}")


def _shares(n_samples, n_parts):
    """``n_samples`` cut into ``n_parts`` counts as equal as possible (the first get the extra)."""
    base, extra = divmod(n_samples, n_parts)
    return [base + (i < extra) for i in range(n_parts)]


def make_circles(n_samples=100, noise=0.05, factor=0.5, seed=None):
    """Two concentric circles: a set no straight line separates.

    Returns ``(X, y)``: X of shape (n_samples, 2), y of 0s (outer circle, radius 1) and 1s
    (inner circle, radius ``factor``), shuffled; the points are evenly spaced in angle and
    get Gaussian noise of standard deviation ``noise``. ``seed``: int, None or Generator.

    >>> from chainrule.data import make_circles
    >>> X, y = make_circles(6, noise=0.0, seed=0)
    >>> sorted(set(np.round(np.hypot(X[:, 0], X[:, 1]), 6).tolist()))   # the two radii
    [0.5, 1.0]
    """
    if n_samples < 2:
        raise ValueError(f"make_circles: n_samples must be at least 2, got {n_samples}")
    if not 0 < factor < 1:
        raise ValueError(f"make_circles: factor must be between 0 and 1 (exclusive), got {factor}")
    _check_noise("make_circles", noise)
    rng = _generator(seed)
    n_outer, n_inner = _shares(n_samples, 2)
    parts, labels = [], []
    for label, (n, radius) in enumerate([(n_outer, 1.0), (n_inner, factor)]):
        t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
        parts.append(radius * np.stack([np.cos(t), np.sin(t)], axis=1))
        labels.append(np.full(n, label, dtype=np.int64))
    return _shuffled_with_noise(parts, labels, noise, rng)


def make_blobs(n_samples=100, centers=3, n_features=2, cluster_std=1.0, seed=None):
    """Gaussian clusters, one per class, of (nearly) equal size.

    ``centers`` is a number of clusters, whose centres are drawn uniformly in
    [-10, 10]^n_features, or an array of shape (k, n_features) of the centres themselves.
    ``cluster_std`` is one standard deviation or one per cluster (length k).
    Returns ``(X, y)``: X of shape (n_samples, n_features), y in 0..k-1, shuffled.

    >>> from chainrule.data import make_blobs
    >>> X, y = make_blobs(6, centers=[[0.0, 0.0], [10.0, 10.0]], cluster_std=0.0, seed=0)
    >>> X.shape, np.bincount(y).tolist(), X[y == 1][0].tolist()   # std 0: the centres
    ((6, 2), [3, 3], [10.0, 10.0])
    """
    rng = _generator(seed)
    if np.ndim(centers) == 0:
        k = int(centers)
        if k < 1:
            raise ValueError(f"make_blobs: centers must be at least 1, got {centers}")
        if n_features < 1:
            raise ValueError(f"make_blobs: n_features must be at least 1, got {n_features}")
        means = rng.uniform(-10.0, 10.0, size=(k, n_features))
    else:
        means = np.asarray(centers, dtype=float)
        if means.ndim != 2 or len(means) == 0:
            raise ValueError(
                f"make_blobs: centers must be a count or an array of shape (k, n_features), "
                f"got shape {means.shape}"
            )
        k, n_features = means.shape
    stds = np.asarray(cluster_std, dtype=float)
    if stds.ndim == 0:
        stds = np.full(k, float(stds))
    if stds.shape != (k,):
        raise ValueError(
            f"make_blobs: cluster_std must be one number or {k} (one per center), "
            f"got shape {stds.shape}"
        )
    if (stds < 0).any():
        raise ValueError(f"make_blobs: cluster_std must be >= 0, got {cluster_std}")
    if n_samples < k:
        raise ValueError(f"make_blobs: n_samples must be at least centers={k}, got {n_samples}")
    y = np.repeat(np.arange(k, dtype=np.int64), _shares(n_samples, k))
    X = means[y] + rng.normal(size=(n_samples, n_features)) * stds[y, None]
    order = rng.permutation(n_samples)
    return X[order], y[order]


def make_spirals(n_samples=200, n_classes=2, noise=0.1, turns=1.5, seed=None):
    """Interleaved spiral arms, one per class, winding out from the origin.

    Arm ``k`` is the curve ``r = t``, ``angle = 2 pi (turns t + k / n_classes)`` for t in
    (0, 1]: the arms are rotated copies of one another, ``turns`` full turns long.
    Returns ``(X, y)``: X of shape (n_samples, 2), y in 0..n_classes-1 (nearly equal counts),
    shuffled; Gaussian noise of standard deviation ``noise`` is added to X.

    >>> from chainrule.data import make_spirals
    >>> X, y = make_spirals(300, n_classes=3, seed=0)
    >>> X.shape, np.bincount(y).tolist()
    ((300, 2), [100, 100, 100])
    """
    if n_classes < 1:
        raise ValueError(f"make_spirals: n_classes must be at least 1, got {n_classes}")
    if n_samples < n_classes:
        raise ValueError(
            f"make_spirals: n_samples must be at least n_classes={n_classes}, got {n_samples}"
        )
    if turns <= 0:
        raise ValueError(f"make_spirals: turns must be > 0, got {turns}")
    _check_noise("make_spirals", noise)
    rng = _generator(seed)
    parts, labels = [], []
    for label, n in enumerate(_shares(n_samples, n_classes)):
        t = np.linspace(0.0, 1.0, n + 1)[1:]  # not t = 0: every arm would share the origin
        angle = 2 * np.pi * (turns * t + label / n_classes)
        parts.append(t[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1))
        labels.append(np.full(n, label, dtype=np.int64))
    return _shuffled_with_noise(parts, labels, noise, rng)


def toy_target(X):
    """The function the toy regression learns: a smooth bump, non-negative, of two inputs.

    ``exp(-(x0**2 + x1**2)) + 0.5 * sin(1.5 * x0)**2``, for X of shape (..., 2).

    >>> from chainrule.data import toy_target
    >>> toy_target(np.array([[0.0, 0.0], [0.0, 10.0]])).round(6).tolist()
    [1.0, 0.0]
    """
    X = np.asarray(X, dtype=float)
    return np.exp(-(X[..., 0] ** 2 + X[..., 1] ** 2)) + 0.5 * np.sin(1.5 * X[..., 0]) ** 2


def make_toy_regression(n_samples=200, noise=0.0, seed=None):
    """Points ``X`` uniform on [-1.5, 1.5]^2 and ``y = toy_target(X)`` (+ optional noise).

    >>> from chainrule.data import make_toy_regression, toy_target
    >>> X, y = make_toy_regression(50, seed=0)
    >>> X.shape, y.shape, bool(np.allclose(y, toy_target(X)))
    ((50, 2), (50,), True)
    """
    rng = _generator(seed)
    X = rng.uniform(-1.5, 1.5, size=(n_samples, 2))
    y = toy_target(X)
    if noise:
        y = y + rng.normal(scale=noise, size=y.shape)
    return X, y

"""The data sets a training run takes, by name or from the caller's arrays, as the one
dict ``train`` reads: X_train, y_train, X_test, y_test, n_classes, image, regression.

>>> data = load_dataset("moons")
>>> data["X_train"].shape, data["n_classes"], data["X_test"] is None
((100, 2), 2, True)
"""

import numpy as np

from .. import data as datasets

__all__ = ["DATASETS", "as_dataset", "load_dataset"]

DATASETS = ("toy", "moons", "circles", "spirals", "digits", "mnist")


def as_dataset(X, y, X_test=None, y_test=None, n_classes=None, image=None,
               regression=False):
    """The dict ``train`` takes: X_train, y_train, X_test, y_test (None when the set
    reports training accuracy), n_classes, ``image`` (the side of a square image, or
    None) and ``regression``.

    >>> data = as_dataset([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    >>> data["n_classes"], data["X_train"].shape, data["regression"]
    (2, (2, 2), False)
    """
    X, y = np.asarray(X), np.asarray(y)
    if not np.issubdtype(X.dtype, np.floating):  # float32 and float64 stay as they are
        X = X.astype(float)
    if X.ndim != 2 or len(X) != len(y):
        raise ValueError(f"expected X of shape (n, features) and y of n labels, got X of "
                         f"shape {X.shape} and {len(y)} labels")
    if n_classes is None:
        n_classes = 1 if regression else int(np.max(y)) + 1
    return dict(X_train=X, y_train=y, X_test=X_test, y_test=y_test, n_classes=n_classes,
                image=image, regression=regression)


def load_dataset(name, seed=0, data_dir=""):
    """A data set by name, as ``as_dataset`` describes it; ``data_dir`` (MNIST only) holds
    the full set's IDX files."""
    if name == "toy":  # regression: one output, mean squared error
        return as_dataset(*datasets.make_toy_regression(64, seed=seed), regression=True)
    if name == "moons":
        return as_dataset(*datasets.make_moons(100, noise=0.1, seed=seed))
    if name == "circles":
        return as_dataset(*datasets.make_circles(200, noise=0.05, seed=seed))
    if name == "spirals":
        return as_dataset(*datasets.make_spirals(300, seed=seed))
    if name == "digits":
        X, y, Xt, yt = datasets.load_digits_split(seed=seed)
        return as_dataset(X, y, Xt, yt, n_classes=10, image=8)
    if name == "mnist":
        if data_dir:
            X, y, Xt, yt = datasets.load_mnist(data_dir)
        else:
            X, y, Xt, yt = datasets.load_mnist_subset(seed=seed)
        return as_dataset(X, y, Xt, yt, n_classes=10, image=28)
    raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}")

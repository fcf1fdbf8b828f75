"""Mini-batches of a data set, in a seeded random order."""

import numpy as np

from ._split import generator as _generator
from .datasets import TensorDataset
from .loader import DataLoader

__all__ = ["batches"]


def batches(X, y, batch_size, shuffle=True, seed=None, drop_last=False):
    """Iterate over ``(X_batch, y_batch)`` pairs covering ``X`` and ``y`` once (an epoch).

    ``X`` has shape (n, ...) and ``y`` shape (n, ...); each batch has ``batch_size``
    rows, the last one fewer unless ``drop_last`` drops it. With ``shuffle`` the rows come
    in a random order fixed by ``seed``: the same int gives the same order every time, so
    for a new order each epoch pass one ``numpy.random.Generator`` (it advances) or
    ``seed + epoch``. The arguments are checked at the call, not at the first batch.

    >>> from chainrule.data import batches
    >>> X, y = np.arange(10).reshape(5, 2), np.arange(5)
    >>> [y_batch.tolist() for X_batch, y_batch in batches(X, y, 2, shuffle=False)]
    [[0, 1], [2, 3], [4]]
    >>> [len(y_batch) for X_batch, y_batch in batches(X, y, 2, seed=0, drop_last=True)]
    [2, 2]
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(f"batches: batch_size must be an int, got {type(batch_size).__name__}")
    if batch_size < 1:
        raise ValueError(f"batches: batch_size must be at least 1, got {batch_size}")
    X, y = np.asarray(X), np.asarray(y)
    if X.ndim == 0 or y.ndim == 0:
        raise ValueError("batches: X and y must be arrays with one row per sample, got a scalar")
    if len(X) != len(y):
        raise ValueError(
            f"batches: X and y must have the same number of rows, got {len(X)} and {len(y)}"
        )
    return iter(DataLoader(TensorDataset(X, y), int(batch_size), shuffle=bool(shuffle),
                           drop_last=bool(drop_last), generator=_generator(seed)))

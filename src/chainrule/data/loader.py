"""PyTorch's data-loading spelling: a data set that indexes rows of arrays, and a loader
that cuts it into mini-batches, in a seeded random order.

    >>> from chainrule.data import DataLoader, TensorDataset
    >>> data = TensorDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
    >>> x, y = data[1]
    >>> len(data), x.tolist(), int(y)
    (5, [2.0, 3.0], 1)
    >>> [y.tolist() for x, y in DataLoader(data, batch_size=2)]
    [[0, 1], [2, 3], [4]]

A loader over a ``TensorDataset`` takes each batch's rows from the arrays at once (one
fancy index per array); over any other data set (a class with ``__len__`` and
``__getitem__``, or a list) it fetches the samples one by one and stacks them with
``collate``.
"""

import numpy as np

from ..rules import stack
from ..tensor import Tensor
from ._split import generator as _generator

__all__ = ["TensorDataset", "DataLoader", "collate"]


class TensorDataset:
    """Rows of arrays (or Tensors) with the same first dimension: sample ``i`` is the
    tuple of their rows ``i``.

    >>> from chainrule.data import TensorDataset
    >>> rows = TensorDataset(np.zeros((3, 2)), np.ones(3))[0:2]
    >>> [r.shape for r in rows]
    [(2, 2), (2,)]
    """

    def __init__(self, *arrays):
        if not arrays:
            raise ValueError("TensorDataset: give at least one array")
        self.arrays = tuple(a if isinstance(a, Tensor) else np.asarray(a) for a in arrays)
        lengths = [len(a) for a in self.arrays]
        if len(set(lengths)) > 1:
            shapes = [tuple(a.shape) for a in self.arrays]
            raise ValueError(f"TensorDataset: the arrays must have the same number of rows, "
                             f"got shapes {shapes}")

    def __len__(self):
        return len(self.arrays[0])

    def __getitem__(self, index):
        return tuple(a[index] for a in self.arrays)


def collate(samples):
    """One batch from a list of samples, stacked along a new first axis: a sample that is
    a tuple (or list) gives a tuple of stacks, a dict a dict of stacks, a number or an
    array one stack (a Tensor if any sample is one, so that a gradient can flow).

    >>> from chainrule.data import collate
    >>> collate([{"x": np.zeros(2), "y": 0}, {"x": np.ones(2), "y": 1}])["y"].tolist()
    [0, 1]
    """
    first = samples[0]
    if isinstance(first, (tuple, list)):
        return type(first)(collate([s[i] for s in samples]) for i in range(len(first)))
    if isinstance(first, dict):
        return {key: collate([s[key] for s in samples]) for key in first}
    if any(isinstance(s, Tensor) for s in samples):
        return stack(list(samples))
    return np.stack([np.asarray(s) for s in samples])


class DataLoader:
    """Mini-batches of a data set, as ``torch.utils.data.DataLoader``: ``batch_size`` rows
    each (the last one fewer unless ``drop_last``), in order, or with ``shuffle=True`` in
    a random order drawn afresh for each pass from ``generator`` (a seed or a
    ``numpy.random.Generator``: the same seed gives the same sequence of orders).
    ``collate_fn`` turns a list of samples into a batch (default: ``collate``).

    >>> from chainrule.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(np.arange(6)), batch_size=4, shuffle=True,
    ...                     generator=0)
    >>> len(loader), [batch.tolist() for batch, in loader]
    (2, [[3, 2, 5, 4], [0, 1]])
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False,
                 generator=None, collate_fn=None):
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last = shuffle, drop_last
        self.collate_fn = collate_fn
        self._rng = _generator(generator) if shuffle else None  # drawn from at each pass

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = self._rng.permutation(n) if self.shuffle else range(n)
        stop = n - n % self.batch_size if self.drop_last else n
        whole = isinstance(self.dataset, TensorDataset) and self.collate_fn is None
        for start in range(0, stop, self.batch_size):
            rows = order[start:start + self.batch_size]
            if whole:  # every array's rows at once (in order, a slice: views)
                yield self.dataset[rows if self.shuffle else slice(start, start + len(rows))]
            else:
                yield (self.collate_fn or collate)([self.dataset[int(i)] for i in rows])

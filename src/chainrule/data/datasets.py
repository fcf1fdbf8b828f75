"""PyTorch's map-style data sets: ``Dataset`` (the base class a user subclasses with
``__len__`` and ``__getitem__``), ``TensorDataset``, ``ConcatDataset`` (what ``+`` of
two data sets gives), ``Subset``, and ``random_split``.

    >>> from chainrule.data import Dataset, random_split
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 10
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> train, test = random_split(Squares(), [0.8, 0.2], generator=cr.Generator())
    >>> len(train), len(test), len(train + test)
    (8, 2, 10)
"""

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from ..tensor import Tensor
from .samplers import GeneratorLike, _permutation

__all__ = ["Dataset", "IterableDataset", "ChainDataset", "TensorDataset", "ConcatDataset",
           "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """torch.utils.data.Dataset: the base class of a map-style data set. A subclass
    defines ``__getitem__`` (sample ``i``) and ``__len__``; a ``DataLoader`` fetches the
    samples by index and collates them into batches. ``a + b`` is their
    ``ConcatDataset``.

    >>> from chainrule.data import DataLoader, Dataset
    >>> class Pairs(Dataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __len__(self):
    ...         return self.n
    ...     def __getitem__(self, i):
    ...         return cr.tensor([i, i + 1]).long(), i % 2
    >>> [(x.tolist(), y.tolist()) for x, y in DataLoader(Pairs(3), batch_size=2)]
    [([[0, 1], [1, 2]], [0, 1]), ([[2, 3]], [0])]
    """

    def __getitem__(self, index: int) -> T_co:
        raise NotImplementedError(f"{type(self).__name__}: a subclass of Dataset defines "
                                  f"__getitem__ (sample i) and __len__")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """torch.utils.data.IterableDataset: the base class of a data set that is a stream.
    A subclass defines ``__iter__`` (the samples, in order; ``__len__`` if it knows
    how many); a ``DataLoader`` iterates it once per pass and batches what comes,
    with no sampler: ``shuffle``, ``sampler`` and ``batch_sampler`` are refused, as
    torch refuses them. ``a + b`` is their ``ChainDataset``.

    >>> from chainrule.data import DataLoader, IterableDataset
    >>> class Countdown(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n, 0, -1))
    >>> [b.tolist() for b in DataLoader(Countdown(5), batch_size=2)]
    [[5, 4], [3, 2], [1]]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise TypeError(f"{type(self).__name__}: a subclass of IterableDataset defines "
                        f"__iter__, the samples in order")

    def __getitem__(self, index: int) -> T_co:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: its samples are "
                        f"read by iterating it, not by index")

    def __add__(self, other: "IterableDataset") -> "ChainDataset":
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """torch.utils.data.ChainDataset: the samples of several iterable data sets, one
    after the other; its length is the sum of theirs (when each has one).

    >>> from chainrule.data import ChainDataset
    >>> class Upto(cr.data.IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    ...     def __len__(self):
    ...         return self.n
    >>> both = Upto(2) + Upto(3)
    >>> type(both).__name__, list(both), len(both)
    ('ChainDataset', [0, 1, 0, 1, 2], 5)
    """

    def __init__(self, datasets: Iterable) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator:
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got "
                                f"{type(dataset).__name__}")
            yield from dataset

    def __len__(self) -> int:
        return sum(len(dataset) for dataset in self.datasets)


class TensorDataset(Dataset):
    """Rows of arrays (or Tensors) with the same first dimension: sample ``i`` is the
    tuple of their rows ``i``. Its arrays are ``.tensors`` (and ``.arrays``). A loader
    takes each batch's rows from every array at once, and gives them in the array's own
    kind: a Tensor's rows as a Tensor, an ndarray's as an ndarray (torch's TensorDataset
    holds only Tensors).

    >>> from chainrule.data import TensorDataset
    >>> rows = TensorDataset(np.zeros((3, 2)), np.ones(3))[0:2]
    >>> [r.shape for r in rows]
    [(2, 2), (2,)]
    """

    def __init__(self, *arrays: ArrayLike) -> None:
        if not arrays:
            raise ValueError("TensorDataset: give at least one array")
        self.arrays = tuple(a if isinstance(a, Tensor) else np.asarray(a) for a in arrays)
        lengths = [len(a) for a in self.arrays]
        if len(set(lengths)) > 1:
            shapes = [tuple(a.shape) for a in self.arrays]
            raise ValueError(f"TensorDataset: the arrays must have the same number of rows, "
                             f"got shapes {shapes}")

    @property
    def tensors(self) -> tuple:
        """The arrays, under torch's name."""
        return self.arrays

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, index: Any) -> tuple:
        return tuple(a[index] for a in self.arrays)


class ConcatDataset(Dataset):
    """torch.utils.data.ConcatDataset: data sets one after the other; ``a + b`` makes
    one. ``cumulative_sizes`` holds where each one ends.

    >>> from chainrule.data import ConcatDataset, TensorDataset
    >>> both = ConcatDataset([TensorDataset(np.arange(3)), TensorDataset(np.arange(10, 12))])
    >>> len(both), int(both[3][0]), int(both[-1][0]), both.cumulative_sizes
    (5, 10, 11, [3, 5])
    """

    def __init__(self, datasets: Iterable) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: expected at least one data set, got none")
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise IndexError(f"ConcatDataset: index {index} is out of range for "
                                 f"{len(self)} samples")
            index += len(self)
        k = bisect.bisect_right(self.cumulative_sizes, index)
        if k == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} is out of range for "
                             f"{len(self)} samples")
        start = self.cumulative_sizes[k - 1] if k else 0
        return self.datasets[k][index - start]


class Subset(Dataset):
    """torch.utils.data.Subset: the samples of ``dataset`` at ``indices``, in that order
    (``random_split`` gives these).

    >>> from chainrule.data import Subset, TensorDataset
    >>> part = Subset(TensorDataset(np.arange(10, 20)), [4, 0, 7])
    >>> len(part), [int(part[i][0]) for i in range(3)]
    (3, [14, 10, 17])
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        # a data set that fetches many samples at once (a __getitems__) keeps doing so
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: GeneratorLike = None) -> list[Subset]:
    """Split ``dataset`` at random into ``Subset``s of the given ``lengths``, or of the
    given fractions of it when they sum to 1: ``floor(fraction * n)`` each, the items
    left over handed out one at a time from the first part on (torch's rule).

    The order is a permutation drawn from ``generator`` (a ``cr.Generator``, a
    ``numpy.random.Generator`` or an int seed), by default from chainrule's default
    generator, which ``cr.manual_seed`` seeds.

    >>> from chainrule.data import random_split
    >>> parts = random_split(range(10), [0.5, 0.3, 0.2], generator=cr.Generator())
    >>> [len(p) for p in parts], sorted(i for p in parts for i in p)
    ([5, 3, 2], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    >>> [len(p) for p in random_split(range(5), [0.5, 0.5])]
    [3, 2]
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: the fraction at index {i} is {fraction}, "
                                 f"expected one between 0 and 1")
        sizes = [math.floor(n * fraction) for fraction in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: the split at index {i} is empty (0 of {n} "
                              f"samples)", stacklevel=2)
        lengths = sizes
    for length in lengths:
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) \
                or length < 0:
            raise ValueError(f"random_split: expected lengths that are non-negative ints or "
                             f"fractions summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {lengths} sum to {sum(lengths)}, "
                         f"expected the length of the data set, {n}")
    order = _permutation("random_split", generator, n).tolist()
    return [Subset(dataset, order[end - length:end])
            for end, length in zip(accumulate(lengths), lengths)]

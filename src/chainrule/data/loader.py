"""PyTorch's ``DataLoader``: mini-batches of a data set, in order or in a seeded random
order, and the functions that make a batch of samples (``default_collate``,
``default_convert``, and chainrule's ``collate``).

    >>> from chainrule.data import DataLoader, TensorDataset
    >>> data = TensorDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
    >>> x, y = data[1]
    >>> len(data), x.tolist(), int(y)
    (5, [2.0, 3.0], 1)
    >>> [y.tolist() for x, y in DataLoader(data, batch_size=2)]
    [[0, 1], [2, 3], [4]]

A loader over a ``TensorDataset`` (or a ``Subset`` of one) takes each batch's rows from
the arrays at once (one fancy index per array), and gives them in each array's kind;
over any other data set (a class with ``__len__`` and ``__getitem__``, or a list) it
fetches the samples one by one and stacks them with ``default_collate`` into Tensors.

Batches are made in this process: ``num_workers`` is accepted, and the batches are the
ones torch's workers would give in that order, but no process is started.
"""

import collections.abc
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..rules import stack
from ..tensor import Tensor
from .datasets import IterableDataset, Subset, TensorDataset
from .samplers import (BatchSampler, GeneratorLike, RandomSampler, Sampler,
                       SequentialSampler, _positive_int)

__all__ = ["DataLoader", "default_collate", "default_convert", "collate"]


def collate(samples: list) -> Any:
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




def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _numeric(name: str, array: np.ndarray) -> None:
    if array.dtype.kind in "OSUV":  # strings and objects do not stack into a Tensor
        raise TypeError(f"{name}: batch must contain tensors, numpy arrays, numbers, dicts "
                        f"or lists; found an array of dtype {array.dtype}")


def default_collate(batch: list) -> Any:
    """torch.utils.data.default_collate: a batch from a list of samples, stacked along a
    new first axis into Tensors. Tensors stack (differentiably, so a gradient flows back
    into the samples), ndarrays and NumPy scalars keep their dtype, Python ints give
    int64, floats float64, bools bool; strings stay a list. A tuple, list, named tuple
    or dict of such is collated entry by entry and keeps its kind (torch turns a tuple
    into a list).

    >>> from chainrule.data import default_collate
    >>> xs, ys = default_collate([(np.zeros(2), 0), (np.ones(2), 1)])
    >>> type(xs).__name__, xs.shape, ys.dtype
    ('Tensor', (2, 2), dtype('int64'))
    >>> default_collate([{"name": "ann", "age": 3.0}, {"name": "bob", "age": 4.0}])
    {'name': ['ann', 'bob'], 'age': tensor([3., 4.])}
    """
    first = batch[0]
    if isinstance(first, (Tensor, np.ndarray, np.generic)) and not isinstance(
            first, (np.str_, np.bytes_)):
        if any(isinstance(s, Tensor) for s in batch):
            return stack(list(batch))
        arrays = [np.asarray(s) for s in batch]
        for array in arrays:
            _numeric("default_collate", array)
        return Tensor._make(np.stack(arrays))
    if isinstance(first, bool):
        return Tensor._make(np.array(batch))  # (bool unless ints are mixed in, as torch)
    if isinstance(first, int):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(first, float):
        return Tensor._make(np.array(batch, dtype=np.float64))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        collated = {key: default_collate([s[key] for s in batch]) for key in first}
        try:
            return type(first)(collated)
        except TypeError:
            return collated
    if isinstance(first, collections.abc.Sequence):
        size = len(first)
        if any(len(s) != size for s in batch):
            raise RuntimeError(f"default_collate: each sequence in the batch must have the "
                               f"same length, got lengths {[len(s) for s in batch]}")
        columns = [default_collate(list(column)) for column in zip(*batch)]
        if _is_namedtuple(first):
            return type(first)(*columns)
        try:
            return type(first)(columns)
        except TypeError:
            return columns
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(first).__name__}")


def default_convert(data: Any) -> Any:
    """torch.utils.data.default_convert: one sample with its ndarrays and NumPy scalars
    made Tensors, inside tuples, lists and dicts too; what a loader with
    ``batch_size=None`` gives. Python numbers and strings stay as they are.

    >>> from chainrule.data import default_convert
    >>> default_convert({"x": np.arange(3), "n": 2})
    {'x': tensor([0, 1, 2]), 'n': 2}
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if np.asarray(data).dtype.kind in "OSUV":
            return data
        return Tensor._make(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(value) for key, value in data.items()}
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    return data


def _rows_of(dataset: Any) -> tuple[TensorDataset | None, np.ndarray | None]:
    """The TensorDataset under ``dataset`` (itself, or under Subsets) and the map from
    the loader's indices to its rows (None: the same)."""
    index_map = None
    while isinstance(dataset, Subset):
        mine = np.asarray(dataset.indices, dtype=np.int64)
        index_map = mine if index_map is None else mine[index_map]
        dataset = dataset.dataset
    return (dataset, index_map) if isinstance(dataset, TensorDataset) else (None, None)


class DataLoader:
    """torch.utils.data.DataLoader: mini-batches of a data set, with torch's arguments.

    Each pass draws the indices from ``sampler`` (by default in order, or with
    ``shuffle=True`` a ``RandomSampler`` on ``generator``) and groups them by
    ``batch_sampler`` (by default ``batch_size`` at a time, the last batch shorter
    unless ``drop_last``); ``collate_fn`` makes a batch from the samples
    (``default_collate``: Tensors). ``batch_size=None`` gives the samples one by one
    (through ``default_convert``). ``len(loader)`` is the number of batches. torch's
    combinations that contradict each other (``sampler`` with ``shuffle``,
    ``batch_sampler`` with ``batch_size``, ``shuffle``, ``sampler`` or ``drop_last``)
    are refused as torch refuses them.

    ``generator`` is a ``cr.Generator``, a ``numpy.random.Generator`` or an int seed;
    without one the order comes from chainrule's default generator (``cr.manual_seed``
    makes it repeatable). A ``TensorDataset`` (or a ``Subset`` of one) gives each array's
    rows at once, in the array's kind: ndarray rows stay ndarrays.

    An ``IterableDataset`` is read in its own order, once per pass, and batched as it
    comes (``shuffle``, ``sampler`` and ``batch_sampler`` refused, as torch refuses
    them); ``len(loader)`` needs its ``__len__``.

    ``num_workers > 0`` starts no processes: the batches are made here, and are the
    ones the workers would give. ``pin_memory``, ``pin_memory_device``, ``in_order``,
    and with workers ``persistent_workers``, ``prefetch_factor``, ``timeout`` and
    ``multiprocessing_context``, are accepted and change nothing (there is no device
    and no worker to wait for); torch's checks on them are kept. ``worker_init_fn`` is
    refused with workers, since no worker runs it.

    >>> from chainrule.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(np.arange(6)), batch_size=4, shuffle=True,
    ...                     generator=0)
    >>> len(loader), [batch.tolist() for batch, in loader]
    (2, [[3, 2, 5, 4], [0, 1]])
    >>> [b.tolist() for b in DataLoader([1, 2, 3], batch_size=2, num_workers=2)]
    [[1, 2], [3]]
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Iterable | None = None, batch_sampler: Iterable | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: GeneratorLike = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers,
                       worker_init_fn, multiprocessing_context)
        for name, given in (("sampler", sampler), ("batch_sampler", batch_sampler)):
            if given is not None and (isinstance(given, bool) or not hasattr(given, "__iter__")):
                raise TypeError(f"DataLoader: {name} must be a Sampler or an iterable of "
                                f"indices, got {type(given).__name__} {given!r}")
        if isinstance(dataset, IterableDataset):
            # a stream has no indices to order: torch refuses anything that would
            for name, given in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if given not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={given!r}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError(f"DataLoader: sampler option is mutually exclusive with shuffle "
                             f"(the sampler sets the order), got shuffle=True and sampler="
                             f"{type(sampler).__name__}")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(f"DataLoader: batch_sampler option is mutually exclusive with "
                                 f"batch_size, shuffle, sampler, and drop_last, got "
                                 f"batch_size={batch_size!r}, shuffle={shuffle}, sampler="
                                 f"{type(sampler).__name__}, drop_last={drop_last!r}")
            batch_size, drop_last = None, False
        elif batch_size is None:
            if drop_last:
                raise ValueError("DataLoader: batch_size=None option disables auto-batching "
                                 "and is mutually exclusive with drop_last, got drop_last=True")
        elif not _positive_int(batch_size):
            raise ValueError(f"DataLoader: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        if isinstance(dataset, IterableDataset):
            sampler = _InfiniteConstantSampler()
        elif sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, int(batch_size), bool(drop_last))
        self.dataset, self.shuffle = dataset, shuffle
        self.batch_size = None if batch_size is None else int(batch_size)
        self.drop_last, self.sampler, self.batch_sampler = drop_last, sampler, batch_sampler
        self.generator, self.num_workers = generator, num_workers
        self.collate_fn = collate_fn or (default_collate if self._auto_collation
                                         else default_convert)
        self._own_collate = collate_fn is None
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context, self.prefetch_factor = multiprocessing_context, \
            prefetch_factor
        self.persistent_workers, self.in_order = persistent_workers, in_order

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):  # (a TypeError if it has no length)
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self._auto_collation else self.sampler)

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self.dataset, IterableDataset):
            yield from self._stream()
            return
        rows, index_map = _rows_of(self.dataset) if self._own_collate else (None, None)
        if not self._auto_collation:
            for i in self.sampler:
                if rows is not None:  # a TensorDataset's rows, in their own kind
                    yield rows[i if index_map is None else int(index_map[i])]
                else:
                    yield self.collate_fn(self.dataset[i])
            return
        in_order = (index_map is None and type(self.batch_sampler) is BatchSampler
                    and self.batch_sampler.sampler is self.sampler
                    and type(self.sampler) is SequentialSampler)
        many = getattr(self.dataset, "__getitems__", None)
        for batch in self.batch_sampler:
            if rows is not None:
                if in_order and batch:  # consecutive rows: a slice, whose rows are views
                    yield rows[batch[0]:batch[0] + len(batch)]
                else:
                    index = np.asarray(batch, dtype=np.int64)
                    yield rows[index if index_map is None else index_map[index]]
            else:
                samples = many(batch) if callable(many) else [self.dataset[i] for i in batch]
                yield self.collate_fn(samples)


    def _stream(self) -> Iterator[Any]:
        """The batches of an IterableDataset: its samples, batch_size at a time (the last
        batch shorter unless drop_last), or one by one with batch_size=None."""
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)


class _InfiniteConstantSampler(Sampler):
    """torch's sampler of a loader over an IterableDataset: None, forever (the data set
    gives its samples in its own order)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _check_workers(num_workers: Any, timeout: Any, prefetch_factor: Any,
                   persistent_workers: Any, worker_init_fn: Any,
                   multiprocessing_context: Any) -> None:
    """torch's checks of the worker options, and the refusal of what would need a
    worker to run."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer)) \
            or num_workers < 0:
        raise ValueError(f"DataLoader: num_workers must be a non-negative int (0 loads in "
                         f"this process), got {num_workers!r}")
    if timeout < 0:
        raise ValueError(f"DataLoader: timeout option should be non-negative, got {timeout}")
    if num_workers == 0:
        if prefetch_factor is not None:
            raise ValueError(f"DataLoader: prefetch_factor option could only be specified "
                             f"with num_workers > 0, got prefetch_factor={prefetch_factor} "
                             f"and num_workers=0")
        if persistent_workers:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0, "
                             "got num_workers=0")
        if multiprocessing_context is not None:
            raise ValueError(f"DataLoader: multiprocessing_context can only be used with "
                             f"num_workers > 0, got num_workers=0 and "
                             f"{multiprocessing_context!r}")
        if timeout > 0:  # (torch's single-process iterator asserts timeout == 0)
            raise ValueError(f"DataLoader: timeout applies to workers and needs "
                             f"num_workers > 0, got timeout={timeout} and num_workers=0")
        return
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError(f"DataLoader: prefetch_factor option should be non-negative, got "
                         f"{prefetch_factor}")
    if worker_init_fn is not None:
        raise ValueError(f"DataLoader: worker_init_fn runs in worker processes, and "
                         f"chainrule starts none (num_workers={num_workers} loads in this "
                         f"process); drop worker_init_fn, or call it yourself")

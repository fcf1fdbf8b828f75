"""PyTorch's samplers: the orders in which a ``DataLoader`` visits a data set's indices
(``SequentialSampler``, ``RandomSampler``), the ``Sampler`` base class, and
``BatchSampler``, which groups indices into batches.

    >>> from chainrule.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6]]

A random sampler draws from its ``generator=``: a ``cr.Generator``, any
``numpy.random.Generator`` (both advance, so each pass has a new order), or an int seed
(a generator made from it once). Without one, each pass starts from a seed drawn from
chainrule's default generator, as torch's does from its own: after ``cr.manual_seed(n)``
the orders repeat from run to run, and other draws made during a pass do not change it.
"""

from collections.abc import Iterable, Iterator, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from ..api.torch_random import default_generator, multinomial

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)

# what generator= takes: a cr.Generator (or any NumPy Generator), an int seed, or None
GeneratorLike = np.random.Generator | int | None

_CHUNK = 32  # indices drawn at a time with replacement: num_samples may be 10**10


def _source(name: str, generator: GeneratorLike) -> np.random.Generator | None:
    """The NumPy generator a random order is drawn from (None: the default's, later)."""
    if generator is None or isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    raise TypeError(f"{name}: generator= must be a cr.Generator, a numpy.random.Generator "
                    f"or an int seed, got {type(generator).__name__}")


def _pass_generator(rng: np.random.Generator | None) -> np.random.Generator:
    """The generator one pass draws from: a seed from the default generator taken at the
    start of the pass, so that what else draws from it during the pass cannot change the
    order (torch's RandomSampler does the same)."""
    if rng is not None:
        return rng
    return np.random.default_rng(int(default_generator.integers(2 ** 63)))


def _permutation(name: str, generator: GeneratorLike, n: int) -> np.ndarray:
    rng = _source(name, generator)
    return (default_generator if rng is None else rng).permutation(n)


def _positive_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0


class Sampler(Generic[T_co]):
    """torch.utils.data.Sampler: the base class of an order of indices. A subclass
    defines ``__iter__`` (and ``__len__`` if it has one); a ``DataLoader`` takes it as
    ``sampler=``, or as ``batch_sampler=`` when it yields lists of indices.

    >>> from chainrule.data import DataLoader, Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> [b.tolist() for b in DataLoader(list(range(5)), batch_size=2, sampler=Backwards(5))]
    [[4, 3], [2, 1], [0]]
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass  # (torch's takes data_source and ignores it too)

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__}: a subclass of Sampler defines "
                                  f"__iter__")


class SequentialSampler(Sampler):
    """The indices of ``data_source`` in order: 0, 1, ..., len - 1.

    >>> from chainrule.data import SequentialSampler
    >>> list(SequentialSampler("abc")), len(SequentialSampler("abc"))
    ([0, 1, 2], 3)
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices of ``data_source`` in a random order, a new one at each pass:
    without ``replacement`` a permutation (``num_samples`` beyond the length takes
    further permutations), with it ``num_samples`` independent draws, made a few at a
    time, so ``num_samples=10**10`` is an endless stream. ``generator`` as the module
    says (a ``cr.Generator``, a NumPy Generator, an int seed, or the default
    generator's).

    >>> from chainrule.data import RandomSampler
    >>> g = cr.Generator().manual_seed(0)
    >>> sorted(RandomSampler(range(5), generator=g))
    [0, 1, 2, 3, 4]
    >>> draws = RandomSampler(range(5), replacement=True, num_samples=8, generator=g)
    >>> len(draws), len(list(draws)), all(0 <= i < 5 for i in draws)
    (8, 8, True)
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: GeneratorLike = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got "
                            f"replacement={replacement!r}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        self._rng = _source("RandomSampler", generator)
        if not _positive_int(self.num_samples):
            raise ValueError(f"RandomSampler: num_samples must be a positive int, got "
                             f"num_samples={self.num_samples!r}")

    @property
    def num_samples(self) -> int:
        """How many indices a pass yields: ``num_samples``, or the data set's length."""
        # the data set's length is read at each use: it may grow after the sampler is made
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        # the pass's generator is taken here, at iter(), not at the first index
        return self._indices(len(self.data_source), self.num_samples,
                             _pass_generator(self._rng))

    def _indices(self, n: int, total: int, rng: np.random.Generator) -> Iterator[int]:
        if self.replacement:
            for start in range(0, total, _CHUNK):
                yield from rng.integers(0, n, min(_CHUNK, total - start)).tolist()
        else:
            for _ in range(total // n):
                yield from rng.permutation(n).tolist()
            if total % n:  # (no draw when nothing is left: a pass takes one permutation)
                yield from rng.permutation(n)[:total % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn in proportion to ``weights`` (one per item of the
    data set, not necessarily summing to 1), anew at each pass, as torch's: with
    ``replacement`` (the default) independent draws, without it each index at most once
    (so num_samples may not exceed the number of weights). ``generator`` as the module
    says; without one the draws come from the default generator, as torch's from its
    own. The weights must be 1-d; a negative one, or all zero, is refused as
    ``cr.multinomial`` refuses it.

    >>> from chainrule.data import WeightedRandomSampler
    >>> g = cr.Generator().manual_seed(0)
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 6, generator=g))
    [3, 3, 1, 1, 3, 3]
    >>> sorted(WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False, generator=g))
    [0, 1, 2]
    """

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True,
                 generator: GeneratorLike = None) -> None:
        if not _positive_int(num_samples):
            raise ValueError(f"WeightedRandomSampler: num_samples should be a positive "
                             f"integer value, but got num_samples={num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement should be a boolean value, "
                             f"but got replacement={replacement!r}")
        array = np.asarray(getattr(weights, "data", weights), dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but "
                             f"given weights have shape {array.shape}")
        self.weights, self.num_samples = array, int(num_samples)
        self.replacement, self.generator = replacement, generator
        self._rng = _source("WeightedRandomSampler", generator)

    def __iter__(self) -> Iterator[int]:
        rng = default_generator if self._rng is None else self._rng
        drawn = multinomial(self.weights, self.num_samples, self.replacement, generator=rng)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (any iterable of indices), the
    last one shorter unless ``drop_last`` drops it.

    >>> from chainrule.data import BatchSampler
    >>> list(BatchSampler(range(7), 3, drop_last=True)), len(BatchSampler(range(7), 3, False))
    ([[0, 1, 2], [3, 4, 5]], 3)
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not _positive_int(batch_size):
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got "
                             f"batch_size={batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be a bool, got "
                             f"drop_last={drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

"""Lookup tables, as torch has them: ``embedding`` and ``Embedding`` (a row of the table
per index), ``embedding_bag`` and ``EmbeddingBag`` (the sum, mean or max of a bag of
rows per example, without the (bags, length, dim) array in between), with torch's
options: ``padding_idx`` (a row that gets no gradient; a bag leaves it out),
``max_norm`` (the rows looked up are first scaled in place to that norm at most),
``scale_grad_by_freq`` and ``from_pretrained``.

Lookups are ``take`` and bags are ``index_add`` / ``index_max`` of chainrule's table,
so gradients of every order, cr.vmap and cr.jit come from theirs.

>>> import chainrule.nn.functional as F
>>> table = cr.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
>>> F.embedding_bag(np.array([0, 2, 1]), table, np.array([0, 2])).data.tolist()
[[2.0, 3.0], [2.0, 3.0]]
"""

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from .. import rules as ops
from ..modes import no_grad
from ..primitive import Box, raw as _raw, shape_of
from ..rules.common import Result
from ..tensor import Tensor
from .construction import RNG, check_device, initial_generator
from .module import Module, Parameter

__all__ = ["embedding", "embedding_bag", "Embedding", "EmbeddingBag"]

BAG_MODES = ("sum", "mean", "max")


def unknown_values(indices) -> bool:
    """Whether raw indices are a transform's, whose numbers are not known here: a batch
    of cr.vmap (one set of indices per example) or cr.jit's traced array (other numbers
    at each replay). They index as they are, where eager ones are read and checked."""
    return isinstance(indices, Box) or (type(indices) is not np.ndarray
                                        and type(indices) in xp.ARRAYS)


def _indices(indices, name, rows):
    """Eager indices as an intp array checked against the table's ``rows``; a
    transform's as they are (their numbers are not known here)."""
    array = _raw(indices)
    if unknown_values(array):
        if array.dtype.kind not in "iu":
            raise TypeError(f"{name}: traced indices must be an int array, got dtype "
                            f"{array.dtype}")
        return array
    array = np.asarray(array)
    if array.dtype.kind not in "iu":
        # cr.tensor makes floats of ints: whole numbers are read as the indices
        if array.dtype.kind != "f" or not np.all(array == np.round(array)):
            raise TypeError(f"{name}: indices must be whole numbers (an int array), got "
                            f"dtype {array.dtype}")
    array = array.astype(np.intp)
    if array.size and (array.min() < 0 or array.max() >= rows):
        raise IndexError(f"{name}: indices must lie in [0, {rows}), got values from "
                         f"{array.min()} to {array.max()}")
    return array


def _padding_index(padding_idx, rows, name):
    if padding_idx is None:
        return None
    if not isinstance(padding_idx, Integral) or not -rows <= padding_idx < rows:
        raise ValueError(f"{name}: padding_idx must be an int in [-{rows}, {rows}), got "
                         f"{padding_idx!r}")
    return int(padding_idx) % rows  # torch counts -1 as the last row


def _renormalise(weight, indices, max_norm, norm_type, name):
    """torch's max_norm: the rows at ``indices`` whose ``norm_type``-norm exceeds
    ``max_norm`` scaled in place (outside the graph) to max_norm / (norm + 1e-7)."""
    if unknown_values(indices):
        raise ValueError(f"{name}: max_norm rescales the table's rows in place, which "
                         f"traced indices (cr.jit, cr.vmap) cannot name; pass "
                         f"max_norm=None there")
    data = weight.data if isinstance(weight, Tensor) else weight
    if not isinstance(data, np.ndarray):
        raise TypeError(f"{name}: max_norm writes into the table, so it must be a Tensor "
                        f"or an ndarray, got {type(weight).__name__}")
    rows = np.unique(indices)
    if not data.flags.writeable:
        raise ValueError(f"{name}: max_norm rescales the table's rows in place, but a graph "
                         f"not yet run backward still needs the table's numbers; call "
                         f"backward first, or look up before the other use, as in torch")
    norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    with no_grad():
        data[rows[over]] *= (max_norm / (norms[over] + 1e-7))[:, None].astype(data.dtype)


def _scaled_by_frequency(rows, indices, name):
    """rows with their gradient divided by how often their index occurs in ``indices``
    (torch's scale_grad_by_freq): the same numbers, a rescaled gradient."""
    if unknown_values(indices):
        raise ValueError(f"{name}: scale_grad_by_freq counts the indices, which traced "
                         f"indices (cr.jit, cr.vmap) cannot; pass scale_grad_by_freq=False")
    _, inverse, counts = np.unique(indices, return_inverse=True, return_counts=True)
    frequency = counts[inverse].reshape(np.shape(indices) + (1,)).astype(rows.dtype)
    fixed = ops.stop_gradient(rows)
    return fixed + (rows - fixed) / frequency


def embedding(input: ArrayLike, weight: ArrayLike, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Result:
    """torch's ``embedding``: the rows of ``weight`` (num_embeddings, dim) at the int
    ``input`` (any shape), shape input.shape + (dim,); differentiable in the weight.

    ``padding_idx``: that row's lookups get no gradient. ``max_norm``: the rows looked
    up are first scaled in place to that ``norm_type``-norm at most, as torch's.
    ``scale_grad_by_freq``: each row's gradient is divided by how often its index
    occurs in ``input`` (a rescaling torch offers, not the derivative). ``sparse`` is
    accepted; gradients are dense arrays.

    >>> table = cr.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> cr.nn.functional.embedding(np.array([2, 0]), table).data.tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    return _lookup("embedding", input, weight, padding_idx, max_norm, norm_type,
                   scale_grad_by_freq)


def _lookup(name, input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq):
    """``embedding``, its errors naming ``name`` (the function or the layer called)."""
    rows = shape_of(weight)[0]
    indices = _indices(input, name, rows)
    padding_idx = _padding_index(padding_idx, rows, name)
    if max_norm is not None:
        _renormalise(weight, indices, max_norm, norm_type, name)
    # (a Tensor's x[rows]: its gradient takes the scatter's fast path, rules/indexing.py)
    looked_up = weight[indices] if isinstance(weight, Tensor) \
        else ops.take(weight, indices, axis=0)
    if scale_grad_by_freq:
        looked_up = _scaled_by_frequency(looked_up, indices, name)
    if padding_idx is None or (not unknown_values(indices)
                               and not np.any(indices == padding_idx)):
        return looked_up
    fixed = ops.take(ops.stop_gradient(weight), indices, axis=0)  # (no gradient)
    return ops.where((indices == padding_idx)[..., None], fixed, looked_up)


def _bags(input, offsets, include_last_offset, name):
    """(flat indices, the bag of each, the number of bags) of 2-d ``input`` (a bag per
    row) or 1-d ``input`` cut at ``offsets``."""
    shape = tuple(shape_of(input))
    if len(shape) == 2:
        if offsets is not None:
            raise ValueError(f"{name}: input of shape {shape} holds a bag per row; "
                             f"offsets must be None, got {np.asarray(_raw(offsets)).tolist()}")
        bags, length = shape
        flat = ops.reshape(input, (bags * length,)) if isinstance(input, Tensor) \
            else _raw(input).reshape(bags * length)
        return flat, np.repeat(np.arange(bags), length), bags
    if len(shape) != 1:
        raise ValueError(f"{name}: input of shape {shape}, expected (B, L) bags or 1-d "
                         f"indices with offsets")
    if offsets is None:
        raise ValueError(f"{name}: 1-d input of {shape[0]} indices needs offsets, where "
                         f"each bag starts")
    cuts = _raw(offsets)
    if unknown_values(cuts):
        raise ValueError(f"{name}: offsets must be known numbers (traced offsets under "
                         f"cr.jit or cr.vmap cannot shape the bags); pass them as a "
                         f"static argument or use 2-d input")
    cuts = np.asarray(cuts)
    if cuts.ndim != 1 or cuts.dtype.kind not in "iuf" or (
            cuts.size and (cuts[0] != 0 or np.any(np.diff(cuts) < 0)
                           or cuts[-1] > shape[0])):
        raise ValueError(f"{name}: offsets {cuts.tolist()} must be 1-d, start at 0 and "
                         f"not decrease nor pass the {shape[0]} indices")
    cuts = cuts.astype(np.intp)
    if include_last_offset:
        if cuts.size == 0 or cuts[-1] != shape[0]:
            raise ValueError(f"{name}: include_last_offset=True needs offsets ending at "
                             f"the {shape[0]} indices, got {cuts.tolist()}")
        cuts = cuts[:-1]
    bag_of = np.searchsorted(cuts, np.arange(shape[0]), side="right") - 1
    return input, bag_of, len(cuts)


def embedding_bag(input: ArrayLike, weight: ArrayLike, offsets: ArrayLike | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: ArrayLike | None = None,
                  include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Result:
    """torch's ``embedding_bag``: for each bag of indices, the ``mode`` ("sum", "mean"
    or "max", per feature) of its rows of ``weight``, shape (bags, dim).

    Bags are the rows of 2-d ``input``, or 1-d ``input`` cut where ``offsets`` say (a
    bag starts at each; with ``include_last_offset`` the last offset ends the last
    bag). ``per_sample_weights`` (input's shape, "sum" only) weigh each row.
    ``padding_idx`` is left out of its bags (and of the mean's count); an empty bag
    is zeros. ``max_norm``, ``scale_grad_by_freq`` and ``sparse`` as ``embedding``'s.

    >>> table = cr.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    >>> bags = np.array([[0, 1], [2, 2]])
    >>> cr.nn.functional.embedding_bag(bags, table, mode="sum").data.tolist()
    [[1.0, 2.0], [6.0, 6.0]]
    >>> cr.nn.functional.embedding_bag(bags, table, mode="max").data.tolist()
    [[1.0, 2.0], [3.0, 3.0]]
    """
    name = "embedding_bag"
    if mode not in BAG_MODES:
        raise ValueError(f"{name}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise ValueError(f"{name}: per_sample_weights weigh a sum; mode is {mode!r}")
        if tuple(shape_of(per_sample_weights)) != tuple(shape_of(input)):
            raise ValueError(f"{name}: per_sample_weights of shape "
                             f"{tuple(shape_of(per_sample_weights))}, expected the "
                             f"input's {tuple(shape_of(input))}")
    flat, bag_of, bags = _bags(input, offsets, include_last_offset, name)
    rows = shape_of(weight)[0]
    padding_idx = _padding_index(padding_idx, rows, name)
    looked_up = _lookup(name, flat, weight, None, max_norm, norm_type, scale_grad_by_freq)
    indices = _indices(flat, name, rows)
    dtype = looked_up.dtype
    kept = np.ones(np.shape(indices), bool) if padding_idx is None \
        else indices != padding_idx
    dim = shape_of(weight)[1]
    if mode == "max":
        # the padding's rows and empty bags out of the maximum, then empty bags at 0
        candidates = ops.where(kept[:, None], looked_up, -np.inf)
        start = np.full((bags, dim), -np.inf, dtype)
        out = ops.index_max(start, candidates, bag_of)
        count = ops.index_add(np.zeros(bags, dtype), ops.astype(kept, dtype), bag_of)
        return ops.where((count > 0)[:, None], out, 0.0)
    if per_sample_weights is not None:
        weights = ops.reshape(per_sample_weights, (len(bag_of),))
        looked_up = looked_up * ops.expand_dims(weights, 1)
    if padding_idx is not None:
        looked_up = ops.where(kept[:, None], looked_up, 0.0)
    total = ops.index_add(np.zeros((bags, dim), dtype), looked_up, bag_of)
    if mode == "sum":
        return total
    count = ops.index_add(np.zeros(bags, dtype), ops.astype(kept, dtype), bag_of)
    return total / ops.expand_dims(xp.maximum(_raw(count), 1), 1)


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim`` (torch's
    ``nn.Embedding``); the input is an int array of indices (any shape; a float array
    of whole numbers, as ``cr.tensor`` makes of ints, is read the same), the output the
    rows it picks, with one more axis.

    ``weight`` (num_embeddings, embedding_dim) starts N(0, 1), as torch's, drawn from
    ``rng``; a row used twice gets both gradients added. ``padding_idx`` names a row
    that starts at zeros and gets no gradient (its vectors stand for padding);
    ``max_norm``, ``norm_type``, ``scale_grad_by_freq`` and ``sparse`` as
    ``F.embedding``'s. ``Embedding.from_pretrained(table)`` wraps a given table.

    >>> emb = cr.nn.Embedding(5, 3, rng=0)
    >>> out = emb(np.array([[0, 4], [4, 4]]))
    >>> out.shape
    (2, 2, 3)
    >>> out.sum().backward()
    >>> emb.weight.grad[:, 0].tolist()          # row 0 used once, row 4 three times
    [1.0, 0.0, 0.0, 0.0, 3.0]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: ArrayLike | None = None, _freeze: bool = False,
                 device: str | None = None, dtype: DTypeLike = np.float64, *,
                 rng: RNG = None) -> None:
        name = type(self).__name__
        check_device(name, device)
        for what, n in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if not isinstance(n, Integral) or n < 1:
                raise ValueError(f"{name}: {what} must be a positive int, got {n!r}")
        if max_norm is not None and not (isinstance(max_norm, Real) and max_norm > 0):
            raise ValueError(f"{name}: max_norm must be a positive number or None, got "
                             f"{max_norm!r}")
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.padding_idx = _padding_index(padding_idx, num_embeddings, name)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            w = initial_generator(rng).standard_normal((num_embeddings, embedding_dim))
            if self.padding_idx is not None:
                w[self.padding_idx] = 0.0
        else:
            w = np.array(_raw(_weight), dtype=dtype)
            if w.shape != (num_embeddings, embedding_dim):
                raise ValueError(f"{name}: _weight of shape {w.shape}, expected "
                                 f"({num_embeddings}, {embedding_dim})")
        self.weight = Parameter(w, dtype=dtype)
        if _freeze:
            self.weight.requires_grad_(False)

    @classmethod
    def from_pretrained(cls, embeddings: ArrayLike, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Any:
        """The layer around a given (num_embeddings, embedding_dim) table, copied;
        ``freeze`` (the default) keeps it out of training, as torch's.

        >>> emb = cr.nn.Embedding.from_pretrained(np.eye(3))
        >>> emb(np.array([2])).data.tolist(), emb.weight.requires_grad
        ([[0.0, 0.0, 1.0]], False)
        """
        table = np.asarray(_raw(embeddings))
        if table.ndim != 2:
            raise ValueError(f"{cls.__name__}.from_pretrained: embeddings of shape "
                             f"{table.shape}, expected (num_embeddings, embedding_dim)")
        dtype = table.dtype if table.dtype.kind == "f" else np.float64
        return cls(table.shape[0], table.shape[1], padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=table,
                   _freeze=freeze, dtype=dtype)

    def forward(self, indices: ArrayLike) -> Result:
        """weight[indices]: the rows of the table, shape indices.shape + (embedding_dim,)."""
        return _lookup(type(self).__name__, indices, self.weight, self.padding_idx,
                       self.max_norm, self.norm_type, self.scale_grad_by_freq)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        if self.sparse:
            text += ", sparse=True"
        return text


class EmbeddingBag(Embedding):
    """torch's ``nn.EmbeddingBag``: a table as ``Embedding``'s, and for each bag of
    indices the ``mode`` ("mean", the default, "sum" or "max") of its rows, without the
    rows of every bag being stacked first; see ``F.embedding_bag``. ``forward(input,
    offsets=None, per_sample_weights=None)``.

    >>> bag = cr.nn.EmbeddingBag(10, 3, mode="sum", rng=0)
    >>> bag(np.array([1, 2, 4, 5, 4]), offsets=np.array([0, 2])).shape   # 2 bags
    (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: ArrayLike | None = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: str | None = None,
                 dtype: DTypeLike = np.float64, *, rng: RNG = None) -> None:
        if mode not in BAG_MODES:
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got "
                             f"{mode!r}")
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
                         scale_grad_by_freq, sparse, _weight, False, device, dtype, rng=rng)
        self.mode, self.include_last_offset = mode, include_last_offset

    @classmethod
    def from_pretrained(cls, embeddings: ArrayLike, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> Any:
        """The layer around a given table, copied; ``freeze`` keeps it out of training.

        >>> bag = cr.nn.EmbeddingBag.from_pretrained(np.eye(3), mode="sum")
        >>> bag(np.array([[0, 2]])).data.tolist()
        [[1.0, 0.0, 1.0]]
        """
        table = np.asarray(_raw(embeddings))
        if table.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained: embeddings of shape "
                             f"{table.shape}, expected (num_embeddings, embedding_dim)")
        dtype = table.dtype if table.dtype.kind == "f" else np.float64
        layer = cls(table.shape[0], table.shape[1], max_norm, norm_type, scale_grad_by_freq,
                    mode, sparse, table, include_last_offset, padding_idx, dtype=dtype)
        layer.weight.requires_grad_(not freeze)
        return layer

    def forward(self, input: ArrayLike, offsets: ArrayLike | None = None,
                per_sample_weights: ArrayLike | None = None) -> Result:
        """The ``mode`` of each bag's rows, (bags, embedding_dim)."""
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text

"""PyTorch's spellings of the methods that move, pick, split and write entries, and
that make new tensors like a given one: ``x.flip(dims)``, ``x.roll(shifts, dims)``,
``x.tril()``, ``x.movedim(a, b)``, ``x.unbind()``, ``x.scatter(dim, index, src)``,
``x.index_add(dim, index, source)``, ``x.new_zeros(shape)``... Each is one of the
table's operations (or a composition of them), so it is differentiable in the tensor
(and in ``src``/``source`` where one is given), on Tensors and on traced values alike.
The in-place forms (``tril_``, ``scatter_``...) are a Tensor's own: torch_inplace.py.
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..primitive import raw, shape_of
from .torch_logic import _plain

__all__ = ["TorchShapes"]


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _along(ndim, dim, index):
    """The NumPy index that picks ``index`` along ``dim``, every entry elsewhere."""
    out = [slice(None)] * ndim
    out[dim % ndim] = np.asarray(raw(index))
    return tuple(out)


def _grid(x, dim, index):
    """torch.scatter's index: ``index`` along ``dim``, its own position elsewhere."""
    index = np.asarray(raw(index))
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim % len(shape_of(x))] = index
    return tuple(grid), index


def _window(src, index):
    """The part of src that scatter reads: as many entries as the index has."""
    if not hasattr(src, "shape") or not shape_of(src):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


class TorchShapes:
    """PyTorch's method names for moving, picking, splitting and writing entries."""

    __slots__ = ()

    # --- moving entries -------------------------------------------------------------

    def flip(self, *dims: int) -> Any:
        """The entries in reverse order along ``dims``, as torch.flip.

        >>> cr.tensor([[1.0, 2.0], [3.0, 4.0]]).flip(1).tolist()
        [[2.0, 1.0], [4.0, 3.0]]
        """
        return ops.flip(self, axis=_shape(dims))

    def fliplr(self) -> Any:
        """The columns in reverse order (axis 1), as torch.fliplr.

        >>> cr.tensor([[1.0, 2.0]]).fliplr().tolist()
        [[2.0, 1.0]]
        """
        return ops.flip(self, axis=1)

    def flipud(self) -> Any:
        """The rows in reverse order (axis 0), as torch.flipud.

        >>> cr.tensor([[1.0], [2.0]]).flipud().tolist()
        [[2.0], [1.0]]
        """
        return ops.flip(self, axis=0)

    def roll(self, shifts: "int | tuple[int, ...]",
             dims: "int | tuple[int, ...] | None" = None) -> Any:
        """The entries shifted by ``shifts`` along ``dims`` (cyclically; the flattened
        tensor without dims), as torch.roll.

        >>> cr.tensor([1.0, 2.0, 3.0]).roll(1).tolist()
        [3.0, 1.0, 2.0]
        """
        return ops.roll(self, shifts, axis=dims)

    def rot90(self, k: int = 1, dims: "tuple[int, int]" = (0, 1)) -> Any:
        """Rotated by 90 degrees ``k`` times in the plane of ``dims``, as torch.rot90.

        >>> cr.tensor([[1.0, 2.0], [3.0, 4.0]]).rot90().tolist()
        [[2.0, 4.0], [1.0, 3.0]]
        """
        return ops.rot90(self, k, tuple(dims))

    def movedim(self, source: "int | tuple[int, ...]",
                destination: "int | tuple[int, ...]") -> Any:
        """Axes ``source`` moved to ``destination``, the others in order, as torch.movedim.

        >>> cr.zeros(2, 3, 4).movedim(0, -1).shape
        (3, 4, 2)
        """
        return ops.moveaxis(self, source, destination)

    moveaxis = movedim

    def swapdims(self, dim0: int, dim1: int) -> Any:
        """Axes ``dim0`` and ``dim1`` swapped, as torch.swapdims.

        >>> cr.zeros(2, 3).swapdims(0, 1).shape
        (3, 2)
        """
        return ops.swapaxes(self, dim0, dim1)

    def reshape_as(self, other: Any) -> Any:
        """Reshaped to ``other``'s shape, as torch.reshape_as.

        >>> cr.arange(6.0).reshape_as(cr.zeros(2, 3)).shape
        (2, 3)
        """
        return ops.reshape(self, tuple(shape_of(other)))

    def type_as(self, other: Any) -> Any:
        """Cast to ``other``'s dtype, as torch.type_as.

        >>> cr.tensor([1.5]).type_as(cr.tensor([1], dtype=np.int64)).tolist()
        [1]
        """
        return self.astype(np.result_type(raw(other)))

    def unflatten(self, dim: int, sizes: "tuple[int, ...]") -> Any:
        """Axis ``dim`` split into axes of ``sizes`` (one may be -1), as torch.unflatten.

        >>> cr.zeros(2, 6).unflatten(1, (2, 3)).shape
        (2, 2, 3)
        """
        shape = tuple(shape_of(self))
        dim = dim % len(shape)
        return ops.reshape(self, shape[:dim] + tuple(sizes) + shape[dim + 1:])

    def unbind(self, dim: int = 0) -> "tuple[Any, ...]":
        """The slices along ``dim``, each without that axis, as torch.unbind.

        >>> [t.tolist() for t in cr.tensor([[1.0, 2.0], [3.0, 4.0]]).unbind(1)]
        [[1.0, 3.0], [2.0, 4.0]]
        """
        ndim = len(shape_of(self))
        dim = dim % ndim
        return tuple(ops.getitem(self, index=(slice(None),) * dim + (i,))
                     for i in range(shape_of(self)[dim]))

    def tensor_split(self, indices_or_sections: "int | list[int] | tuple[int, ...]",
                     dim: int = 0) -> "tuple[Any, ...]":
        """Pieces along ``dim``: ``n`` of sizes differing by at most one, or cut at the
        given indices, as torch.tensor_split (NumPy's array_split).

        >>> [t.shape for t in cr.arange(5.0).tensor_split(2)]
        [(3,), (2,)]
        """
        cut = indices_or_sections
        cut = cut if isinstance(cut, (int, np.integer)) else list(raw(cut))
        return tuple(ops.array_split(self, cut, axis=dim))

    def repeat_interleave(self, repeats: ArrayLike, dim: int | None = None) -> Any:
        """Each entry repeated ``repeats`` times along ``dim`` (the flattened tensor
        without dim), as torch.repeat_interleave (NumPy's repeat).

        >>> cr.tensor([1.0, 2.0]).repeat_interleave(2).tolist()
        [1.0, 1.0, 2.0, 2.0]
        """
        return ops.repeat(self, raw(repeats), axis=dim)

    # --- triangles and diagonals ------------------------------------------------------

    def tril(self, diagonal: int = 0) -> Any:
        """The lower triangle (on and below ``diagonal``), zeros above, as torch.tril.

        >>> cr.ones(2, 2).tril().tolist()
        [[1.0, 0.0], [1.0, 1.0]]
        """
        return ops.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Any:
        """The upper triangle (on and above ``diagonal``), zeros below, as torch.triu.

        >>> cr.ones(2, 2).triu().tolist()
        [[1.0, 1.0], [0.0, 1.0]]
        """
        return ops.triu(self, diagonal)

    def diag(self, diagonal: int = 0) -> Any:
        """Of a vector, the matrix with it on ``diagonal``; of a matrix, that diagonal,
        as torch.diag.

        >>> cr.tensor([1.0, 2.0]).diag().tolist()
        [[1.0, 0.0], [0.0, 2.0]]
        """
        return ops.diag(self, diagonal)

    def diagflat(self, offset: int = 0) -> Any:
        """The matrix with the flattened entries on diagonal ``offset``, as torch.diagflat.

        >>> cr.tensor([[1.0, 2.0]]).diagflat().tolist()
        [[1.0, 0.0], [0.0, 2.0]]
        """
        return ops.diag(ops.ravel(self), offset)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
        """The last axis laid on diagonal ``offset`` of new (dim1, dim2) planes, zeros
        elsewhere, as torch.diag_embed.

        >>> cr.tensor([[1.0, 2.0]]).diag_embed().tolist()
        [[[1.0, 0.0], [0.0, 2.0]]]
        """
        shape = tuple(shape_of(self))
        n = shape[-1]
        m = n + abs(offset)
        rows = np.arange(n) + max(-offset, 0)
        cols = np.arange(n) + max(offset, 0)
        zeros = np.zeros(shape[:-1] + (m, m), dtype=np.result_type(raw(self)))
        out = ops.index_set(zeros, self, index=(Ellipsis, rows, cols))
        ndim = len(shape) + 1
        if (dim1 % ndim, dim2 % ndim) != (ndim - 2, ndim - 1):
            out = ops.moveaxis(out, (-2, -1), (dim1 % ndim, dim2 % ndim))
        return out

    # --- picking entries --------------------------------------------------------------

    def take_along_dim(self, indices: ArrayLike, dim: int | None = None) -> Any:
        """The entries at ``indices`` along ``dim`` (of the flattened tensor without
        dim), as torch.take_along_dim.

        >>> cr.tensor([[1.0, 2.0], [3.0, 4.0]]).take_along_dim(np.array([[1], [0]]), 1).tolist()
        [[2.0], [3.0]]
        """
        indices = np.asarray(raw(indices))
        if dim is None:
            return ops.take_along_axis(ops.ravel(self), indices.ravel(), axis=0)
        return ops.take_along_axis(self, indices, axis=dim)

    def masked_select(self, mask: ArrayLike) -> Any:
        """The entries where ``mask`` (broadcast with the tensor) is True, as a 1-d
        tensor, as torch.masked_select.

        >>> cr.tensor([1.0, 2.0, 3.0]).masked_select(np.array([True, False, True])).tolist()
        [1.0, 3.0]
        """
        mask = np.asarray(raw(mask), dtype=bool)
        shape = np.broadcast_shapes(tuple(shape_of(self)), mask.shape)
        x = self if tuple(shape_of(self)) == shape else ops.broadcast_to(self, shape)
        return ops.getitem(x, index=np.broadcast_to(mask, shape))

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """Where the nonzero entries are: an (n, ndim) tensor of their indices, or with
        ``as_tuple=True`` one 1-d tensor per axis, as torch.nonzero.

        >>> cr.tensor([[0.0, 1.0], [2.0, 0.0]]).nonzero().tolist()
        [[0, 1], [1, 0]]
        """
        data = np.asarray(raw(self))
        if as_tuple:
            return tuple(_plain(self, i.astype(np.int64)) for i in np.nonzero(data))
        return _plain(self, np.argwhere(data).astype(np.int64))

    def argwhere(self) -> Any:
        """The indices of the nonzero entries, an (n, ndim) tensor, as torch.argwhere.

        >>> cr.tensor([0.0, 3.0, 4.0]).argwhere().tolist()
        [[1], [2]]
        """
        return _plain(self, np.argwhere(np.asarray(raw(self))).astype(np.int64))

    # --- writing entries (a copy) ---------------------------------------------------

    def index_add(self, dim: int, index: ArrayLike, source: Any, *, alpha: float = 1) -> Any:
        """A copy with ``alpha * source`` added at ``index`` along ``dim`` (repeated
        indices add up), as torch.index_add.

        >>> cr.zeros(3).index_add(0, np.array([0, 0, 2]), cr.ones(3)).tolist()
        [2.0, 0.0, 1.0]
        """
        value = source if alpha == 1 else alpha * source
        return ops.index_add(self, value, index=_along(len(shape_of(self)), dim, index))

    def index_copy(self, dim: int, index: ArrayLike, source: Any) -> Any:
        """A copy with the slices at ``index`` along ``dim`` replaced by ``source``'s,
        as torch.index_copy.

        >>> cr.zeros(3).index_copy(0, np.array([2, 0]), cr.tensor([5.0, 6.0])).tolist()
        [6.0, 0.0, 5.0]
        """
        return ops.index_set(self, source, index=_along(len(shape_of(self)), dim, index))

    def index_fill(self, dim: int, index: ArrayLike, value: ArrayLike) -> Any:
        """A copy with the slices at ``index`` along ``dim`` set to ``value``, as
        torch.index_fill.

        >>> cr.ones(2, 2).index_fill(1, np.array([0]), -1.0).tolist()
        [[-1.0, 1.0], [-1.0, 1.0]]
        """
        return ops.index_set(self, value, index=_along(len(shape_of(self)), dim, index))

    def scatter(self, dim: int, index: ArrayLike, src: Any = None, *,
                value: ArrayLike | None = None, reduce: str | None = None) -> Any:
        """A copy with ``src``'s entries (or ``value``) written at ``index`` along
        ``dim``, as torch.scatter: ``out[i][index[i][j]][k] = src[i][j][k]`` for dim 1.
        ``reduce="add"`` or ``"multiply"`` combines instead of writing.

        >>> cr.zeros(3).scatter(0, np.array([2, 0]), cr.tensor([5.0, 6.0])).tolist()
        [6.0, 0.0, 5.0]
        """
        src = value if src is None else src
        grid, index = _grid(self, dim, index)
        src = _window(src, index)
        if reduce is None:
            return ops.index_set(self, src, index=grid)
        if reduce == "add":
            return ops.index_add(self, src, index=grid)
        if reduce == "multiply":
            return ops.index_multiply(self, src, index=grid)
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")

    def scatter_reduce(self, dim: int, index: ArrayLike, src: Any, reduce: str, *,
                       include_self: bool = True) -> Any:
        """A copy with ``src``'s entries combined at ``index`` along ``dim`` by
        ``reduce``: "sum", "prod", "mean", "amax" or "amin", with the tensor's own
        entry there (``include_self``) or without it, as torch.scatter_reduce.

        >>> x = cr.tensor([1.0, 2.0])
        >>> x.scatter_reduce(0, np.array([0, 0]), cr.tensor([3.0, 5.0]), "amax").tolist()
        [5.0, 2.0]
        """
        grid, index = _grid(self, dim, index)
        src = _window(src, index)
        start = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf}
        if reduce not in start:
            raise ValueError(f"scatter_reduce: reduce must be one of {sorted(start)}, "
                             f"got {reduce!r}")
        base = self if include_self else ops.index_set(self, start[reduce], index=grid)
        if reduce in ("sum", "mean"):
            out = ops.index_add(base, src, index=grid)
        elif reduce == "prod":
            out = ops.index_multiply(base, src, index=grid)
        else:
            out = (ops.index_max if reduce == "amax" else ops.index_min)(base, src, index=grid)
        if reduce == "mean":
            count = np.zeros(shape_of(self), dtype=np.int64)
            np.add.at(count, grid, 1)
            count = count + (1 if include_self else 0)
            out = out / np.maximum(count, 1)
            if np.result_type(raw(self)).kind in "iu":
                out = ops.astype(ops.floor(out), np.result_type(raw(self)))
        return out

    # --- new tensors like this one --------------------------------------------------

    def new_zeros(self, *size: Any, dtype: DTypeLike | None = None,
                  requires_grad: bool = False) -> Any:
        """A tensor of zeros of ``size``, of this tensor's dtype unless told, as torch's.

        >>> cr.tensor([1], dtype=np.int32).new_zeros(2, 3).dtype
        dtype('int32')
        """
        return _new(self, np.zeros(_shape(size), dtype=dtype or _dtype(self)), requires_grad)

    def new_ones(self, *size: Any, dtype: DTypeLike | None = None,
                 requires_grad: bool = False) -> Any:
        """A tensor of ones of ``size``, of this tensor's dtype unless told.

        >>> cr.zeros(1).new_ones(2).tolist()
        [1.0, 1.0]
        """
        return _new(self, np.ones(_shape(size), dtype=dtype or _dtype(self)), requires_grad)

    def new_full(self, size: "tuple[int, ...]", fill_value: ArrayLike, *,
                 dtype: DTypeLike | None = None, requires_grad: bool = False) -> Any:
        """A tensor of ``size`` filled with ``fill_value``, of this tensor's dtype unless
        told.

        >>> cr.zeros(1).new_full((2,), 7.0).tolist()
        [7.0, 7.0]
        """
        array = np.full(tuple(size), raw(fill_value), dtype=dtype or _dtype(self))
        return _new(self, array, requires_grad)

    def new_empty(self, *size: Any, dtype: DTypeLike | None = None,
                  requires_grad: bool = False) -> Any:
        """A tensor of ``size`` whose entries are not set (zeros here), of this
        tensor's dtype unless told.

        >>> cr.zeros(1).new_empty(2, 2).shape
        (2, 2)
        """
        return self.new_zeros(*size, dtype=dtype, requires_grad=requires_grad)

    def new_tensor(self, data: ArrayLike, *, dtype: DTypeLike | None = None,
                   requires_grad: bool = False) -> Any:
        """A new tensor of ``data`` (copied, cut from any graph), of this tensor's
        dtype unless told, as torch's.

        >>> cr.zeros(1, dtype=np.float32).new_tensor([1, 2]).dtype
        dtype('float32')
        """
        array = np.array(raw(data), dtype=dtype or _dtype(self))
        return _new(self, array, requires_grad)

    # --- about the tensor -----------------------------------------------------------

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one (float16, 32, 64).

        >>> cr.zeros(1).is_floating_point(), cr.tensor([1]).is_floating_point()
        (True, False)
        """
        return bool(np.result_type(raw(self)).kind == "f")

    def is_contiguous(self) -> bool:
        """Whether the numbers lie in row-major order (a transpose's do not).

        >>> x = cr.zeros(2, 3)
        >>> x.is_contiguous(), x.t().is_contiguous()
        (True, False)
        """
        data = getattr(self, "_data", None)
        return bool(data.flags.c_contiguous) if type(data) is np.ndarray else True

    def ndimension(self) -> int:
        """The number of axes (torch's other name for ``dim()``).

        >>> cr.zeros(2, 3).ndimension()
        2
        """
        return len(shape_of(self))

    def element_size(self) -> int:
        """The bytes of one entry (8 for float64), as torch.element_size.

        >>> cr.zeros(1, dtype=np.float32).element_size()
        4
        """
        return int(np.result_type(raw(self)).itemsize)


def _dtype(x):
    return np.result_type(raw(x))


def _new(x, array, requires_grad):
    out = _plain(x, array)
    if requires_grad:
        out.requires_grad_(True)
    return out

"""Cumulative operations and ordering: cumsum, cumprod, diff, sort, partition, take,
take_along_axis.

Only ``cumsum`` is a primitive (its VJP is a cumulative sum running the other way).
The rest are compositions: selecting entries is indexing (``getitem``, whose gradient
scatters back), so sort, partition and take differentiate through the entries they
select; ``cumprod`` is a product over a triangle of its inputs (``prod``'s rule is exact
at zeros, so cumprod's is too); ``diff`` is slicing and subtraction. Which entries are
selected (the order itself) is piecewise constant: it has no derivative.
"""

from collections import namedtuple
from collections.abc import Sequence

from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from ..primitive import Box, along_axis, ndim_of, raw, shape_of
from ..arrays import as_array
from .common import Result, op, torch_names
from .elementwise import where
from .reductions import prod
from .shapes import (astype, broadcast_to, concatenate, expand_dims, getitem, moveaxis,
                     reshape)

__all__ = ["cumsum", "cumprod", "diff", "sort", "topk", "partition", "take",
           "take_along_axis"]
METHODS = ["cumsum", "cumprod", "take"]  # also methods of Tensor


def _flipped(x, axis):
    """x reversed along ``axis`` (counted from the end, so batch axes stay in front)."""
    return getitem(x, index=(Ellipsis, slice(None, None, -1)) + (slice(None),) * (-axis - 1))


@op("cumsum", batching=along_axis(axis=None))
def _cumsum(x, axis):
    return xp.cumsum(x, axis=axis)


# d/dx_j of y_i = sum_{k<=i} x_k is 1 for i >= j: the VJP sums g over i >= j (a
# cumulative sum from the other end); the JVP is the cumulative sum of the tangent.
_cumsum.defvjp(lambda g, ans, x, axis: _flipped(_cumsum(_flipped(g, axis), axis), axis),
               text=("the cumulative sum of {g} from the end",))
_cumsum.defjvp(lambda t, ans, x, axis: _cumsum(t, axis))


def _along(x, axis):
    """(x, axis) with axis None meaning the flattened array, and axis counted from the
    end (what the rules need to work behind batch axes)."""
    if axis is None:
        return reshape(x, (-1,)), -1
    ndim = ndim_of(x)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array of shape {shape_of(x)}")
    return x, axis % ndim - ndim


@torch_names
def cumsum(x: ArrayLike, axis: int | None = None, dtype: DTypeLike = None) -> Result:
    """The running sum along ``axis`` (None: of the flattened array), as np.cumsum.

    >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> cr.cumsum(x).sum().backward()             # x_0 is in every partial sum
    >>> x.grad.tolist()
    [3.0, 2.0, 1.0]
    """
    x, axis = _along(x if dtype is None else astype(x, dtype), axis)
    return _cumsum(x, axis)


@torch_names
def cumprod(x: ArrayLike, axis: int | None = None, dtype: DTypeLike = None) -> Result:
    """The running product along ``axis`` (None: flattened), as np.cumprod; exact
    derivatives where entries are 0.

    Written as the product, for each i, of the entries j <= i (the others replaced by
    1): prod's derivative, the product of the other entries, needs no division.

    >>> x = cr.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> cr.cumprod(x).data.tolist()
    [2.0, 0.0, 0.0]
    >>> cr.cumprod(x)[1].backward()               # d(x0 x1)/dx = (x1, x0, 0)
    >>> x.grad.tolist()
    [0.0, 2.0, 0.0]
    """
    x, axis = _along(x if dtype is None else astype(x, dtype), axis)
    last = moveaxis(x, axis, -1)
    n = shape_of(last)[-1]
    upto = xp.tril(xp.ones((n, n), dtype=bool))  # row i: the entries j <= i
    return moveaxis(prod(where(upto, expand_dims(last, -2), 1.0), axis=-1), -1, axis)


def diff(x: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Result:
    """The n-th differences along ``axis``: x[1:] - x[:-1], n times, as np.diff.

    >>> cr.diff(cr.tensor([1.0, 4.0, 9.0, 16.0])).data.tolist()
    [3.0, 5.0, 7.0]
    """
    if n < 0:
        raise ValueError(f"diff: order n={n} must be >= 0")
    axis = axis % ndim_of(x)
    pieces = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        if extra is not x and ndim_of(extra) == 0:  # a number: one slice of it
            shape = list(shape_of(x))
            shape[axis] = 1
            extra = broadcast_to(extra, tuple(shape)) if isinstance(extra, Box) else \
                xp.full(shape, extra, dtype=xp.result_type(raw(x)))  # (float32 stays)
        pieces.append(extra)
    if len(pieces) > 1:
        x = concatenate(pieces, axis)
    before = (slice(None),) * axis
    for _ in range(n):
        x = getitem(x, index=before + (slice(1, None),)) - \
            getitem(x, index=before + (slice(None, -1),))
    return x


def take_along_axis(x: ArrayLike, indices: ArrayLike, axis: int | None) -> Result:
    """The entries of x at ``indices`` along ``axis`` (an int array broadcastable with x
    elsewhere), as np.take_along_axis; the gradient goes back to those entries.

    >>> x = cr.tensor([[3.0, 1.0], [2.0, 5.0]])
    >>> cr.take_along_axis(x, np.array([[1], [0]]), axis=1).data.tolist()
    [[1.0], [2.0]]
    """
    indices = as_array(raw(indices))
    if axis is None:
        return getitem(reshape(x, (-1,)), index=indices.reshape(-1))
    ndim = ndim_of(x)
    if indices.ndim != ndim:
        raise ValueError(f"take_along_axis: indices have {indices.ndim} axes, x has {ndim}; "
                         f"they must have the same number")
    axis = axis % ndim
    index = []
    for d in range(ndim):
        if d == axis:
            index.append(indices)
        else:  # every position along the other axes, shaped to broadcast
            shape = [1] * ndim
            shape[d] = shape_of(x)[d]
            index.append(xp.arange(shape_of(x)[d]).reshape(shape))
    return getitem(x, index=tuple(index))


def take(x: ArrayLike, indices: ArrayLike, axis: int | None = None) -> Result:
    """The entries at ``indices`` along ``axis`` (None: of the flattened array), as
    np.take; repeated indices get their gradients added up.

    >>> cr.take(cr.tensor([5.0, 6.0, 7.0]), [2, 0, 2]).data.tolist()
    [7.0, 5.0, 7.0]
    """
    indices = as_array(raw(indices))
    if axis is None:
        return getitem(reshape(x, (-1,)), index=indices)
    axis = axis % ndim_of(x)
    return getitem(x, index=(slice(None),) * axis + (indices,))


def sort(x: ArrayLike, axis: int = -1) -> Result:
    """x sorted along ``axis`` (None: flattened), as np.sort (stable); each sorted entry
    carries the gradient of the entry it came from.

    >>> x = cr.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> s = cr.sort(x)
    >>> s.data.tolist()
    [1.0, 2.0, 3.0]
    >>> (s * cr.tensor([1.0, 10.0, 100.0])).sum().backward()
    >>> x.grad.tolist()
    [100.0, 1.0, 10.0]
    """
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return take_along_axis(x, xp.argsort(raw(x), axis=axis, kind="stable"), axis)


TopK = namedtuple("TopK", "values indices")


@torch_names
def topk(x: ArrayLike, k: int, axis: int = -1, largest: bool = True,
         sorted: bool = True) -> TopK:  # noqa: A002  (torch's name)
    """The ``k`` largest entries along ``axis``, largest first, and where they were, as
    torch.topk: ``(values, indices)``; the ``k`` smallest, smallest first, with
    ``largest=False``. Of equal entries the earlier comes first (torch leaves that
    order open). The values differentiate through the entries they select; ``sorted``
    is accepted for torch's signature (the result is always sorted).

    >>> values, indices = cr.topk(cr.tensor([1.0, 5.0, 3.0]), 2)
    >>> values.tolist(), indices.tolist()
    ([5.0, 3.0], [1, 2])
    """
    shape = tuple(shape_of(x))
    if not shape:
        raise ValueError("topk: expected an array of at least one dimension, got a number")
    axis = axis - len(shape) if axis >= 0 else axis  # (from the end: batch axes in front)
    if not 0 <= k <= shape[axis]:
        raise ValueError(f"topk: k={k} for an axis of {shape[axis]} entries (shape "
                         f"{shape}, axis {axis}); expected 0 <= k <= {shape[axis]}")
    data = raw(x)
    order = xp.argsort(-data if largest else data, axis=axis, kind="stable")
    indices = order[(Ellipsis, slice(0, k)) + (slice(None),) * (-axis - 1)]
    return TopK(take_along_axis(x, indices, axis), indices)


def partition(x: ArrayLike, kth: int | Sequence[int], axis: int = -1) -> Result:
    """x rearranged along ``axis`` so that the entry at ``kth`` is where sorting would put
    it, smaller ones before and larger after, as np.partition.

    >>> cr.partition(cr.tensor([3.0, 1.0, 2.0, 0.0]), 1).data[1].item()
    1.0
    """
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return take_along_axis(x, xp.argpartition(raw(x), kth, axis=axis), axis)

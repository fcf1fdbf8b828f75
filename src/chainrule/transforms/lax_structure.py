"""``jax.lax``'s shape and assembly operations under its own names and arguments:
broadcasts (``broadcast_in_dim``...), ``reshape`` (with ``dimensions=``), slices
(``slice``, ``slice_in_dim``, ``index_in_dim``, ``index_take``), ``pad`` with JAX's
(low, high, interior) configuration (negative padding crops), ``rev``, ``select`` and
``select_n``, ``concatenate``, ``split``, ``stack``, ``tile``, ``convert_element_type``,
``iota`` and ``full``. Each is a composition of chainrule's differentiable operations,
so every transform takes it; the values (``padding_value``, a fill value) may carry a
derivative too.

>>> cr.lax.broadcast_in_dim(np.array([1.0, 2.0]), (3, 2), (1,)).shape
(3, 2)
"""

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import arrays as xp
from .. import rules as R
from ..api import numpy as cnp
from ..primitive import raw, shape_of
from ..rules import predicates as P
from .control import dynamic_update_slice

__all__ = ["broadcast", "broadcast_in_dim", "broadcast_to_rank", "broadcast_shapes",
           "broadcasted_iota", "iota", "collapse", "concatenate", "convert_element_type",
           "expand_dims", "squeeze", "reshape", "transpose", "rev", "full", "full_like",
           "index_in_dim", "index_take", "slice", "slice_in_dim", "pad", "select",
           "select_n", "tile", "split", "stack", "unstack", "dynamic_update_index_in_dim",
           "optimization_barrier", "dtype", "empty", "broadcast_like"]


def broadcast(operand: Any, sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """``operand`` repeated along new leading axes of the given ``sizes``.

    >>> cr.lax.broadcast(np.array([1.0, 2.0]), (3,)).shape
    (3, 2)
    """
    return R.broadcast_to(operand, tuple(sizes) + tuple(shape_of(operand)))


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                     *, out_sharding: Any = None) -> Any:
    """``operand`` broadcast to ``shape``, its axis i becoming axis
    ``broadcast_dimensions[i]`` of the result (of size 1, or the result's size there).

    >>> cr.lax.broadcast_in_dim(np.array([1.0, 2.0]), (2, 3), (0,)).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    own, shape, dims = tuple(shape_of(operand)), tuple(shape), tuple(broadcast_dimensions)
    if len(dims) != len(own) or any(b <= a for a, b in zip(dims, dims[1:])) or any(
            n not in (1, shape[d]) for n, d in zip(own, dims)):
        raise ValueError(f"broadcast_in_dim: an operand of shape {own} cannot go to shape "
                         f"{shape} along broadcast_dimensions {dims} (one strictly "
                         f"increasing axis per operand axis, each of size 1 or the "
                         f"result's)")
    placed = [1] * len(shape)
    for n, d in zip(own, dims):
        placed[d] = n
    return R.broadcast_to(R.reshape(operand, tuple(placed)), shape)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """x with axes of size 1 in front, up to ``rank`` axes.

    >>> cr.lax.broadcast_to_rank(np.ones(3), 3).shape
    (1, 1, 3)
    """
    shape = tuple(shape_of(x))
    return R.reshape(x, (1,) * builtins.max(rank - len(shape), 0) + shape)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape that arrays of the given shapes broadcast to.

    >>> cr.lax.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def iota(dtype: Any, size: int) -> Any:
    """0, 1, ..., size - 1 in ``dtype``.

    >>> cr.lax.iota(np.int32, 4).tolist()
    [0, 1, 2, 3]
    """
    return np.arange(size, dtype=dtype)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, *,
                     out_sharding: Any = None) -> Any:
    """An array of ``shape`` holding each entry's index along ``dimension``.

    >>> cr.lax.broadcasted_iota(np.int32, (2, 3), 1).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    shape = tuple(shape)
    line = [1] * len(shape)
    line[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(line),
                           shape).copy()


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """The axes from ``start_dimension`` up to (not including) ``stop_dimension`` (None:
    to the end) merged into one, in C order.

    >>> cr.lax.collapse(np.zeros((2, 3, 4)), 0, 2).shape
    (6, 4)
    """
    shape = tuple(shape_of(operand))
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"collapse: invalid range [{start_dimension}:{stop_dimension}] "
                         f"of a shape {shape}")
    return R.reshape(operand, shape[:lo] + (int(np.prod(shape[lo:hi])),) + shape[hi:])


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """The operands joined along axis ``dimension``.

    >>> cr.lax.concatenate([np.ones(2), np.zeros(1)], 0).tolist()
    [1.0, 1.0, 0.0]
    """
    return R.concatenate(list(operands), axis=dimension)


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """``operand`` in ``new_dtype`` (a float to an integer rounded towards zero, a
    complex to a real: its real part, as JAX's); the gradient flows back in the
    operand's dtype, and none into an integer or bool result.

    >>> cr.lax.convert_element_type(np.array([1.7, -1.7]), np.int32).tolist()
    [1, -1]
    """
    dtype = np.dtype(new_dtype)
    if dtype.kind in "iub":
        return R.astype(R.stop_gradient(operand), dtype)
    return R.astype(operand, dtype)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` with axes of size 1 inserted at ``dimensions`` (positions of the result).

    >>> cr.lax.expand_dims(np.ones((2, 3)), (0, 2)).shape
    (1, 2, 1, 3)
    """
    shape = list(shape_of(array))
    rank = len(shape) + len(dimensions)
    for d in sorted(d % rank for d in dimensions):
        shape.insert(d, 1)
    return R.reshape(array, tuple(shape))


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` without the axes ``dimensions``, each of size 1.

    >>> cr.lax.squeeze(np.ones((1, 2, 1)), (0, 2)).shape
    (2,)
    """
    shape = tuple(shape_of(array))
    drop = {d % len(shape) for d in dimensions} if shape else set()
    if any(shape[d] != 1 for d in drop):
        raise ValueError(f"squeeze: axes {tuple(dimensions)} of a shape {shape} are not "
                         f"all of size 1")
    return R.reshape(array, tuple(n for k, n in enumerate(shape) if k not in drop))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None,
            *, out_sharding: Any = None) -> Any:
    """``operand`` in the shape ``new_sizes`` (C order); with ``dimensions``, its axes
    first transposed to that order.

    >>> cr.lax.reshape(np.arange(6.0).reshape(2, 3), (3, 2), dimensions=(1, 0)).tolist()
    [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    """
    if dimensions is not None and tuple(dimensions) != tuple(range(len(shape_of(operand)))):
        operand = R.transpose(operand, tuple(dimensions))
    return R.reshape(operand, tuple(int(n) for n in new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """``operand``'s axes in the order ``permutation``.

    >>> cr.lax.transpose(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return R.transpose(operand, tuple(int(p) for p in permutation))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """``operand`` reversed along each axis of ``dimensions``.

    >>> cr.lax.rev(np.arange(3.0), (0,)).tolist()
    [2.0, 1.0, 0.0]
    """
    if not len(dimensions):
        return operand
    return R.flip(operand, axis=tuple(int(d) for d in dimensions))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *,
         sharding: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (which may carry a derivative),
    in ``dtype`` (None: the fill value's).

    >>> cr.lax.full((2,), 3.0).tolist(), cr.grad(lambda v: cr.sum(cr.lax.full((2, 3), v)))(1.0)
    ([3.0, 3.0], 6.0)
    """
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return cnp.full(shape, fill_value, dtype=dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Any:
    """An array of x's shape and dtype (or the ones given) filled with ``fill_value``.

    >>> cr.lax.full_like(np.zeros(2, np.int32), 7).tolist()
    [7, 7]
    """
    dtype = np.result_type(raw(x)) if dtype is None else dtype
    return full(tuple(shape_of(x)) if shape is None else shape, fill_value, dtype)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The slice at (static) ``index`` along ``axis`` (negative from the end), that axis
    kept (of size 1) or dropped.

    >>> cr.lax.index_in_dim(np.arange(6.0).reshape(3, 2), -1, keepdims=False).tolist()
    [4.0, 5.0]
    """
    shape = tuple(shape_of(operand))
    axis = axis % len(shape)
    index = index + shape[axis] if index < 0 else index
    if not 0 <= index < shape[axis]:
        raise IndexError(f"index_in_dim: index {index} is out of bounds for axis {axis} "
                         f"of size {shape[axis]}")
    part = slice_in_dim(operand, index, index + 1, 1, axis)
    return part if keepdims else R.reshape(part, shape[:axis] + shape[axis + 1:])


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """The entries of ``src`` at the points ``(idxs[0][k], idxs[1][k], ...)`` along
    ``axes`` (each index modulo its axis' size), for each k: a result of shape (number
    of points,) + the other axes' sizes.

    >>> x = np.arange(12.0).reshape(3, 4)
    >>> cr.lax.index_take(x, (np.array([0, 2]), np.array([1, -1])), (0, 1)).tolist()
    [1.0, 11.0]
    """
    shape = tuple(shape_of(src))
    axes = [a % len(shape) for a in axes]
    moved = R.moveaxis(src, axes, list(range(len(axes))))
    index = tuple(cnp.remainder(cnp.asarray(i), shape[a]) for i, a in zip(idxs, axes))
    return R.getitem(moved, index=index)


def slice(operand: Any, start_indices: Sequence[int],  # noqa: A001  (JAX's name)
          limit_indices: Sequence[int], strides: Sequence[int] | None = None) -> Any:
    """The entries from ``start_indices`` up to (not including) ``limit_indices``, every
    ``strides``-th, along each axis.

    >>> cr.lax.slice(np.arange(10.0), (1,), (8,), (3,)).tolist()
    [1.0, 4.0, 7.0]
    """
    strides = (1,) * len(start_indices) if strides is None else tuple(strides)
    index = tuple(builtins.slice(int(a), int(b), int(s))
                  for a, b, s in zip(start_indices, limit_indices, strides))
    return R.getitem(operand, index=index)


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """``slice`` along one axis (a negative start or limit counts from the end; None:
    the start or the end), the others whole.

    >>> cr.lax.slice_in_dim(np.arange(6.0).reshape(2, 3), 1, None, axis=1).tolist()
    [[1.0, 2.0], [4.0, 5.0]]
    """
    shape = tuple(shape_of(operand))
    axis = axis % len(shape)
    n = shape[axis]
    start = 0 if start_index is None else (start_index + n if start_index < 0 else start_index)
    limit = n if limit_index is None else (limit_index + n if limit_index < 0 else limit_index)
    index = (builtins.slice(None),) * axis + (builtins.slice(start, limit, stride),)
    return R.getitem(operand, index=index)


def pad(operand: Any, padding_value: Any,
        padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """``operand`` padded with ``padding_value`` (a scalar, which may carry a
    derivative): along each axis ``(low, high, interior)`` entries before, after and
    between neighbours; a negative low or high crops instead.

    >>> cr.lax.pad(np.array([1.0, 2.0, 3.0]), 0.0, [(1, -1, 1)]).tolist()
    [0.0, 1.0, 0.0, 2.0, 0.0]
    """
    config = [tuple(int(v) for v in c) for c in padding_config]
    shape = tuple(shape_of(operand))
    if len(config) != len(shape) or any(len(c) != 3 or c[2] < 0 for c in config):
        raise ValueError(f"pad: padding_config {padding_config} must hold one (low, high, "
                         f"interior >= 0) triple per axis of a shape {shape}")
    mask = np.ones(shape, dtype=bool)
    for axis, (low, high, interior) in enumerate(config):
        operand = _spread(operand, axis, low, high, interior)
        mask = _spread_mask(mask, axis, low, high, interior)
    return R.where(mask, operand, padding_value)


def _crop_and_pad(x, axis, low, high, pad_with):
    """x along ``axis`` with ``low`` and ``high`` entries added before and after, then
    the negative ones cropped (from the padded array, as XLA's)."""
    if low > 0 or high > 0:
        widths = [(0, 0)] * len(shape_of(x))
        widths[axis] = (builtins.max(low, 0), builtins.max(high, 0))
        x = pad_with(x, widths)
    if low < 0 or high < 0:
        size = shape_of(x)[axis]
        x = R.getitem(x, index=(builtins.slice(None),) * axis + (builtins.slice(
            builtins.max(-low, 0), builtins.max(size - builtins.max(-high, 0), 0)),))
    return x


def _spread(x, axis, low, high, interior):
    """x along ``axis`` with ``interior`` zeros between neighbours, then ``low`` and
    ``high`` zeros before and after (cropped where negative): operations every
    transform differentiates and batches."""
    shape, n = tuple(shape_of(x)), shape_of(x)[axis]
    if interior and n > 1:
        column = R.reshape(x, shape[:axis + 1] + (1,) + shape[axis + 1:])
        gap = xp.zeros_like(raw(column))  # (numbers of no derivative, x's library)
        spread = R.concatenate([column] + [gap] * interior, axis=axis + 1)
        x = R.reshape(spread, shape[:axis] + (n * (interior + 1),) + shape[axis + 1:])
        x = R.getitem(x, index=(builtins.slice(None),) * axis
                      + (builtins.slice(0, (n - 1) * (interior + 1) + 1),))
    return _crop_and_pad(x, axis, low, high, R.pad)


def _spread_mask(mask, axis, low, high, interior):
    """Where ``_spread`` puts the operand's entries (a NumPy bool array)."""
    n = mask.shape[axis]
    if interior and n > 1:
        spread = np.zeros(mask.shape[:axis] + ((n - 1) * (interior + 1) + 1,)
                          + mask.shape[axis + 1:], dtype=bool)
        spread[(builtins.slice(None),) * axis + (builtins.slice(None, None, interior + 1),)] \
            = mask
        mask = spread
    return np.asarray(_crop_and_pad(mask, axis, low, high, np.pad))


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` holds, else ``on_false``, elementwise; each gets the
    gradient where it is picked.

    >>> cr.lax.select(np.array([True, False]), np.ones(2), np.zeros(2)).tolist()
    [1.0, 0.0]
    """
    return R.where(pred, on_true, on_false)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise: ``which`` a bool (False picks ``cases[0]``) or an
    integer array (0 to len(cases) - 1).

    >>> cr.lax.select_n(np.array([2, 0, 1]), np.zeros(3), np.ones(3), np.full(3, 2.0)).tolist()
    [2.0, 0.0, 1.0]
    """
    if not cases:
        raise ValueError("select_n: at least one case is needed")
    out = cases[0]
    for k, case in enumerate(cases[1:], start=1):
        out = R.where(P.equal(which, k) if np.result_type(raw(which)) != np.bool_ else which,
                      case, out)
    return out


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each axis i (one count per axis).

    >>> cr.lax.tile(np.array([1.0, 2.0]), (2,)).tolist()
    [1.0, 2.0, 1.0, 2.0]
    """
    return R.tile(operand, tuple(reps))


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """``operand`` cut along ``axis`` into consecutive pieces of the given ``sizes``
    (which add up to the axis' length).

    >>> [p.tolist() for p in cr.lax.split(np.arange(5.0), (2, 3))]
    [[0.0, 1.0], [2.0, 3.0, 4.0]]
    """
    shape = tuple(shape_of(operand))
    axis = axis % len(shape)
    if builtins.sum(sizes) != shape[axis]:
        raise ValueError(f"split: sizes {tuple(sizes)} do not add up to {shape[axis]}, "
                         f"the length of axis {axis}")
    ends = np.cumsum([0] + list(sizes)).tolist()
    return [slice_in_dim(operand, a, b, 1, axis) for a, b in zip(ends, ends[1:])]


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """The operands (of one shape) stacked along a new axis ``axis``.

    >>> cr.lax.stack([np.ones(2), np.zeros(2)], axis=1).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    return R.stack(list(operands), axis=axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of x along ``axis``, that axis dropped.

    >>> [p.tolist() for p in cr.lax.unstack(np.arange(4.0).reshape(2, 2), axis=1)]
    [[0.0, 2.0], [1.0, 3.0]]
    """
    n = shape_of(x)[axis % len(shape_of(x))]
    return tuple(index_in_dim(x, k, axis, keepdims=False) for k in range(n))


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with its slice at ``index`` along ``axis`` overwritten by ``update``
    (of one axis fewer, or of size 1 there); the index is clamped so the slice fits.

    >>> cr.lax.dynamic_update_index_in_dim(np.zeros(4), 1.0, 2, axis=0).tolist()
    [0.0, 0.0, 1.0, 0.0]
    """
    shape = tuple(shape_of(operand))
    axis = axis % len(shape)
    if len(shape_of(update)) != len(shape):
        update = expand_dims(update, (axis,))
    if allow_negative_indices and isinstance(index, (int, np.integer)) and index < 0:
        index = index + shape[axis]
    return dynamic_update_slice(operand, update,
                                [index if k == axis else 0 for k in range(len(shape))])


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (any pytree) unchanged: on a CPU there is no compiler to hold back.

    >>> cr.lax.optimization_barrier((1.0, 2.0))
    (1.0, 2.0)
    """
    return operand


_PYTHON_SCALARS = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64),
                   complex: np.dtype(np.complex128)}


def dtype(x: Any) -> np.dtype:
    """The dtype of a value (an array, a Tensor, a Python number) or of a type or dtype
    name: Python's int, float and complex as int64, float64 and complex128 (JAX's with
    64-bit values on, chainrule's).

    >>> cr.lax.dtype(1.0), cr.lax.dtype(np.ones(2, np.int8)), cr.lax.dtype("float32")
    (dtype('float64'), dtype('int8'), dtype('float32'))
    """
    if x is None:
        raise ValueError("lax.dtype: None has no dtype")
    if isinstance(x, type) and x in _PYTHON_SCALARS:
        return _PYTHON_SCALARS[x]
    if type(x) in _PYTHON_SCALARS:
        return _PYTHON_SCALARS[type(x)]
    if isinstance(x, (type, str, np.dtype)):
        return np.dtype(x)
    return np.result_type(raw(x))


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose values are not to be relied on (zeros,
    here, as JAX's on a CPU).

    >>> cr.lax.empty((2,), np.float32).shape
    (2,)
    """
    return np.zeros(shape, dtype=dtype)


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast to the shape of ``like_arr``.

    >>> cr.lax.broadcast_like(np.array([1.0, 2.0]), np.zeros((3, 2))).shape
    (3, 2)
    """
    return R.broadcast_to(arr, tuple(shape_of(like_arr)))

"""``jax.lax``'s scatters, XLA's general scatter with ``ScatterDimensionNumbers``:
``scatter`` (overwrite), ``scatter_add``, ``scatter_sub``, ``scatter_mul``,
``scatter_min`` and ``scatter_max``. Each window of ``updates`` is written at the place
its row of indices starts, as ``x.at[index]``'s updates are (repeated places add up,
multiply...), so their derivatives are those updates' and every transform takes them.
``mode`` is JAX's: None or ``"fill"``/``"drop"`` drops a window that would leave the
operand; ``"clip"`` and ``"promise_in_bounds"`` move it inside.

>>> dn = cr.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
...                                     scatter_dims_to_operand_dims=(0,))
>>> cr.lax.scatter_add(np.zeros(3), np.array([[0], [2], [0], [7]]), np.ones(4), dn).tolist()
[2.0, 0.0, 1.0]
"""

from collections.abc import Sequence
from typing import Any, NamedTuple


from .. import rules as R
from ..primitive import shape_of
from ..rules import predicates as P
from ..rules.indexing import index_add, index_max, index_min, index_multiply, index_set
from .lax_gather import GatherScatterMode, axis_index

__all__ = ["ScatterDimensionNumbers", "scatter", "scatter_add", "scatter_sub", "scatter_mul",
           "scatter_min", "scatter_max"]


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter reads its indices and updates (XLA's, JAX's):
    ``update_window_dims``, the axes of ``updates`` that run along a window;
    ``inserted_window_dims``, operand axes a window has size 1 along (absent from
    ``updates``); ``scatter_dims_to_operand_dims``, the operand axis each entry of an
    index row starts; ``operand_batching_dims`` and ``scatter_indices_batching_dims``,
    axes of the operand and of the indices paired as one batch.

    >>> cr.lax.ScatterDimensionNumbers((1,), (0,), (0,)).inserted_window_dims
    (0,)
    """
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


def _scatter(update, name, operand, scatter_indices, updates, dn, mode):
    mode = GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.ONE_HOT:
        raise ValueError(f"lax.{name}: mode 'one_hot' (an accelerator's way to "
                         f"compute a scatter) is not one chainrule takes; expected 'clip', "
                         f"'fill' or 'promise_in_bounds'")
    oshape, ishape = tuple(shape_of(operand)), tuple(shape_of(scatter_indices))
    ushape, rank = tuple(shape_of(updates)), len(oshape)
    inserted, starts_of = tuple(dn.inserted_window_dims), tuple(dn.scatter_dims_to_operand_dims)
    obatch, ibatch = tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims)
    wdims = tuple(dn.update_window_dims)
    window = [d for d in range(rank) if d not in inserted and d not in obatch]
    batch_shape = ishape[:-1] if ishape else ()
    nb, nw = len(batch_shape), len(window)
    scatter_axes = [a for a in range(len(ushape)) if a not in wdims]
    sizes = [1] * rank
    for d, a in zip(window, wdims):
        sizes[d] = ushape[a] if a < len(ushape) else -1
    if not ishape or ishape[-1] != len(starts_of) or len(wdims) != nw or \
            len(ushape) != nb + nw or sorted(wdims) != list(wdims) or \
            tuple(ushape[a] for a in scatter_axes) != batch_shape or \
            len(obatch) != len(ibatch) or any(not 0 <= s <= n for s, n in zip(sizes, oshape)):
        raise ValueError(f"lax.{name}: dimension numbers {dn} do not fit an operand of "
                         f"shape {oshape}, indices of shape {ishape} (index rows along the "
                         f"last axis) and updates of shape {ushape}")
    updates = R.transpose(updates, tuple(scatter_axes) + wdims)  # batch axes, then window
    behind = (1,) * nw
    drop = mode == GatherScatterMode.FILL_OR_DROP
    starts, outside = {}, None
    for k, d in enumerate(starts_of):
        start = R.getitem(scatter_indices, index=(Ellipsis, k))
        if drop:
            out = P.logical_or(P.less(start, 0), P.greater(start, oshape[d] - sizes[d]))
            outside = out if outside is None else P.logical_or(outside, out)
        starts[d] = R.clip(start, 0, oshape[d] - sizes[d])
    target = operand
    if drop and starts:  # a dropped window goes to a margin past the end, cut off after
        widths = [(0, sizes[d] if d in starts else 0) for d in range(rank)]
        target = R.pad(operand, widths)
        for d in starts:
            starts[d] = R.where(outside, oshape[d], starts[d])
    index = []
    for d in range(rank):
        start = R.reshape(starts[d], batch_shape + behind) if d in starts else None
        index.append(R.broadcast_to(
            axis_index(d, start, batch_shape, window, sizes, obatch, ibatch),
            batch_shape + tuple(sizes[d] for d in window)))
    out = update(target, updates, index=tuple(index))
    if target is not operand:
        out = R.getitem(out, index=tuple(slice(0, n) for n in oshape))
    return out


def scatter(operand: Any, scatter_indices: Any, updates: Any,
            dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with the windows of ``updates`` written over it where the rows of
    ``scatter_indices`` start (at a place written twice, one of them wins, as XLA
    leaves it); the overwritten entries get no gradient.

    >>> dn = cr.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> cr.lax.scatter(np.zeros(3), np.array([[2]]), np.array([5.0]), dn).tolist()
    [0.0, 0.0, 5.0]
    """
    return _scatter(index_set, "scatter", operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_add(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with the windows of ``updates`` added where the rows of
    ``scatter_indices`` start (repeated places add up).

    >>> dn = cr.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> cr.lax.scatter_add(np.ones(3), np.array([[1], [1]]), np.array([2.0, 3.0]), dn).tolist()
    [1.0, 6.0, 1.0]
    """
    return _scatter(index_add, "scatter_add", operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with the windows of ``updates`` subtracted where the rows of
    ``scatter_indices`` start.

    >>> dn = cr.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> cr.lax.scatter_sub(np.ones(3), np.array([[1], [1]]), np.array([2.0, 3.0]), dn).tolist()
    [1.0, -4.0, 1.0]
    """
    return _scatter(index_add, "scatter_sub", operand, scatter_indices, R.negative(updates),
                    dimension_numbers, mode)


def scatter_mul(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with its entries multiplied by the windows of ``updates`` where the
    rows of ``scatter_indices`` start (repeated places multiply up).

    >>> dn = cr.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> cr.lax.scatter_mul(np.ones(3), np.array([[1], [1]]), np.array([2.0, 3.0]), dn).tolist()
    [1.0, 6.0, 1.0]
    """
    return _scatter(index_multiply, "scatter_mul", operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_min(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with each entry the smallest of itself and the updates written there.

    >>> dn = cr.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> cr.lax.scatter_min(np.ones(3), np.array([[1], [2]]), np.array([0.5, 3.0]), dn).tolist()
    [1.0, 0.5, 1.0]
    """
    return _scatter(index_min, "scatter_min", operand, scatter_indices, updates,
                    dimension_numbers, mode)


def scatter_max(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with each entry the largest of itself and the updates written there.

    >>> dn = cr.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> cr.lax.scatter_max(np.ones(3), np.array([[1], [2]]), np.array([0.5, 3.0]), dn).tolist()
    [1.0, 1.0, 3.0]
    """
    return _scatter(index_max, "scatter_max", operand, scatter_indices, updates,
                    dimension_numbers, mode)

"""``jax.lax.gather``, XLA's general gather, with ``GatherDimensionNumbers`` and
``GatherScatterMode``: each row of start indices picks a window of the operand (its
sizes ``slice_sizes``), the windows stacked. It becomes one advanced index of the
operand (an index array per operand axis: the start, clamped, plus the position in the
window), so its derivatives are those of indexing (repeated picks add up) and every
transform takes it, the indices traced too. The scatters are not here.

>>> dn = cr.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
...                                    start_index_map=(0,))
>>> cr.lax.gather(np.arange(6.0).reshape(3, 2), np.array([[2], [0]]), dn, (1, 2)).tolist()
[[4.0, 5.0], [0.0, 1.0]]
"""

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import rules as R
from ..primitive import raw, shape_of
from ..rules import predicates as P

__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "gather"]


class GatherDimensionNumbers(NamedTuple):
    """How ``gather`` reads its indices and lays out its result (XLA's, JAX's):
    ``offset_dims``, the result's axes that run along a window; ``collapsed_slice_dims``,
    operand axes whose window has size 1 and is dropped; ``start_index_map``, the operand
    axis each entry of an index row starts; ``operand_batching_dims`` and
    ``start_indices_batching_dims``, axes of the operand and of the indices paired as
    one batch.

    >>> cr.lax.GatherDimensionNumbers((1,), (0,), (0,)).operand_batching_dims
    ()
    """
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What an index that would read outside the operand does: ``CLIP``, the window
    moved inside; ``FILL_OR_DROP``, the window filled with ``fill_value``;
    ``PROMISE_IN_BOUNDS`` (the default of ``gather``), none happens, clamped as CLIP.

    >>> cr.lax.GatherScatterMode.from_any("clip")
    <GatherScatterMode.CLIP: 0>
    """
    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2
    ONE_HOT = 3

    @staticmethod
    def from_any(s: "str | GatherScatterMode | None") -> "GatherScatterMode":
        """The mode a string (``"clip"``, ``"fill"``, ``"drop"``,
        ``"promise_in_bounds"``, ``"one_hot"``) or None (``FILL_OR_DROP``) names, as
        JAX's.

        >>> cr.lax.GatherScatterMode.from_any(None)
        <GatherScatterMode.FILL_OR_DROP: 1>
        """
        if isinstance(s, GatherScatterMode):
            return s
        names = {"clip": 0, None: 1, "fill": 1, "drop": 1, "promise_in_bounds": 2,
                 "one_hot": 3}
        if s not in names:
            raise ValueError(f"Unknown gather mode {s!r}")
        return GatherScatterMode(names[s])


def _default_fill(dtype):
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: Any = None, fill_value: Any = None) -> Any:
    """The windows of ``operand`` that the rows of ``start_indices`` (its last axis
    holds each row) start, as XLA's gather: the result has the indices' other axes,
    with the window's axes (those of ``slice_sizes`` not collapsed) at ``offset_dims``.
    ``mode`` None or ``"promise_in_bounds"`` and ``"clip"`` move a window that would
    leave the operand inside it; ``"fill"`` fills it with ``fill_value`` (None: NaN for
    floats, the lowest int, the highest unsigned int, True). ``"one_hot"`` is refused.

    >>> dn = cr.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
    ...                                    start_index_map=(0,))
    >>> cr.lax.gather(np.arange(5.0), np.array([[1], [4]]), dn, (2,)).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> cr.lax.gather(np.arange(5.0), np.array([[1], [4]]), dn, (2,), mode="fill").tolist()
    [[1.0, 2.0], [nan, nan]]
    """
    dn = dimension_numbers
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
        GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.ONE_HOT:
        raise ValueError("lax.gather: mode 'one_hot' (an accelerator's way to "
                         "compute a gather) is not one chainrule takes; expected 'clip', "
                         "'fill' or 'promise_in_bounds'")
    oshape, ishape = tuple(shape_of(operand)), tuple(shape_of(start_indices))
    rank, sizes = len(oshape), tuple(int(n) for n in slice_sizes)
    collapsed, starts_of = tuple(dn.collapsed_slice_dims), tuple(dn.start_index_map)
    obatch, ibatch = tuple(dn.operand_batching_dims), tuple(dn.start_indices_batching_dims)
    batch_shape = ishape[:-1]
    window = [d for d in range(rank) if d not in collapsed and d not in obatch]
    nb, nw = len(batch_shape), len(window)
    if not ishape or ishape[-1] != len(starts_of) or len(sizes) != rank or \
            sorted(dn.offset_dims) != list(dn.offset_dims) or any(
                not 0 <= p < nb + nw for p in dn.offset_dims) or len(dn.offset_dims) != nw or len(obatch) != len(ibatch) or any(
                sizes[d] != 1 for d in collapsed + obatch) or any(
                not 0 <= s <= n for s, n in zip(sizes, oshape)):
        raise ValueError(f"lax.gather: dimension numbers {dn} and slice_sizes {sizes} do "
                         f"not fit an operand of shape {oshape} and start indices of "
                         f"shape {ishape} (index rows along the last axis)")
    behind = (1,) * nw   # the window's axes, after the batch's
    index, inside = [], None
    for d in range(rank):
        if d in starts_of:
            start = R.getitem(start_indices, index=(Ellipsis, starts_of.index(d)))
            if mode == GatherScatterMode.FILL_OR_DROP:
                ok = P.logical_and(P.greater_equal(start, 0),
                                   P.less_equal(start, oshape[d] - sizes[d]))
                inside = ok if inside is None else P.logical_and(inside, ok)
            start = R.clip(start, 0, oshape[d] - sizes[d])
            start = R.reshape(start, batch_shape + behind)
        else:
            start = None
        index.append(axis_index(d, start, batch_shape, window, sizes, obatch, ibatch))
    out = R.getitem(operand, index=tuple(index))
    out = R.broadcast_to(out, batch_shape + tuple(sizes[d] for d in window))
    if inside is not None:
        fill = _default_fill(np.result_type(raw(operand))) if fill_value is None \
            else fill_value
        out = R.where(R.reshape(inside, batch_shape + behind), out, fill)
    offsets, batch_axes, perm = list(dn.offset_dims), iter(range(nb)), []
    for p in range(nb + nw):
        perm.append(nb + offsets.index(p) if p in offsets else next(batch_axes))
    return R.transpose(out, tuple(perm)) if perm != list(range(nb + nw)) else out


def axis_index(d, start, batch_shape, window, sizes, obatch, ibatch):
    """The index along operand axis ``d`` of every (batch, window) place, shaped
    batch_shape + one axis per window axis: the window's start (``start``, from the
    indices; else the batch position for a batching axis, else 0), plus the offset
    inside the window. Gather and the scatters index alike."""
    nb, nw = len(batch_shape), len(window)
    if start is None and d in obatch:
        axis = ibatch[obatch.index(d)]
        line = [1] * (nb + nw)
        line[axis] = batch_shape[axis]
        start = np.arange(batch_shape[axis]).reshape(line)
    elif start is None:
        start = 0
    if d in window:
        line = [1] * (nb + nw)
        line[nb + window.index(d)] = sizes[d]
        start = start + np.arange(sizes[d]).reshape(line)
    return start

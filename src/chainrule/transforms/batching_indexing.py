"""Batching rules of indexing (getitem and the indexed updates) for ``cr.vmap``.

An index may be batched as well as the array it indexes: ``W[i]`` with one ``i`` per
example (an embedding lookup), ``x[i]`` with both mapped, or the scatter that the
backward pass of ``sort``, ``take_along_axis`` or ``max`` builds from indices computed
from batched data. JAX turns each into one gather or scatter with the batch as one more
index dimension; in NumPy's advanced indexing that is:

* x batched, index batched: ``x[arange(B), i]``, the ``arange`` shaped to broadcast in
  front of the index arrays (whose batch axis is already first), so that example b
  reads ``x[b][i[b]]``;
* x shared, index batched: ``x[i]``; the index's batch axis becomes the result's;
* x batched, index shared: ``x[:, i]``.

One NumPy rule moves axes around: advanced indices (arrays and integers) that a slice
separates put their broadcast axes first, in front of every sliced axis. The batched
index may be separated where one example's was not (``x[:, i]`` becomes
``x[arange(B), :, i]``), so each rule says where the result's axes land and moves
them back to the batch axis first, then one example's layout. A scatter
(``index_set``, ``index_add``, ``index_multiply``, ``index_min``, ``index_max``) writes
through the same index into the batched array, its values moved into that same layout
first.

A rule here returns None where the index is too irregular to batch in one call (a
boolean mask computed from batched data selects a different number of entries per
example; a ``None`` axis inside a scatter): ``batching.py`` then runs the operation
example by example, counted in its ``fallbacks``.
"""

from typing import Any

import numpy as np

from .. import rules as ops
from ..primitive import Box, shape_of

__all__ = ["getitem", "index_update", "along_an_axis", "ALONG_AN_AXIS"]


def _mine(part, level):
    """Whether an index part is batched at this vmap level (its batch axis first)."""
    return isinstance(part, Box) and part._batched and part._level == level


def _is_bool(part):
    if isinstance(part, (bool, np.bool_)):
        return True
    dtype = getattr(part, "dtype", None)
    return dtype is not None and np.dtype(dtype) == np.bool_


def _basic(index):
    """Whether an index is NumPy's basic indexing by integers, slices and an Ellipsis
    only (no array, mask, bool or None), which a leading slice extends to a batch."""
    for part in (index if type(index) is tuple else (index,)):
        kind = type(part)
        if kind is not slice and part is not Ellipsis and (
                kind is bool or not isinstance(part, (int, np.integer))):
            return False
    return True


def _spelled_out(index, rank):
    """(parts, new_axes): the index with one part per axis of x (Ellipsis written as
    slices, a shared boolean mask as its ``nonzero()`` arrays, each ``None`` as a
    slice over an axis inserted at ``new_axes``), or None if a mask is batched or a
    Python bool (its selection has no fixed shape)."""
    parts = []
    for part in (index if isinstance(index, tuple) else (index,)):
        if _is_bool(part):
            if type(part) is not np.ndarray or part.ndim == 0:
                return None
            parts.extend(np.nonzero(part))
        else:
            parts.append(part)
    consumed = sum(1 for p in parts if p is not None and p is not Ellipsis)
    spelled, new_axes = [], []
    for part in parts:
        if part is Ellipsis:
            spelled.extend([slice(None)] * (rank - consumed))
        elif part is None:
            new_axes.append(len(spelled))
            spelled.append(slice(None))
        else:
            spelled.append(part)
    return spelled, new_axes


def _plan(call, index, x, x_batched):
    """How one batched call indexes: (x, index, move, region_rank, new_axes).
    ``x[index]`` holds the batch's regions; ``move = (source, destination, count)``
    takes its axes to the batch axis first, then one example's region (of
    ``region_rank`` axes); x gained the axes ``new_axes`` (after the batch's) for the
    index's ``None``s. None if the index is irregular."""
    rank = len(shape_of(x)) - x_batched
    spelled = _spelled_out(index, rank)
    if spelled is None:
        return None
    parts, new_axes = spelled
    if new_axes:
        x = ops.expand_dims(x, tuple(a + x_batched for a in new_axes))
    advanced = [k for k, p in enumerate(parts) if not isinstance(p, slice)]
    together = bool(advanced) and advanced[-1] - advanced[0] + 1 == len(advanced)
    before = advanced[0] if together else 0  # sliced axes in front of the broadcast ones
    batched = [k for k in advanced if _mine(parts[k], call.level)]
    # the rank of the arrays' broadcast, in one example (a batch answers its shape)
    region = len(np.broadcast_shapes(*[shape_of(parts[k]) for k in advanced]))
    region_rank = rank + len(new_axes) - len(advanced) + region
    if not batched:  # x[:, i]: the batch is one more sliced axis
        move = (region, 0, 1) if advanced and not together else (0, 0, 0)
        return x, (slice(None),) + tuple(parts), move, region_rank, new_axes
    for k in batched:  # the batch axis in front of the examples' broadcast axes
        value = parts[k]._contents()
        lacking = region - (len(shape_of(value)) - 1)
        parts[k] = ops.expand_dims(value, tuple(range(1, 1 + lacking))) if lacking else value
    if x_batched:  # x[arange(B), ...]: the batch axis and the broadcast axes lead
        rows = np.arange(call.size).reshape((call.size,) + (1,) * region)
        return x, (rows,) + tuple(parts), (1, 1 + before, region), region_rank, new_axes
    # x[..., i]: the index's batch axis is the first broadcast axis
    return x, tuple(parts), (before, 0, 1), region_rank, new_axes


def _moved(x, move, back=False):
    source, destination, count = move
    if source == destination or count == 0:
        return x
    if back:
        source, destination = destination, source
    return ops.moveaxis(x, tuple(range(source, source + count)),
                        tuple(range(destination, destination + count)))


def getitem(call: Any) -> Any:
    """``x[index]`` on a batch (``call``, batching.py's Call), x or the index (or both)
    batched; None to fall back.

    >>> W = cr.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> cr.vmap(lambda W, i: W[i], in_axes=(None, 0))(W, np.array([2, 0])).data
    array([[5., 6.],
           [1., 2.]])
    >>> cr.vmap(lambda x, i: x[i])(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1, 0]))
    array([2., 3.])
    """
    if any(call.batched[1:]):
        return None
    index = call.params(("index",), (None,))["index"]
    if call.batched[0] and _basic(index):  # slices and integers: one more slice in front
        return call.prim(call.values[0], index=(slice(None),) + (
            index if type(index) is tuple else (index,)))
    plan = _plan(call, index, call.values[0], call.batched[0])
    if plan is None:
        return None
    x, index, move, _, _ = plan
    return _moved(call.prim(x, index=index), move)


def index_update(call: Any) -> Any:
    """An indexed update (``index_set``, ``index_add``, ``index_multiply``,
    ``index_min``, ``index_max``) on a batch (``call``, batching.py's Call; the
    array, the values or the index batched): one scatter into the batched array;
    None to fall back.

    >>> add_at = lambda x, i: x.at[i].add(1.0)
    >>> cr.vmap(add_at, in_axes=(None, 0))(cr.tensor([0.0, 0.0]), np.array([1, 0])).data
    array([[0., 1.],
           [1., 0.]])
    """
    p = call.params(("value", "index"), (None, None))
    if len(call.values) > 2:
        return None
    x = call.values[0] if call.batched[0] else \
        ops.broadcast_to(call.values[0], (call.size,) + shape_of(call.values[0]))
    value = call.values[1] if len(call.values) > 1 else p["value"]
    value_batched = len(call.values) > 1 and call.batched[1]
    if _basic(p["index"]):  # slices and integers: one more slice in front, as getitem's
        out = _basic_update(call.prim, x, value, value_batched, p["index"])
        if out is not None:
            return out
    plan = _plan(call, p["index"], x, True)
    if plan is None:
        return None
    x, index, move, region_rank, new_axes = plan
    if value_batched or len(shape_of(value)) > 0:  # in the batch's region layout
        shape = shape_of(value)[value_batched:]
        value = ops.reshape(value, shape_of(value)[:value_batched] +
                            (1,) * (1 + region_rank - value_batched - len(shape)) + shape)
        value = _moved(value, move, back=True)
    out = call.prim(x, value, index=index)
    return ops.squeeze(out, tuple(a + 1 for a in new_axes)) if new_axes else out


def _basic_update(prim, x, value, value_batched, index):
    """An indexed update of the batch ``x`` through a basic index (slices and integers,
    which keep the batch axis where it is): the values' batch axis put in front of one
    example's region, padded with 1s as broadcasting pads them. None for values of more
    axes than the region (the general plan decides)."""
    parts = index if type(index) is tuple else (index,)
    region_rank = len(shape_of(x)) - 1 - len(
        [part for part in parts if part is not Ellipsis and type(part) is not slice])
    shape = shape_of(value)[value_batched:]
    if len(shape) > region_rank:
        return None
    if value_batched and len(shape) < region_rank:
        value = ops.reshape(value, shape_of(value)[:1] + (1,) * (region_rank - len(shape))
                            + shape)
    return prim(x, value, index=(slice(None),) + parts)


# Where the indices come from: NumPy's queries of one example's order, and their axes
ALONG_AN_AXIS = {np.argmax: None, np.argmin: None, np.argsort: -1}


def along_an_axis(func: Any, value: Any, kwargs: dict[str, Any]) -> Any:
    """``np.argmax``, ``np.argmin`` or ``np.argsort`` of a batch (``value``, the batch
    axis first) in one call: the example's axis shifted past the batch's, or each
    example flattened for ``axis=None``. None for other arguments (``out=``,
    ``keepdims=``, an axis out of range): then each example is asked on its own.

    >>> along_an_axis(np.argsort, np.array([[3, 1, 2], [0, 5, 4]]), {})
    array([[1, 2, 0],
           [0, 2, 1]])
    >>> cr.vmap(lambda x: x[cr.argmax(x)])(np.array([[3.0, 1.0], [0.0, 5.0]]))
    array([3., 5.])
    """
    if not set(kwargs) <= {"axis", "kind", "stable"}:
        return None
    while isinstance(value, Box) and not value._batched:  # (an order has no derivative)
        value = value._contents()
    rank = len(shape_of(value)) - 1
    axis = kwargs.get("axis", ALONG_AN_AXIS[func])
    if axis is None:
        value, axis, rank = ops.reshape(value, shape_of(value)[:1] + (-1,)), 0, 1
    if not -rank <= axis < rank:
        return None
    return func(value, **{**kwargs, "axis": axis % rank + 1})

"""Cumulative operations and ordering: cumsum, cumprod, diff, sort, partition, unique,
take, take_along_axis, and interp (which looks up its sorted knots).

Only ``cumsum`` is a primitive (its VJP is a cumulative sum running the other way).
The rest are compositions: selecting entries is indexing (``getitem``, whose gradient
scatters back), so sort, partition, unique (each value at its first occurrence) and take
differentiate through the entries they select; ``cumprod`` is a product over a triangle
of its inputs (``prod``'s rule is exact at zeros, so cumprod's is too); ``diff`` is slicing and subtraction. Which entries are
selected (the order itself) is piecewise constant: it has no derivative. interp takes
the two knots around each point and draws the line between them, so it differentiates in
the points, the knots and the values, and its slope at a knot is the segment's to the
right (the last knot's, the segment's to the left), JAX's choice.
"""

from collections import namedtuple
from collections.abc import Sequence

from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from ..libraries import unwrapped
from ..primitive import Box, along_axis, ndim_of, raw, shape_of
from ..arrays import as_array
from .common import Result, float_dtype, op, torch_names
from .complexes import is_complex
from .elementwise import absolute, clip, remainder, where
from .reductions import prod
from .indexing import getitem
from .joining import concatenate
from .shapes import astype, broadcast_to, expand_dims, moveaxis, reshape

__all__ = ["cumsum", "cumprod", "diff", "sort", "topk", "partition", "unique", "take",
           "take_along_axis", "interp"]
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


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *,
           equal_nan: bool = True, sorted: bool = True) -> Result:  # noqa: A002
    """The sorted distinct values of ``ar`` (of its slices along ``axis``), as np.unique,
    with the same optional index, inverse and counts (plain integer arrays). Each value
    is its first occurrence, and carries that entry's gradient: JAX's ``jnp.unique(x,
    size=...)`` gives the same derivative (without ``size`` its gradient is zero, and
    torch's unique has none).

    >>> x = cr.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
    >>> values = cr.unique(x)
    >>> values.data.tolist()
    [1.0, 2.0, 3.0]
    >>> (values * cr.tensor([1.0, 10.0, 100.0])).sum().backward()
    >>> x.grad.tolist()                   # 3.0 first appears at entry 0
    [100.0, 1.0, 0.0, 10.0]
    """
    options = {"equal_nan": equal_nan}
    if not sorted:  # (NumPy 2.3's keyword: passed only where it is asked for)
        options["sorted"] = False
    found = xp.unique(raw(ar), return_index=True, return_inverse=return_inverse,
                      return_counts=return_counts, axis=axis, **options)
    values = take(ar, found[1], axis)
    extras = tuple(unwrapped(a) for a in ((found[1],) if return_index else ()) + found[2:])
    return (values,) + extras if extras else values


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
    return TopK(take_along_axis(x, indices, axis), unwrapped(indices))


def partition(x: ArrayLike, kth: int | Sequence[int], axis: int = -1) -> Result:
    """x rearranged along ``axis`` so that the entry at ``kth`` is where sorting would put
    it, smaller ones before and larger after, as np.partition.

    >>> cr.partition(cr.tensor([3.0, 1.0, 2.0, 0.0]), 1).data[1].item()
    1.0
    """
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return take_along_axis(x, xp.argpartition(raw(x), kth, axis=axis), axis)


def _knots_at_or_below(knots, x):
    """For each entry of x, how many of the sorted knots are <= it, as np.searchsorted(
    knots, x, side="right") (but 0 for a NaN point), on raw values: a bisection of every
    point at once, each step a gather and a comparison, which batch under cr.vmap
    (searchsorted would run once per example) and record under cr.jit."""
    knots, points = raw(knots), raw(x)
    steps = [2 ** p for p in reversed(range(shape_of(knots)[0].bit_length()))]
    # knots padded to 2 * steps[0] - 1 with NaN, which is <= no point: every count a
    # step tries reads an entry, and one beyond the last knot is never taken
    padding = xp.full(2 * steps[0] - 1 - shape_of(knots)[0], xp.nan)
    knot_at = _reader(concatenate([knots, padding]), points)
    count = xp.zeros(shape_of(x), dtype=xp.int64)
    for step in steps:
        count = where(knot_at(count + (step - 1)) <= points, count + step, count)
    return count


def _reader(table, *sources):
    """A function of an index computed from ``sources``: the entries of the 1-d ``table``
    there. It reads from ``table`` joined with the raw sources, which the index never
    reaches: when the index is traced (cr.jit) or batched (cr.vmap), so is that array,
    and cr.jit can record no constant array indexed by a traced index."""
    joined = concatenate([table] + [reshape(raw(s), (-1,)) for s in sources])
    return lambda index: take(joined, index)


def _one_period(x, knots, values, period):
    """x and the knots taken modulo |period|, the knots sorted with their values, and one
    more knot at each end (the last one period before the first, the first one after the
    last): interpolation on them is periodic."""
    if not isinstance(period, Box) and period == 0:
        raise ValueError("interp: period=0; expected a non-zero period")
    # (Python's abs keeps a number a Python number, which leaves float32 points float32)
    period = absolute(period) if isinstance(period, Box) else abs(period)
    x, knots = remainder(x, period), remainder(knots, period)
    order = xp.argsort(raw(knots), kind="stable")
    knots, values = take(knots, order), _reader(values, knots)(order)
    knots = concatenate([knots[-1:] - period, knots, knots[:1] + period])
    values = concatenate([values[-1:], values, values[:1]])
    return x, knots, values


def _interpolate(x, knots, values, left, right, period):
    # a list (of numbers, or of Tensors: their stack) as one array, as NumPy takes it
    x, knots, values = (reshape(v, shape_of(v)) if isinstance(v, (list, tuple)) else v
                        for v in (x, knots, values))
    shapes = (shape_of(knots), shape_of(values))
    if len(shapes[0]) != 1 or shapes[0] != shapes[1] or not shapes[0][0]:
        raise ValueError(f"interp: xp of shape {shapes[0]} and fp of shape {shapes[1]}; "
                         f"expected two non-empty 1-d arrays of the same length")
    if is_complex(x) or is_complex(knots):
        raise ValueError("interp: complex x or xp; expected real points (fp may be complex)")
    for name, given in (("left", left), ("right", right)):
        if isinstance(given, str) and given != "extrapolate":
            raise ValueError(f"interp: {name}={given!r}; expected a number, None or "
                             f"'extrapolate'")
    if period is not None:
        x, knots, values = _one_period(x, knots, values, period)
    n = shape_of(knots)[0]
    right_end = clip(_knots_at_or_below(knots, x), 1, n - 1)  # of each point's segment
    knot_at, value_at = _reader(knots, x), _reader(values, knots, x)
    x0, x1 = knot_at(right_end - 1), knot_at(right_end)
    f0, f1 = value_at(right_end - 1), value_at(right_end)
    width = x1 - x0
    # a segment of no width (repeated knots) takes its left value: no division by 0
    flat = xp.abs(raw(width)) <= xp.spacing(xp.finfo(float_dtype(knots)).eps)
    f = where(flat, f0, f0 + (x - x0) / where(flat, 1, width) * (f1 - f0))
    if period is None:
        outside = ((raw(x) < raw(knots)[0], left, values[0]),
                   (raw(x) > raw(knots)[-1], right, values[-1]))
        for beyond, given, edge in outside:
            if not isinstance(given, str):
                f = where(beyond, edge if given is None else given, f)
    return f


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | str | None = None,
           right: ArrayLike | str | None = None, period: ArrayLike | None = None) -> Result:
    """The piecewise-linear interpolation at x of the points (xp, fp), xp increasing, as
    np.interp: fp[0] left of xp[0] and fp[-1] right of xp[-1] (or ``left``, ``right``;
    JAX's ``'extrapolate'`` continues the end segments), or knots repeating every
    ``period``. Differentiable in x, xp and fp; at a knot the slope is the segment's to
    the right (at the last knot, to the left), as JAX's.

    >>> x = cr.tensor([0.5, 1.0, 3.0], requires_grad=True)
    >>> y = cr.interp(x, np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 30.0]))
    >>> y.data.tolist()
    [5.0, 10.0, 30.0]
    >>> y.sum().backward()
    >>> x.grad.tolist()                       # at the knot 1.0, the right segment's
    [10.0, 20.0, 0.0]
    """
    return _interpolate(x, xp, fp, left, right, period)

"""``jax.lax``'s reductions, scans, sorts and products: ``reduce_sum`` and its kin,
``reduce`` and ``reduce_window`` for the monoids (add, mul, max, min and the bitwise
ones, known by the function passed: ``lax.add``...), ``argmax``/``argmin``, the
cumulative ``cumsum``... ``cumlogsumexp`` (with ``reverse=``), ``associative_scan``
(JAX's algorithm, so its derivatives at ties are JAX's too), ``sort`` (several
operands, ``num_keys``), ``sort_key_val``, ``top_k``, ``dot``, ``dot_general`` and
``batch_matmul``. Each is a composition of chainrule's differentiable operations.

>>> cr.lax.reduce_sum(np.ones((2, 3)), (1,)).tolist()
[3.0, 3.0]
"""

import builtins
import operator
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import rules as R
from ..primitive import raw, shape_of
from ..rules import predicates as P
from . import lax_bits as _bits
from . import lax_elementwise as _ew
from .lax_convolution import padtype_to_pads
from .lax_structure import concatenate, pad, rev, slice_in_dim
from .lax_structure import slice as _slice
from .pytrees import tree_flatten, tree_unflatten

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
           "reduce_or", "reduce_xor", "reduce", "reduce_window", "argmax", "argmin",
           "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "associative_scan",
           "sort", "sort_key_val", "top_k", "approx_max_k", "approx_min_k", "dot",
           "dot_general", "batch_matmul",
           "reduce_window_shape_tuple"]


def _axes(operand, axes):
    rank = len(shape_of(operand))
    return tuple(int(a) % rank for a in axes) if rank else ()


def reduce_sum(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """The sum over ``axes``.

    >>> cr.lax.reduce_sum(np.arange(6.0).reshape(2, 3), (0,)).tolist()
    [3.0, 5.0, 7.0]
    """
    return R.sum(operand, axis=_axes(operand, axes))


def reduce_prod(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """The product over ``axes`` (its gradient exact where an entry is 0).

    >>> cr.lax.reduce_prod(np.arange(1.0, 7.0).reshape(2, 3), (1,)).tolist()
    [6.0, 120.0]
    """
    return R.prod(operand, axis=_axes(operand, axes))


def reduce_max(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """The largest entry over ``axes``; tied largest entries share the gradient evenly.

    >>> cr.lax.reduce_max(np.array([[1.0, 5.0], [7.0, 2.0]]), (1,)).tolist()
    [5.0, 7.0]
    """
    return R.max(operand, axis=_axes(operand, axes))


def reduce_min(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """The smallest entry over ``axes``; tied smallest entries share the gradient evenly.

    >>> cr.lax.reduce_min(np.array([[1.0, 5.0], [7.0, 2.0]]), (1,)).tolist()
    [1.0, 2.0]
    """
    return R.min(operand, axis=_axes(operand, axes))


def _bitwise_reduce(combine, operand, axes):
    """``combine`` folded over ``axes`` (the axes moved last and merged into one)."""
    axes = _axes(operand, axes)
    shape = tuple(shape_of(operand))
    keep = [k for k in range(len(shape)) if k not in axes]
    moved = R.transpose(operand, tuple(keep) + axes) if axes else operand
    flat = R.reshape(moved, tuple(shape[k] for k in keep) + (-1,))
    out = None
    for k in range(shape_of(flat)[-1]):
        entry = R.getitem(flat, index=(Ellipsis, k))
        out = entry if out is None else combine(out, entry)
    return out


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise and (for bools: all) over ``axes``.

    >>> cr.lax.reduce_and(np.array([[True, False], [True, True]]), (1,)).tolist()
    [False, True]
    """
    if np.result_type(raw(operand)) == np.bool_:
        return P.all(operand, axis=_axes(operand, axes))
    return _bitwise_reduce(_bits.bitwise_and, operand, axes)


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise or (for bools: any) over ``axes``.

    >>> cr.lax.reduce_or(np.array([[False, False], [True, False]]), (1,)).tolist()
    [False, True]
    """
    if np.result_type(raw(operand)) == np.bool_:
        return P.any(operand, axis=_axes(operand, axes))
    return _bitwise_reduce(_bits.bitwise_or, operand, axes)


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise exclusive or (for bools: an odd number true) over ``axes``.

    >>> cr.lax.reduce_xor(np.array([3, 5, 6]), (0,)).tolist()
    0
    """
    return _bitwise_reduce(_bits.bitwise_xor, operand, axes)


def _monoid(computation):
    """(the elementwise combine, the reduction over axes) of a known monoid, or None."""
    known = [((_ew.add, R.add, operator.add, np.add), _ew.add, reduce_sum),
             ((_ew.mul, R.multiply, operator.mul, np.multiply), _ew.mul, reduce_prod),
             ((_ew.max, R.maximum, np.maximum), _ew.max, reduce_max),
             ((_ew.min, R.minimum, np.minimum), _ew.min, reduce_min),
             ((_bits.bitwise_and, operator.and_, np.bitwise_and), _bits.bitwise_and,
              reduce_and),
             ((_bits.bitwise_or, operator.or_, np.bitwise_or), _bits.bitwise_or, reduce_or),
             ((_bits.bitwise_xor, operator.xor, np.bitwise_xor), _bits.bitwise_xor,
              reduce_xor)]
    for functions, combine, reduction in known:
        if any(computation is f for f in functions):
            return combine, reduction
    return None


def _folded(computation, flat, inits, dimensions):
    """A computation chainrule does not know as a monoid, folded entry by entry along
    the reduced axes (XLA leaves the order to itself: this is one of its orders), each
    step on the whole of the kept axes at once. With several operands the computation
    takes and returns tuples, as JAX's variadic reduce."""
    axes = _axes(flat[0], dimensions)
    kept = [a for a in range(len(shape_of(flat[0]))) if a not in axes]
    rows = []
    for x in flat:
        shape = tuple(shape_of(x))
        moved = R.transpose(x, tuple(axes) + tuple(kept))
        rows.append(R.reshape(moved, (-1,) + tuple(shape[a] for a in kept)))
    kept_shape = tuple(shape_of(rows[0])[1:])
    acc = [R.broadcast_to(init, kept_shape) for init in inits]
    for i in range(shape_of(rows[0])[0]):
        if len(flat) == 1:
            acc = [computation(acc[0], rows[0][i])]
        else:
            acc = list(computation(tuple(acc), tuple(r[i] for r in rows)))
    return acc


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int], out_sharding: Any = None) -> Any:
    """``computation`` folded over ``dimensions``, starting from ``init_values``. For
    the monoids chainrule knows (``lax.add``, ``lax.mul``, ``lax.max``, ``lax.min``, a
    bitwise one, or the same ``cr.``/operator function) one reduction, the init value
    combined once with each result; any other computation is folded entry by entry
    along the reduced axes (one call per entry, each on all the kept axes at once). One
    operand, or a pytree of operands each with its init value (the computation then
    takes and returns tuples).

    >>> cr.lax.reduce(np.arange(6.0).reshape(2, 3), 0.0, cr.lax.add, (1,)).tolist()
    [3.0, 12.0]
    >>> float(cr.lax.reduce(np.array([1.0, 2.0, 3.0]), 0.0, lambda a, b: 2 * a + b, (0,)))
    11.0
    """
    flat, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if len(inits) != len(flat):
        raise ValueError(f"lax.reduce: {len(flat)} operands but {len(inits)} init values")
    found = _monoid(computation) if len(flat) == 1 else None
    if found is None:
        return tree_unflatten(tree, _folded(computation, flat, inits, dimensions))
    combine, reduction = found
    out = [combine(reduction(x, dimensions), init) for x, init in zip(flat, inits)]
    return tree_unflatten(tree, out)


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int],
                  window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """``computation`` folded over each window of ``operand`` (a pooling): the operand
    is spread by ``base_dilation`` and padded
    (``"SAME"``, ``"VALID"`` or (low, high) pairs) with ``init_value``, then each window
    (``window_dimensions``, its taps ``window_dilation`` apart, moved by
    ``window_strides``) is reduced and combined once with ``init_value``, tap by tap,
    each tap for every window at once (``computation`` elementwise on arrays, as lax's
    functions are).

    >>> cr.lax.reduce_window(np.arange(5.0), -np.inf, cr.lax.max, (2,), (1,), "VALID").tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    found = _monoid(computation)
    combine = computation if found is None else found[0]
    shape = tuple(shape_of(operand))
    d = len(shape)
    window = tuple(int(n) for n in window_dimensions)
    strides = (1,) * d if window_strides is None else tuple(window_strides)
    base = (1,) * d if base_dilation is None else tuple(base_dilation)
    dilation = (1,) * d if window_dilation is None else tuple(window_dilation)
    spread = tuple((n - 1) * b + 1 if n else 0 for n, b in zip(shape, base))
    if isinstance(padding, str):
        kernel = [(k - 1) * r + 1 for k, r in zip(window, dilation)]
        padding = padtype_to_pads(spread, kernel, strides, padding)
    config = [(int(lo), int(hi), b - 1) for (lo, hi), b in zip(padding, base)]
    x = pad(operand, init_value, config)
    padded = tuple(shape_of(x))
    out_shape = tuple(builtins.max((p - ((k - 1) * r + 1)) // s + 1, 0)
                      for p, k, r, s in zip(padded, window, dilation, strides))
    out = init_value
    for tap in np.ndindex(*window):
        starts = [t * r for t, r in zip(tap, dilation)]
        limits = [a + (n - 1) * s + 1 for a, n, s in zip(starts, out_shape, strides)]
        out = combine(out, _slice(x, starts, limits, strides))
    return out


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """The index of the largest entry along ``axis`` (the first, at a tie or a NaN),
    in ``index_dtype``.

    >>> cr.lax.argmax(np.array([[1.0, 5.0, 5.0]]), 1, np.int32).tolist()
    [1]
    """
    return R.astype(P.argmax(operand, axis=int(axis)), np.dtype(index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    """The index of the smallest entry along ``axis`` (the first, at a tie or a NaN),
    in ``index_dtype``.

    >>> cr.lax.argmin(np.array([[3.0, 1.0, 1.0]]), 1, np.int32).tolist()
    [1]
    """
    return R.astype(P.argmin(operand, axis=int(axis)), np.dtype(index_dtype))


def _cumulative(combine, operand, axis, reverse):
    return associative_scan(combine, operand, reverse=reverse, axis=axis)


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running sum along ``axis`` (from the end if ``reverse``).

    >>> cr.lax.cumsum(np.array([1.0, 2.0, 3.0]), reverse=True).tolist()
    [6.0, 5.0, 3.0]
    """
    if reverse:
        return rev(R.cumsum(rev(operand, (axis,)), axis=axis), (axis,))
    return R.cumsum(operand, axis=axis)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running product along ``axis`` (from the end if ``reverse``).

    >>> cr.lax.cumprod(np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 2.0, 6.0]
    """
    return _cumulative(_ew.mul, operand, axis, reverse)


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running maximum along ``axis`` (from the end if ``reverse``).

    >>> cr.lax.cummax(np.array([1.0, 3.0, 2.0])).tolist()
    [1.0, 3.0, 3.0]
    """
    return _cumulative(_ew.max, operand, axis, reverse)


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running minimum along ``axis`` (from the end if ``reverse``).

    >>> cr.lax.cummin(np.array([3.0, 1.0, 2.0])).tolist()
    [3.0, 1.0, 1.0]
    """
    return _cumulative(_ew.min, operand, axis, reverse)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running log(sum(exp(x))) along ``axis`` (from the end if ``reverse``),
    without overflow.

    >>> cr.lax.cumlogsumexp(np.log(np.array([1.0, 2.0, 3.0]))).round(12).tolist() == \\
    ...     np.log([1.0, 3.0, 6.0]).round(12).tolist()
    True
    """
    return _cumulative(R.logaddexp, operand, axis, reverse)


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1]... along ``axis`` (a as long as b, or one longer)."""
    n_a, n_b = shape_of(a)[axis], shape_of(b)[axis]
    head = slice_in_dim(a, 0, n_b, 1, axis) if n_a > n_b else a
    pairs = R.stack([head, b], axis=axis + 1)
    shape = tuple(shape_of(b))
    out = R.reshape(pairs, shape[:axis] + (2 * n_b,) + shape[axis + 1:])
    if n_a > n_b:
        out = concatenate([out, slice_in_dim(a, n_b, n_a, 1, axis)], axis)
    return out


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The inclusive scan of ``elems`` (a pytree of arrays of one length along ``axis``)
    by an associative ``fn``: element i is fn of the elements 0..i. JAX's algorithm (the
    pairs combined, the half scanned, interleaved), so its derivatives, ties included,
    are JAX's.

    >>> cr.lax.associative_scan(cr.lax.add, np.arange(5.0)).tolist()
    [0.0, 1.0, 3.0, 6.0, 10.0]
    """
    flat, tree = tree_flatten(elems)
    axis = axis % len(shape_of(flat[0]))
    if reverse:
        flat = [rev(e, (axis,)) for e in flat]
    n = shape_of(flat[0])[axis]
    if any(shape_of(e)[axis] != n for e in flat[1:]):
        raise ValueError(f"associative_scan: the inputs differ in length along axis "
                         f"{axis}: {[tuple(shape_of(e)) for e in flat]}")

    def combine(a, b):
        return tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))[0]

    def scan(elems):
        n = shape_of(elems[0])[axis]
        if n < 2:
            return elems
        reduced = combine([slice_in_dim(e, 0, -1, 2, axis) for e in elems],
                          [slice_in_dim(e, 1, None, 2, axis) for e in elems])
        odd = scan(reduced)
        if n % 2 == 0:
            even = combine([slice_in_dim(e, 0, -1, 1, axis) for e in odd],
                           [slice_in_dim(e, 2, None, 2, axis) for e in elems])
        else:
            even = combine(odd, [slice_in_dim(e, 2, None, 2, axis) for e in elems])
        even = [concatenate([slice_in_dim(e, 0, 1, 1, axis), r], axis)
                for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [rev(e, (axis,)) for e in out]
    return tree_unflatten(tree, out)


def _sort_key(x):
    """x with -0.0 as 0.0 (JAX's sort puts them together, in their order); NaN goes
    last in a NumPy sort, as in JAX's."""
    kind = np.result_type(raw(x)).kind
    return R.stop_gradient(R.add(x, 0.0)) if kind in "fc" else x


def sort(operand: Any, dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Any:
    """``operand`` sorted along ``dimension``; given a sequence of arrays, all put in
    the order that sorts the first ``num_keys`` (the first key first, the next breaking
    its ties...), a tuple returned. Equal keys keep their order. Complex keys sort by
    the real part, then the imaginary one; NaN goes last.

    >>> keys, values = cr.lax.sort((np.array([2.0, 1.0, 2.0]), np.array([10.0, 20.0, 30.0])))
    >>> keys.tolist(), values.tolist()
    ([1.0, 2.0, 2.0], [20.0, 10.0, 30.0])
    """
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands, {len(operands)}")
    axis = dimension % len(shape_of(operands[0]))
    keys = []
    for k in operands[:num_keys]:
        if np.result_type(raw(k)).kind == "c":
            keys += [_sort_key(R.real(k)), _sort_key(R.imag(k))]
        else:
            keys.append(_sort_key(k))
    order = None  # a stable sort by the last key, then by each key before it
    for key in reversed(keys):
        if order is None:
            order = P.argsort(key, axis=axis, stable=True)
        else:
            along = R.take_along_axis(key, order, axis=axis)
            order = R.take_along_axis(order, P.argsort(along, axis=axis, stable=True),
                                      axis=axis)
    out = [R.take_along_axis(x, order, axis=axis) for x in operands]
    return out[0] if single else tuple(out)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """``keys`` sorted along ``dimension`` and ``values`` in the same order.

    >>> [a.tolist() for a in cr.lax.sort_key_val(np.array([3.0, 1.0]), np.array([0, 1]))]
    [[1.0, 3.0], [1, 0]]
    """
    out = sort((keys, values), dimension, is_stable, 1)
    return out[0], out[1]


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """The ``k`` largest entries along ``axis``, largest first (of equal ones, the
    first first), and their indices (int32).

    >>> values, indices = cr.lax.top_k(np.array([1.0, 4.0, 2.0, 4.0]), 2)
    >>> values.tolist(), indices.tolist()
    ([4.0, 4.0], [1, 3])
    """
    axis = axis % len(shape_of(operand))
    kind = np.result_type(raw(operand)).kind
    key = _bits.bitwise_not(operand) if kind in "ub" else R.negative(_sort_key(operand))
    order = slice_in_dim(P.argsort(R.stop_gradient(key), axis=axis, stable=True), 0,
                         int(k), 1, axis)
    return R.take_along_axis(operand, order, axis=axis), R.astype(order, np.int32)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` largest entries along ``reduction_dimension`` and their indices, as
    ``top_k``: on a CPU JAX's search is exact too, so ``recall_target`` and the sizes
    it tunes change nothing."""
    _aggregated("approx_max_k", aggregate_to_topk)
    return top_k(operand, k, axis=reduction_dimension)


def _aggregated(name, aggregate_to_topk):
    # Unaggregated, XLA returns its search's candidates, as many as its algorithm picks
    # for the size and recall_target: a count this library could only guess.
    if not aggregate_to_topk:
        raise ValueError(f"lax.{name}: aggregate_to_topk=False returns XLA's candidate "
                         f"list, whose length its algorithm picks; chainrule gives the "
                         f"k best (aggregate_to_topk=True)")


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` smallest entries along ``reduction_dimension`` (smallest first) and
    their indices, exact as ``approx_max_k``."""
    _aggregated("approx_min_k", aggregate_to_topk)
    axis = reduction_dimension % len(shape_of(operand))
    kind = np.result_type(raw(operand)).kind
    key = operand if kind in "ub" else _sort_key(operand)
    order = slice_in_dim(P.argsort(R.stop_gradient(key), axis=axis, stable=True), 0,
                         int(k), 1, axis)
    return R.take_along_axis(operand, order, axis=axis), R.astype(order, np.int32)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Any:
    """The general tensor contraction: ``dimension_numbers`` is ((lhs contracting axes,
    rhs contracting axes), (lhs batch axes, rhs batch axes)); the result's axes are the
    batch axes, then lhs's free axes, then rhs's (JAX's order).

    >>> a, b = np.ones((5, 2, 3)), np.ones((5, 3, 4))
    >>> cr.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))).shape
    (5, 2, 4)
    """
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_rank, rhs_rank = len(shape_of(lhs)), len(shape_of(rhs))
    lc, rc = [a % lhs_rank for a in lc], [a % rhs_rank for a in rc]
    lb, rb = [a % lhs_rank for a in lb], [a % rhs_rank for a in rb]
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(f"dot_general: dimension_numbers {dimension_numbers} pair "
                         f"unequal numbers of axes")
    letters = iter(string.ascii_letters)
    lhs_sub, rhs_sub = [None] * lhs_rank, [None] * rhs_rank
    for a, b in list(zip(lb, rb)) + list(zip(lc, rc)):
        lhs_sub[a] = rhs_sub[b] = next(letters)
    for sub in (lhs_sub, rhs_sub):
        for k, s in enumerate(sub):
            if s is None:
                sub[k] = next(letters)
    out = [lhs_sub[a] for a in lb] + [s for k, s in enumerate(lhs_sub)
                                      if k not in lb and k not in lc] \
        + [s for k, s in enumerate(rhs_sub) if k not in rb and k not in rc]
    if preferred_element_type is not None:
        lhs = R.astype(lhs, np.dtype(preferred_element_type))
        rhs = R.astype(rhs, np.dtype(preferred_element_type))
    return R.einsum(f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}", lhs, rhs)


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """The vector or matrix product of 1-d or 2-d operands (lhs's last axis against
    rhs's first), or ``dot_general`` when ``dimension_numbers`` is given.

    >>> cr.lax.dot(np.array([[1.0, 2.0]]), np.array([3.0, 4.0])).tolist()
    [11.0]
    """
    if dimension_numbers is None:
        if not (1 <= len(shape_of(lhs)) <= 2 and 1 <= len(shape_of(rhs)) <= 2):
            raise TypeError(f"dot: expected 1-d or 2-d operands, got shapes "
                            f"{tuple(shape_of(lhs))} and {tuple(shape_of(rhs))}")
        dimension_numbers = (((len(shape_of(lhs)) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers,
                       preferred_element_type=preferred_element_type)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over leading batch axes (both operands of one rank, at least 2,
    their batch axes equal).

    >>> cr.lax.batch_matmul(np.ones((4, 2, 3)), np.ones((4, 3, 5))).shape
    (4, 2, 5)
    """
    rank = len(shape_of(lhs))
    if rank < 2 or rank != len(shape_of(rhs)):
        raise ValueError(f"batch_matmul: expected operands of one rank, at least 2, got "
                         f"shapes {tuple(shape_of(lhs))} and {tuple(shape_of(rhs))}")
    batch = tuple(range(rank - 2))
    return dot_general(lhs, rhs, (((rank - 1,), (rank - 2,)), (batch, batch)))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int],
                              padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The result's shape of ``reduce_window`` with (low, high) ``padding`` pairs.

    >>> cr.lax.reduce_window_shape_tuple((5, 7), (2, 3), (1, 2), ((0, 0), (1, 1)))
    (4, 4)
    """
    shape = list(operand_shape)
    if base_dilation is not None:
        shape = [(n - 1) * b + 1 if n else 0 for n, b in zip(shape, base_dilation)]
    window = list(window_dimensions)
    if window_dilation is not None:
        window = [(k - 1) * r + 1 if k else 0 for k, r in zip(window, window_dilation)]
    return tuple(builtins.max((n + lo + hi - k) // s + 1, 0)
                 for n, (lo, hi), k, s in zip(shape, padding, window, window_strides))

"""scipy.ndimage's ``map_coordinates``: an array read at fractional coordinates, by
nearest-neighbour (order 0) or linear (order 1) interpolation, as jax.scipy.ndimage
offers it, differentiable in the array, in the coordinates and in ``cval``.

    >>> from chainrule.scipy.ndimage import map_coordinates
    >>> map_coordinates(np.array([1.0, 2.0, 4.0]), [np.array([0.5, 1.25])], order=1).tolist()
    [1.5, 2.5]

Linear interpolation along one axis is ``x[i] + (c - i) (x[i+1] - x[i])`` with i the
whole part of the coordinate c: linear in x, and in c between two samples (its
derivative there is the slope ``x[i+1] - x[i]``; at a sample, the slope on its right).
In n dimensions, each of the 2^n corners around a point is weighted by the product of
its weights along each axis. The rules are those of the operations it is written with,
so derivatives of any order follow, and vmap and jit take it as they take them.

The modes extend the array past its edges as SciPy's do (its numbers are the oracle):
``constant`` (cval outside [0, n-1]), ``grid-constant`` (the array padded with cval,
interpolated up to it), ``nearest``, ``mirror`` (about the edge samples), ``reflect``
and ``grid-mirror`` (about the edges half a sample out), ``wrap`` (period n - 1, as
SciPy's) and ``grid-wrap`` (period n). JAX's ``constant`` and ``wrap`` are SciPy's
``grid-constant`` and ``grid-wrap``: a program ported from JAX names those.
"""

from itertools import product

import numpy as np

from .. import rules as ops
from ..primitive import shape_of
from ..rules.predicates import logical_and, logical_or

__all__ = ["map_coordinates"]

_MODES = ("constant", "grid-constant", "nearest", "mirror", "reflect", "grid-mirror",
          "wrap", "grid-wrap")


def _mapped(c, n, mode):
    """The coordinate c moved into the stretch of the array that the mode repeats, as
    SciPy moves it (its steps, so that ties fall where its do): a point past an edge
    by a whole period or more comes back by whole periods, then across the edge."""
    if mode == "nearest":
        return ops.clip(c, 0, n - 1)
    if mode in ("constant", "grid-constant"):
        return c  # (the samples' indices decide)
    if n == 1:  # a period of 0: every point is sample 0
        return c * 0.0
    below, above = c < 0, c > n - 1
    if mode == "mirror":  # whole-sample symmetric: period 2 (n - 1)
        p = 2 * (n - 1)
        low = p * ops.trunc(-c / p) + c
        low = ops.where(low <= 1 - n, low + p, -low)
        high = c - p * ops.trunc(c / p)
        high = ops.where(high >= n, p - high, high)
    elif mode in ("reflect", "grid-mirror"):  # half-sample symmetric: period 2n
        p = 2 * n
        low = ops.where(c < -p, p * ops.trunc(-c / p) + c, c)
        low = ops.where(low < -n, low + p, ops.where(low > -1e-15, 1e-15, -low) - 1)
        high = c - p * ops.trunc(c / p)
        high = ops.where(high >= n, p - high - 1, high)
    elif mode == "wrap":  # period n - 1: the first and last samples meet
        p = n - 1
        low = c + p * (ops.trunc(-c / p) + 1)
        high = c - p * ops.trunc(c / p)
    else:  # grid-wrap: period n
        low = c + n * (ops.trunc((-1 - c) / n) + 1)
        high = c - n * ops.trunc(c / n)
    return ops.where(below, low, ops.where(above, high, c))


def _index(i, n, mode):
    """(index into the array, and for grid-constant whether it lies inside; else None)
    of sample i (an integer array, at most one sample past an edge once the coordinate
    is mapped) of the array extended as the mode says."""
    if mode == "grid-wrap":
        return ops.remainder(i, n), None
    if mode in ("reflect", "grid-mirror"):
        i = ops.where(i < 0, -i - 1, ops.where(i >= n, 2 * n - i - 1, i))
    elif mode in ("mirror", "wrap", "constant"):  # (SciPy mirrors these samples)
        i = ops.where(i < 0, -i, ops.where(i >= n, 2 * (n - 1) - i, i))
    inside = logical_and(i >= 0, i < n) if mode == "grid-constant" else None
    return ops.clip(i, 0, n - 1), inside


def _whole(x):
    """x rounded down, as integers: no derivative (an index)."""
    return ops.astype(ops.floor(ops.stop_gradient(x)), np.intp)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0,
                    output=None, prefilter=True):
    """``input`` read at ``coordinates`` (one array of coordinates per axis of input;
    the result has their shape), interpolated by ``order`` 0 (the nearest sample) or 1
    (linear), past the edges as ``mode`` says (see the module), as
    scipy.ndimage.map_coordinates; differentiable in input, coordinates and cval.

    >>> from chainrule.scipy.ndimage import map_coordinates
    >>> image = np.arange(12.0).reshape(3, 4)
    >>> map_coordinates(image, np.array([[0.5, 2.0], [0.5, 3.5]]), order=1).tolist()
    [2.5, 0.0]
    """
    if order not in (0, 1):
        raise ValueError(f"map_coordinates: order must be 0 (nearest) or 1 (linear), as "
                         f"in jax.scipy.ndimage, got {order!r}")
    if mode not in _MODES:
        raise ValueError(f"map_coordinates: mode must be one of {', '.join(_MODES)}, "
                         f"got {mode!r}")
    if output is not None:
        raise TypeError("map_coordinates: output= (an array to write into) is not "
                        "supported: the result is returned")
    shape = shape_of(input)
    if type(coordinates) not in (list, tuple):
        coordinates = [coordinates[k] for k in range(shape_of(coordinates)[0])] \
            if shape_of(coordinates) else []
    if len(coordinates) != len(shape) or not shape:
        raise ValueError(f"map_coordinates: expected one array of coordinates per axis "
                         f"of the input (shape {shape}), got {len(coordinates)}")
    if 0 in shape:
        raise ValueError(f"map_coordinates: the input must not be empty, got shape {shape}")
    out_shape = np.broadcast_shapes(*[shape_of(c) for c in coordinates])
    axes, outside = [], None  # per axis: (sample, weight) of the samples around a point
    for c, n in zip(coordinates, shape):
        c = ops.broadcast_to(c * 1.0, out_shape)
        if mode == "constant":  # SciPy's: cval wherever a coordinate is outside [0, n-1]
            far = logical_or(c < 0, c > n - 1)
            outside = far if outside is None else logical_or(outside, far)
        c = _mapped(c, n, mode)
        if order == 0:  # (SciPy's rounding: half up)
            axes.append([(_whole(c + 0.5), None)])
        else:
            low = _whole(c)
            above = c - low  # the weight of the sample above: its derivative is the slope
            axes.append([(low, 1.0 - above), (low + 1, above)])
    flat = ops.reshape(input, (-1,))  # (read at one flat index: an operand, not a key)
    total = None
    for corner in product(*axes):
        index, inside, weight = 0, None, None
        for (i, w), n in zip(corner, shape):
            i, ok = _index(i, n, mode)
            index = index * n + i
            if ok is not None:
                inside = ok if inside is None else logical_and(inside, ok)
            if w is not None:
                weight = w if weight is None else weight * w
        value = ops.take(flat, index)
        if inside is not None:
            value = ops.where(inside, value, cval)
        term = value if weight is None else value * weight
        total = term if total is None else total + term
    return total if outside is None else ops.where(outside, cval, total)

"""scipy.interpolate's ``RegularGridInterpolator`` with the methods jax.scipy.interpolate
has, ``linear`` and ``nearest``: values given on a rectangular grid, read anywhere,
differentiable in the values, the points asked for and the grid's coordinates.

    >>> from chainrule.scipy.interpolate import RegularGridInterpolator
    >>> f = RegularGridInterpolator((np.array([0.0, 1.0, 2.0]),), np.array([0.0, 10.0, 40.0]))
    >>> f(np.array([[0.5], [1.5]])).tolist()
    [5.0, 25.0]

Along each axis, a point x falls in the cell [g[i], g[i+1]] found by a search of the
grid (an index: no derivative), at the fraction ``t = (x - g[i]) / (g[i+1] - g[i])``
of it; linear interpolation weights the 2^d corners of the cell by the products of
``1 - t`` and ``t``, and nearest takes the corner each t rounds to (0.5 rounds down,
as SciPy's). Points outside the grid get ``fill_value``, or, with None, the cell's
formula carried on past the edge (extrapolation), as in SciPy.
"""

from itertools import product

import numpy as np

from .. import rules as ops
from ..primitive import raw, shape_of
from ..rules.predicates import logical_or, searchsorted

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


class RegularGridInterpolator:
    """Interpolation of ``values`` given on the grid ``points`` (one strictly ascending
    1-d array per axis; values of shape ``(len(p1), ..., len(pd), ...)``), as
    scipy.interpolate.RegularGridInterpolator with method ``linear`` or ``nearest``.
    ``bounds_error=True`` (SciPy's default) raises for a point outside the grid;
    jax.scipy's default is False, with ``fill_value`` NaN; None extrapolates.

    >>> from chainrule.scipy.interpolate import RegularGridInterpolator
    >>> grid = (np.array([0.0, 1.0]), np.array([0.0, 2.0]))
    >>> f = RegularGridInterpolator(grid, np.array([[0.0, 2.0], [1.0, 3.0]]))
    >>> cr.grad(lambda p: f(p)[0])(np.array([[0.5, 1.0]])).tolist()   # (d/dx, d/dy)
    [[1.0, 1.0]]
    """

    def __init__(self, points, values, method="linear", bounds_error=True,
                 fill_value=np.nan):
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method must be 'linear' or "
                             f"'nearest' (jax.scipy's two), got {method!r}")
        points = list(points)
        shape = shape_of(values)
        if len(points) > len(shape):
            raise ValueError(f"RegularGridInterpolator: there are {len(points)} point "
                             f"arrays, but values has {len(shape)} dimensions")
        for k, p in enumerate(points):
            if type(p) in (list, tuple):
                p = points[k] = np.asarray(p, dtype=float)
            if len(shape_of(p)) != 1 or shape_of(p)[0] != shape[k]:
                raise ValueError(f"RegularGridInterpolator: the points in dimension {k} "
                                 f"must be 1-d with {shape[k]} entries (values' shape "
                                 f"{shape}), got shape {shape_of(p)}")
            if shape[k] < 2:
                raise ValueError(f"RegularGridInterpolator: there is {shape[k]} point in "
                                 f"dimension {k}; interpolation needs at least 2")
            numbers = raw(p)  # (checked where its numbers are at hand, not traced)
            if type(numbers) is np.ndarray and not np.all(np.diff(numbers) > 0):
                raise ValueError(f"RegularGridInterpolator: the points in dimension {k} "
                                 f"must be strictly ascending")
        self.grid, self.values, self.method = tuple(points), values, method
        self.bounds_error, self.fill_value = bounds_error, fill_value

    def __call__(self, xi, method=None):
        """The interpolated values at ``xi``, points of shape ``(..., d)`` (or a tuple of
        d arrays that broadcast together): shape ``xi.shape[:-1] + values.shape[d:]``."""
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method must be 'linear' or "
                             f"'nearest', got {method!r}")
        d = len(self.grid)
        if type(xi) in (tuple, list):
            common = np.broadcast_shapes(*[shape_of(x) for x in xi])
            xi = ops.stack([ops.broadcast_to(x, common) for x in xi], axis=-1)
        if not shape_of(xi) or shape_of(xi)[-1] != d:
            raise ValueError(f"RegularGridInterpolator: the points asked for must have "
                             f"shape (..., {d}), got {shape_of(xi)}")
        coordinates = [xi[..., k] for k in range(d)]
        if self.bounds_error:
            self._check_bounds(coordinates)
        cells = [self._cell(g, x) for g, x in zip(self.grid, coordinates)]
        flat = ops.reshape(self.values, (-1,) + tuple(shape_of(self.values)[d:]))
        sizes = shape_of(self.values)[:d]
        if method == "nearest":
            index = 0
            for (i, t), n in zip(cells, sizes):
                index = index * n + i + ops.astype(ops.stop_gradient(t) > 0.5, np.intp)
            out = ops.take(flat, index, axis=0)
        else:
            out = None
            for corner in product((0, 1), repeat=d):
                index, weight = 0, None
                for (i, t), n, k in zip(cells, sizes, corner):
                    index = index * n + i + k
                    w = t if k else 1 - t
                    weight = w if weight is None else weight * w
                term = ops.take(flat, index, axis=0) * _trailing(weight, flat)
                out = term if out is None else out + term
        if self.fill_value is None:
            return out
        outside = None
        for g, x in zip(self.grid, coordinates):
            far = logical_or(x < g[0], x > g[-1])
            outside = far if outside is None else logical_or(outside, far)
        return ops.where(_trailing(outside, flat), self.fill_value, out)

    def _cell(self, g, x):
        """(index i of the cell of each x, its fraction t across the cell)."""
        n = shape_of(g)[0]
        i = ops.clip(searchsorted(ops.stop_gradient(g), ops.stop_gradient(x)) - 1, 0,
                     n - 2)
        low, high = ops.take(g, i), ops.take(g, i + 1)
        return i, (x - low) / (high - low)

    def _check_bounds(self, coordinates):
        for k, (g, x) in enumerate(zip(self.grid, coordinates)):
            numbers, edges = raw(x), raw(g)
            if type(numbers) is not np.ndarray or type(edges) is not np.ndarray:
                raise ValueError("RegularGridInterpolator: bounds_error=True checks the "
                                 "points' and the grid's numbers, which a transform is "
                                 "tracing here; pass bounds_error=False (jax.scipy's "
                                 "default)")
            if np.any((numbers < edges[0]) | (numbers > edges[-1])):
                raise ValueError(f"RegularGridInterpolator: one of the requested xi is out "
                                 f"of bounds in dimension {k} ([{edges[0]}, {edges[-1]}])")


def _trailing(x, like):
    """x with axes of size 1 added for the values' own trailing axes."""
    extra = len(shape_of(like)) - 1
    return ops.reshape(x, tuple(shape_of(x)) + (1,) * extra) if extra else x

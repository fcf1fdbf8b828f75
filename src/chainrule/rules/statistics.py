"""Statistics, NumPy's names and semantics: average (weighted), quantile, percentile,
median, cov, corrcoef. (mean, var and std, with ``ddof``, are reductions.)

All are compositions. A quantile interpolates linearly between two sorted entries, so
its derivative goes to those two entries (in proportion), and, when q is differentiated,
it is the slope between them.
"""

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import Box, ndim_of, raw, shape_of
from ..arrays import as_array
from .assembly import atleast_2d, diagonal
from .common import Result, float_dtype
from .elementwise import clip, sqrt
from .linalg import matmul
from .ordering import sort, take
from .reductions import mean, sum
from .joining import concatenate, stack
from .shapes import broadcast_to, expand_dims, reshape, squeeze, transpose

__all__ = ["average", "quantile", "percentile", "median", "cov", "corrcoef"]


def _weights_dtype(weights, a):
    """The dtype weights are taken in: a's float dtype for numbers and lists (float32
    stays float32), and for a NumPy array of floats the two promoted, as NumPy and JAX
    promote them (float64 weights make a float32 array's mean float64)."""
    dtype = float_dtype(a)
    kind = getattr(getattr(weights, "dtype", None), "kind", "")
    return xp.result_type(dtype, weights.dtype) if kind in ("f", "c") else dtype


def average(a: ArrayLike, axis: int | tuple[int, ...] | None = None,
            weights: ArrayLike | None = None, returned: bool = False,
            keepdims: bool = False) -> Result:
    """The weighted mean over ``axis``: sum(a * w) / sum(w), as np.average. 1-D weights
    with an int axis weigh the entries along that axis.

    >>> cr.average(cr.tensor([1.0, 2.0, 3.0]), weights=[3.0, 1.0, 0.0]).item()
    1.25
    """
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        count = xp.size(raw(a)) / xp.size(raw(avg))
        return (avg, xp.full(shape_of(avg), count)) if returned else avg
    if isinstance(weights, (list, tuple, int, float, xp.ndarray, xp.generic)):
        # another library's array stays its own (converting a Dask array would compute it)
        weights = xp.asarray(weights, dtype=_weights_dtype(weights, a))
    if ndim_of(weights) != ndim_of(a):
        if axis is None or ndim_of(weights) != 1:
            raise ValueError(f"average: weights of shape {shape_of(weights)} for an "
                             f"array of shape {shape_of(a)}; give weights of the same "
                             f"shape, or 1-D weights along an int axis")
        shape = [1] * ndim_of(a)
        shape[axis] = shape_of(weights)[0]
        weights = reshape(weights, tuple(shape))
    total = sum(broadcast_to(weights, xp.broadcast_shapes(shape_of(a), shape_of(weights))),
                axis, keepdims)
    avg = sum(a * weights, axis, keepdims) / total
    return (avg, total) if returned else avg


def _q_out_of_range(q):
    return ValueError(f"quantile: q={q!r} must be in [0, 1]")


def quantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
             keepdims: bool = False, method: str = "linear") -> Result:
    """The q-th quantile(s) over ``axis`` (None: all entries), linear interpolation
    between the sorted entries (NumPy's default method). An array q puts its axes
    first, as NumPy does.

    >>> cr.quantile(cr.tensor([1.0, 2.0, 3.0, 4.0]), 0.5).item()
    2.5
    """
    if method != "linear":
        raise ValueError(f"quantile: method {method!r}; chainrule interpolates linearly "
                         f"(method='linear', NumPy's default)")
    q_values = as_array(raw(q))
    xp.require(xp.all((q_values >= 0) & (q_values <= 1)), _q_out_of_range, q_values)
    if xp.ndim(raw(q)) > 0:
        parts = [quantile(a, q[i], axis, keepdims) for i in range(len(raw(q)))]
        return stack(parts, 0)
    original = a
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    axis = axis % ndim_of(a)
    ordered = sort(a, axis)
    n = shape_of(a)[axis]
    if isinstance(q, Box) or not isinstance(q, (xp.ndarray, int, float, xp.number)):
        # q traced (differentiated, or by cr.jit) or another library's: the entries
        # around it picked by an index array, not a Python number, which a trace cannot
        # give and a lazy library (Dask) would compute to give
        floor = xp.floor(as_array(raw(q)) * (n - 1))  # (q's dtype, for the fraction)
        below = xp.reshape(floor.astype(int), (1,))
        above = xp.minimum(below + 1, n - 1)
        fraction = q * (n - 1) - floor
    else:  # (a plain q keeps a's dtype)
        position = float(raw(q)) * (n - 1)
        below, above = int(xp.floor(position)), min(int(xp.floor(position)) + 1, n - 1)
        fraction = position - below
        below, above = [below], [above]
    low, high = take(ordered, below, axis), take(ordered, above, axis)
    result = low + (high - low) * fraction
    if keepdims:
        if ndim_of(original) != ndim_of(a):  # axis None: every axis kept, of size 1
            return reshape(result, (1,) * ndim_of(original))
        return result
    return squeeze(result, axis)


def percentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None,
               keepdims: bool = False, method: str = "linear") -> Result:
    """The q-th percentile(s), q in [0, 100]: ``quantile(a, q / 100)``.

    >>> cr.percentile(cr.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), 25).item()
    2.0
    """
    q = q / 100 if isinstance(q, Box) else xp.asarray(q, dtype=xp.float64) / 100
    return quantile(a, q, axis, keepdims, method)


def median(a: ArrayLike, axis: int | tuple[int, ...] | None = None,
           keepdims: bool = False) -> Result:
    """The median over ``axis``: the middle entry, or the mean of the middle two.

    >>> cr.median(cr.tensor([3.0, 1.0, 2.0, 10.0])).item()
    2.5
    """
    return quantile(a, 0.5, axis, keepdims)


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: ArrayLike | None = None,
        aweights: ArrayLike | None = None) -> Result:
    """The covariance matrix of the variables in the rows of m (columns with
    ``rowvar=False``), as np.cov: divided by N - 1 (N with ``bias=True``, N - ddof if
    given); ``fweights`` (integer counts) and ``aweights`` weigh the observations.

    >>> cr.cov(cr.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).data.tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = atleast_2d(m)
    if not rowvar and shape_of(x)[0] != 1:
        x = transpose(x)
    if y is not None:
        y = atleast_2d(y)
        if not rowvar and shape_of(y)[0] != 1:
            y = transpose(y)
        x = concatenate([x, y], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    weights = None
    if fweights is not None:  # counts of repeats: integers, without a derivative
        weights = xp.asarray(raw(fweights), dtype=_weights_dtype(raw(fweights), x))
    if aweights is not None:  # importances: the covariance's derivative reaches them
        if isinstance(aweights, (list, tuple, int, float, xp.ndarray, xp.generic)):
            aweights = xp.asarray(aweights, dtype=_weights_dtype(aweights, x))
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        centred = x - mean(x, 1, keepdims=True)
        factor = shape_of(x)[1] - ddof
        weighted = centred
    else:
        total = sum(weights)
        centred = x - expand_dims(average(x, 1, weights), 1)
        if ddof == 0:
            factor = total
        elif aweights is None:
            factor = total - ddof
        else:
            factor = total - ddof * sum(weights * aweights) / total
        weighted = centred * weights
    c = matmul(weighted, transpose(centred)) / factor
    return squeeze(c)


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Result:
    """The Pearson correlation coefficients of the rows of x (columns with
    ``rowvar=False``), as np.corrcoef: the covariance over the product of the standard
    deviations, clipped to [-1, 1].

    >>> np.round(cr.corrcoef(cr.tensor([[0.0, 1.0, 2.0], [0.0, 1.0, 4.0]])).data, 4).tolist()
    [[1.0, 0.9608], [0.9608, 1.0]]
    """
    c = cov(x, y, rowvar)
    if ndim_of(c) == 0:
        return c / c
    spread = sqrt(diagonal(c))
    c = c / expand_dims(spread, 1) / expand_dims(spread, 0)
    return clip(c, -1.0, 1.0)

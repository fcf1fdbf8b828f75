"""More of jax.scipy.stats: the Gumbel, Pareto, generalized normal, truncated normal,
von Mises and wrapped Cauchy distributions, and the summaries mode, rankdata and sem.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.gumbel_r.cdf(0.0)), 6)                    # exp(-1)
    0.367879
    >>> round(float(cr.grad(stats.pareto.logpdf, argnums=1)(2.0, 3.0)), 6)   # 1/b - log 2
    -0.359814

As chainrule.scipy.stats's others, each is written with the table's operations and
chainrule.scipy.special's, differentiable in the data and every continuous parameter,
to any order (the generalized normal's CDF in beta once: it goes through gammainc's
shape parameter). Outside a support a log-density is -inf and a density 0, with
gradient 0. ``mode`` and ``rankdata`` are piecewise constant: their results are
constants of differentiation.
"""

import math
from typing import NamedTuple

import numpy as np
import scipy.stats as _st
from numpy.typing import ArrayLike

from .. import arrays as xp, rules as ops
from ..primitive import raw, shape_of
from . import special

__all__ = ["gumbel_r", "gumbel_l", "pareto", "gennorm", "truncnorm", "vonmises",
           "wrapcauchy", "mode", "rankdata", "sem"]

_LOG_2PI = math.log(2.0 * math.pi)
_LOG_2 = math.log(2.0)


def _standard(x, loc, scale):
    return (x - loc) / scale


def _log1mexp(a):
    """log(1 - exp(a)) for a <= 0, accurate at both ends."""
    near = raw(a) > -_LOG_2
    return ops.where(near, ops.log(-ops.expm1(ops.where(near, a, -1.0))),
                     ops.log1p(-ops.exp(ops.where(near, -1.0, a))))


class gumbel_r:
    """The right-skewed Gumbel distribution: CDF exp(-exp(-z)), z = (x - loc) / scale.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.gumbel_r.logpdf(0.0)), 6)
    -1.0
    """

    @staticmethod
    def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        z = _standard(x, loc, scale)
        return -z - ops.exp(-z) - ops.log(scale)

    @staticmethod
    def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return ops.exp(gumbel_r.logpdf(x, loc, scale))

    @staticmethod
    def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return -ops.exp(-_standard(x, loc, scale))

    @staticmethod
    def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return ops.exp(gumbel_r.logcdf(x, loc, scale))

    @staticmethod
    def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return _log1mexp(gumbel_r.logcdf(x, loc, scale))

    @staticmethod
    def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return -ops.expm1(gumbel_r.logcdf(x, loc, scale))

    @staticmethod
    def ppf(p: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return loc - scale * ops.log(-ops.log(p))


class gumbel_l:
    """The left-skewed Gumbel distribution: survival function exp(-exp(z)).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.gumbel_l.sf(0.0)), 6)                     # exp(-1)
    0.367879
    """

    @staticmethod
    def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        z = _standard(x, loc, scale)
        return z - ops.exp(z) - ops.log(scale)

    @staticmethod
    def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return ops.exp(gumbel_l.logpdf(x, loc, scale))

    @staticmethod
    def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return -ops.exp(_standard(x, loc, scale))

    @staticmethod
    def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return ops.exp(gumbel_l.logsf(x, loc, scale))

    @staticmethod
    def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return _log1mexp(gumbel_l.logsf(x, loc, scale))

    @staticmethod
    def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return -ops.expm1(gumbel_l.logsf(x, loc, scale))

    @staticmethod
    def ppf(p: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return loc + scale * ops.log(-ops.log1p(-p))


class pareto:
    """The Pareto distribution of shape b: density b / y**(b + 1) / scale for
    y = (x - loc) / scale >= 1.

    >>> import chainrule.scipy.stats as stats
    >>> float(stats.pareto.cdf(2.0, 1.0)), float(stats.pareto.pdf(0.5, 1.0))
    (0.5, 0.0)
    """

    @staticmethod
    def _inside(x, loc, scale):
        y = _standard(x, loc, scale)
        inside = raw(y) >= 1
        return inside, ops.where(inside, y, 1.0)

    @staticmethod
    def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
               scale: ArrayLike = 1.0) -> object:
        inside, y = pareto._inside(x, loc, scale)
        return ops.where(inside, ops.log(b) - (b + 1.0) * ops.log(y) - ops.log(scale),
                         -math.inf)

    @staticmethod
    def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return ops.exp(pareto.logpdf(x, b, loc, scale))

    @staticmethod
    def logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
              scale: ArrayLike = 1.0) -> object:
        inside, y = pareto._inside(x, loc, scale)
        return ops.where(inside, -b * ops.log(y), 0.0)

    @staticmethod
    def sf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return ops.exp(pareto.logsf(x, b, loc, scale))

    @staticmethod
    def logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
               scale: ArrayLike = 1.0) -> object:
        inside, y = pareto._inside(x, loc, scale)
        above = raw(y) > 1
        return ops.where(above, _log1mexp(-b * ops.where(above, ops.log(y), 1.0)), -math.inf)

    @staticmethod
    def cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        inside, y = pareto._inside(x, loc, scale)
        return ops.where(inside, -ops.expm1(-b * ops.log(y)), 0.0)

    @staticmethod
    def ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> object:
        return loc + scale * ops.exp(-ops.log1p(-q) / b)


class gennorm:
    """The generalized normal distribution of shape beta: density
    beta / (2 gamma(1 / beta)) exp(-|x|**beta) (beta = 2: normal of variance 1/2).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.gennorm.pdf(0.0, 1.0)), 6), float(stats.gennorm.cdf(0.0, 3.0))
    (0.5, 0.5)
    """

    @staticmethod
    def logpdf(x: ArrayLike, beta: ArrayLike) -> object:
        return (ops.log(beta) - _LOG_2 - special.gammaln(1.0 / beta)
                - ops.absolute(x) ** beta)

    @staticmethod
    def pdf(x: ArrayLike, beta: ArrayLike) -> object:
        return ops.exp(gennorm.logpdf(x, beta))

    @staticmethod
    def cdf(x: ArrayLike, beta: ArrayLike) -> object:
        nonzero = raw(x) != 0
        magnitude = ops.absolute(ops.where(nonzero, x, 1.0)) ** beta
        half = 0.5 * special.gammainc(1.0 / beta, magnitude)
        return 0.5 + ops.where(nonzero, ops.sign(raw(x)) * half, 0.0)


def _log_ndtr_difference(a, b):
    """log(ndtr(b) - ndtr(a)) for a < b: in the left tail as a ratio of log_ndtr's, in the
    right tail by symmetry, across the middle as log1p of the two tails' sum."""
    left = raw(b) <= 0
    right = raw(a) >= 0
    middle = ~(left | right)
    la, lb = special.log_ndtr(ops.where(left, a, -1.0)), special.log_ndtr(ops.where(left, b, 0.0))
    in_left = lb + _log1mexp(la - lb)
    ra = special.log_ndtr(-ops.where(right, a, 0.0))
    rb = special.log_ndtr(-ops.where(right, b, 1.0))
    in_right = ra + _log1mexp(rb - ra)
    in_middle = ops.log1p(-special.ndtr(ops.where(middle, a, -1.0))
                          - special.ndtr(-ops.where(middle, b, 1.0)))
    return ops.where(left, in_left, ops.where(right, in_right, in_middle))


class truncnorm:
    """The normal distribution truncated to [a, b] (in standard units: the bounds of
    (x - loc) / scale), renormalised; accurate far in a tail.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.truncnorm.pdf(0.0, -1.0, 1.0)), 6)
    0.584369
    """

    @staticmethod
    def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
               scale: ArrayLike = 1.0) -> object:
        z = _standard(x, loc, scale)
        inside = (raw(z) >= raw(a)) & (raw(z) <= raw(b))
        z = ops.where(inside, z, 0.5 * (a + b))
        return ops.where(inside, -0.5 * z * z - 0.5 * _LOG_2PI - ops.log(scale)
                         - _log_ndtr_difference(a, b), -math.inf)

    @staticmethod
    def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
            scale: ArrayLike = 1.0) -> object:
        return ops.exp(truncnorm.logpdf(x, a, b, loc, scale))

    @staticmethod
    def _between(x, a, b, loc, scale):
        z = _standard(x, loc, scale)
        below, above = raw(z) <= raw(a), raw(z) >= raw(b)
        inside = ~(below | above)
        return below, above, ops.where(inside, z, 0.5 * (a + b))

    @staticmethod
    def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
               scale: ArrayLike = 1.0) -> object:
        below, above, z = truncnorm._between(x, a, b, loc, scale)
        inside = _log_ndtr_difference(a, z) - _log_ndtr_difference(a, b)
        return ops.where(below, -math.inf, ops.where(above, 0.0, inside))

    @staticmethod
    def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
            scale: ArrayLike = 1.0) -> object:
        return ops.exp(truncnorm.logcdf(x, a, b, loc, scale))

    @staticmethod
    def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
              scale: ArrayLike = 1.0) -> object:
        below, above, z = truncnorm._between(x, a, b, loc, scale)
        inside = _log_ndtr_difference(z, b) - _log_ndtr_difference(a, b)
        return ops.where(below, 0.0, ops.where(above, -math.inf, inside))

    @staticmethod
    def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> object:
        return ops.exp(truncnorm.logsf(x, a, b, loc, scale))


class vonmises:
    """The von Mises distribution on the circle with concentration kappa > 0: density
    exp(kappa cos x) / (2 pi i0(kappa)) (nan for kappa <= 0, as JAX).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.vonmises.pdf(0.0, 1.0)), 6)
    0.34171
    """

    @staticmethod
    def logpdf(x: ArrayLike, kappa: ArrayLike) -> object:
        valid = raw(kappa) > 0
        kappa_ = ops.where(valid, kappa, 1.0)
        out = kappa_ * (ops.cos(x) - 1.0) - _LOG_2PI - ops.log(special.i0e(kappa_))
        return ops.where(valid, out, math.nan)

    @staticmethod
    def pdf(x: ArrayLike, kappa: ArrayLike) -> object:
        return ops.exp(vonmises.logpdf(x, kappa))


class wrapcauchy:
    """The wrapped Cauchy distribution on [0, 2 pi] with 0 < c < 1: density
    (1 - c**2) / (2 pi (1 + c**2 - 2 c cos x)) (nan for c outside (0, 1), as JAX).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.wrapcauchy.pdf(np.pi, 0.5)), 6)          # 0.75 / (2 pi 2.25)
    0.053052
    """

    @staticmethod
    def logpdf(x: ArrayLike, c: ArrayLike) -> object:
        valid = (raw(c) > 0) & (raw(c) < 1)
        inside = (raw(x) >= 0) & (raw(x) <= 2 * math.pi)
        c_ = ops.where(valid, c, 0.5)
        x_ = ops.where(inside, x, 0.0)
        out = ops.log1p(-c_ * c_) - _LOG_2PI - ops.log(1.0 + c_ * c_ - 2.0 * c_ * ops.cos(x_))
        return ops.where(valid, ops.where(inside, out, -math.inf), math.nan)

    @staticmethod
    def pdf(x: ArrayLike, c: ArrayLike) -> object:
        return ops.exp(wrapcauchy.logpdf(x, c))


class ModeResult(NamedTuple):
    """``mode``'s result: the most frequent values and how often each occurs.

    >>> import chainrule.scipy.stats_more as stats_more
    >>> stats_more.ModeResult(np.array(1.0), np.array(2))
    ModeResult(mode=array(1.), count=array(2))
    """

    mode: object
    count: object


def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (the smallest of a tie) and its count, as
    jax.scipy.stats.mode (a constant of differentiation; ``axis=None`` flattens).

    >>> import chainrule.scipy.stats as stats
    >>> stats.mode(np.array([[1.0, 2.0], [1.0, 3.0], [4.0, 3.0]]))
    ModeResult(mode=array([1., 3.]), count=array([2, 2]))
    """
    if nan_policy not in ("propagate", "omit"):
        raise ValueError(f"mode: nan_policy must be 'propagate' or 'omit', got {nan_policy!r}")
    result = xp.call(lambda v: tuple(_st.mode(np.asarray(v), axis=axis, nan_policy=nan_policy,
                                              keepdims=keepdims)), raw(a))
    return ModeResult(*result)


def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> object:
    """The ranks of ``a``'s entries from 1 (ties by ``method``: "average", "min", "max",
    "dense" or "ordinal"), flattened when ``axis`` is None, as scipy.stats.rankdata (a
    constant of differentiation).

    >>> import chainrule.scipy.stats as stats
    >>> stats.rankdata(np.array([10.0, 30.0, 20.0, 20.0])).tolist()
    [1.0, 4.0, 2.5, 2.5]
    """
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"rankdata: unknown method {method!r}")
    if nan_policy != "propagate":
        raise ValueError(f"rankdata: nan_policy {nan_policy!r} is not supported (JAX's is "
                         f"'propagate')")
    return xp.call(lambda v: _st.rankdata(np.asarray(v), method=method, axis=axis,
                                          nan_policy=nan_policy), raw(a))


def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate",
        *, keepdims: bool = False) -> object:
    """The standard error of the mean along ``axis``: std(a, ddof) / sqrt(n)
    (differentiable in a). ``nan_policy="omit"`` leaves the nans out of each count.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.sem(np.array([1.0, 2.0, 3.0, 4.0]))), 6)
    0.645497
    """
    if nan_policy == "propagate":
        size = int(np.prod(shape_of(a))) if axis is None else shape_of(a)[axis]
        return ops.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / math.sqrt(size)
    if nan_policy == "omit":
        present = ~xp.isnan(raw(a))
        count = xp.sum(present, axis=axis, keepdims=True)
        filled = ops.where(present, a, 0.0)
        mean = ops.sum(filled, axis=axis, keepdims=True) / count
        squares = ops.where(present, (filled - mean) ** 2, 0.0)
        var = ops.sum(squares, axis=axis, keepdims=True) / (count - ddof)
        out = ops.sqrt(var / count)
        if not keepdims:
            out = ops.reshape(out, xp.sum(present, axis=axis).shape)
        return out
    raise ValueError(f"sem: nan_policy must be 'propagate' or 'omit', got {nan_policy!r}")

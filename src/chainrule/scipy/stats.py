"""scipy.stats's distributions, differentiable in the data and in every continuous
parameter (loc, scale, df, a, b, mu, mean, cov, alpha), broadcasting as SciPy does.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.norm.logpdf(1.0, loc=0.5, scale=2.0)), 6)
    -1.643336
    >>> round(cr.grad(stats.norm.logpdf, argnums=2)(1.0, 0.5, 2.0), 6)   # d/d scale
    -0.46875

Each function is written with the table's operations and chainrule.scipy.special's, so
its derivatives of any order follow. Outside a distribution's support a log-density is
-inf and a density 0, as in SciPy; the gradient there is 0.
"""

import math
import sys

from .. import arrays as xp, rules as ops
from ..primitive import elementwise, ndim_of, raw, shape_of
from . import special, stats_discrete as _discrete, stats_more as _more
from .stats_discrete import *  # noqa: F403  (bernoulli, binom, ...: its __all__)
from .stats_more import *  # noqa: F403  (gumbel_r, pareto, ..., mode, rankdata, sem)
from .stats_kde import gaussian_kde

__all__ = ["norm", "expon", "uniform", "laplace", "logistic", "cauchy", "t", "gamma",
           "chi2", "beta", "poisson", "dirichlet", "multivariate_normal", *_discrete.__all__,
           *_more.__all__]

_LOG_2PI = math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)


def _standard(x, loc, scale):
    return (x - loc) / scale


def _inside(condition, value, outside=-math.inf):
    """``value`` where ``condition`` holds (a raw mask), else ``outside``."""
    return ops.where(condition, value, outside)


def _safe(condition, y, fill=1.0):
    """``y`` where ``condition`` holds, else ``fill``: a point where the formula of the
    log-density is finite, so that outside the support neither the value nor the
    gradient sees a log(0) or log(-1)."""
    return ops.where(condition, y, fill)


class _Density:
    """The density of a distribution that defines its logarithm: ``pdf`` is
    ``exp(logpdf)``, with logpdf's arguments."""

    @classmethod
    def pdf(cls, *args, **kwargs):
        return ops.exp(cls.logpdf(*args, **kwargs))


class norm(_Density):
    """The normal distribution, N(loc, scale**2).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.norm.cdf(1.96)), 6), round(float(stats.norm.ppf(0.975)), 6)
    (0.975002, 1.959964)
    """

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        return -0.5 * z * z - ops.log(scale) - 0.5 * _LOG_2PI

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        return special.ndtr(_standard(x, loc, scale))

    @staticmethod
    def logcdf(x, loc=0.0, scale=1.0):
        return special.log_ndtr(_standard(x, loc, scale))

    @staticmethod
    def sf(x, loc=0.0, scale=1.0):
        return special.ndtr(-_standard(x, loc, scale))

    @staticmethod
    def logsf(x, loc=0.0, scale=1.0):
        return special.log_ndtr(-_standard(x, loc, scale))

    @staticmethod
    def ppf(q, loc=0.0, scale=1.0):
        return loc + scale * special.ndtri(q)


class expon(_Density):
    """The exponential distribution: density exp(-(x - loc) / scale) / scale, x >= loc.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.expon.logpdf(2.0, scale=2.0)), 6)     # -1 - log 2
    -1.693147
    """

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        return _inside(raw(z) >= 0, -z - ops.log(scale))

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        return _inside(raw(z) >= 0, -ops.expm1(-z), 0.0)

    @staticmethod
    def logcdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        inside = raw(z) > 0
        return _inside(inside, ops.log(-ops.expm1(-_safe(inside, z))))

    @staticmethod
    def sf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        return _inside(raw(z) >= 0, ops.exp(-z), 1.0)

    @staticmethod
    def logsf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        return _inside(raw(z) >= 0, -z, 0.0)

    @staticmethod
    def ppf(q, loc=0.0, scale=1.0):
        return loc - scale * ops.log1p(-q)


class uniform(_Density):
    """The uniform distribution on [loc, loc + scale].

    >>> import chainrule.scipy.stats as stats
    >>> float(stats.uniform.pdf(0.5, loc=0.0, scale=2.0)), float(stats.uniform.cdf(0.5, 0.0, 2.0))
    (0.5, 0.25)
    """

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        inside = (raw(z) >= 0) & (raw(z) <= 1)
        return _inside(inside, -ops.log(scale) + 0.0 * z)

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        return ops.clip(_standard(x, loc, scale), 0.0, 1.0)

    @staticmethod
    def ppf(q, loc=0.0, scale=1.0):
        return loc + scale * q


class laplace(_Density):
    """The Laplace distribution: density exp(-|x - loc| / scale) / (2 scale).

    >>> import chainrule.scipy.stats as stats
    >>> float(stats.laplace.cdf(0.0))
    0.5
    """

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0):
        return -ops.absolute(_standard(x, loc, scale)) - ops.log(2.0 * scale)

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        negative = raw(z) < 0
        return ops.where(negative, 0.5 * ops.exp(_safe(negative, z, 0.0)),
                         1.0 - 0.5 * ops.exp(-_safe(~negative, z, 0.0)))


class logistic(_Density):
    """The logistic distribution: its CDF is expit((x - loc) / scale).

    >>> import chainrule.scipy.stats as stats
    >>> float(stats.logistic.pdf(0.0))
    0.25
    """

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        return -z - 2.0 * ops.softplus(-z) - ops.log(scale)

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        return special.expit(_standard(x, loc, scale))

    @staticmethod
    def sf(x, loc=0.0, scale=1.0):
        return special.expit(-_standard(x, loc, scale))

    @staticmethod
    def ppf(q, loc=0.0, scale=1.0):
        return loc + scale * special.logit(q)


class cauchy(_Density):
    """The Cauchy distribution: density 1 / (pi scale (1 + ((x - loc) / scale)**2)).

    >>> import chainrule.scipy.stats as stats
    >>> float(stats.cauchy.cdf(1.0))
    0.75
    """

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        return -ops.log1p(z * z) - ops.log(scale) - _LOG_PI

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        return 0.5 + ops.arctan(_standard(x, loc, scale)) / math.pi

    @staticmethod
    def sf(x, loc=0.0, scale=1.0):
        return 0.5 - ops.arctan(_standard(x, loc, scale)) / math.pi

    @staticmethod
    def logcdf(x, loc=0.0, scale=1.0):
        return ops.log(cauchy.cdf(x, loc, scale))

    @staticmethod
    def logsf(x, loc=0.0, scale=1.0):
        return ops.log(cauchy.sf(x, loc, scale))

    @staticmethod
    def ppf(q, loc=0.0, scale=1.0):
        return loc + scale * ops.tan(math.pi * (q - 0.5))


class t(_Density):
    """Student's t distribution with ``df`` degrees of freedom.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.t.logpdf(0.0, df=1.0)), 6)     # -log(pi): one degree is Cauchy
    -1.14473
    """

    @staticmethod
    def logpdf(x, df, loc=0.0, scale=1.0):
        z = _standard(x, loc, scale)
        half = 0.5 * (df + 1.0)
        return (special.gammaln(half) - special.gammaln(0.5 * df)
                - 0.5 * ops.log(df * math.pi) - ops.log(scale) - half * ops.log1p(z * z / df))

    @staticmethod
    def cdf(x, df, loc=0.0, scale=1.0):
        return _stdtr(df, _standard(x, loc, scale))

    @staticmethod
    def sf(x, df, loc=0.0, scale=1.0):
        return _stdtr(df, -_standard(x, loc, scale))

    @staticmethod
    def logcdf(x, df, loc=0.0, scale=1.0):
        return ops.log(_stdtr(df, _standard(x, loc, scale)))

    @staticmethod
    def logsf(x, df, loc=0.0, scale=1.0):
        return ops.log(_stdtr(df, -_standard(x, loc, scale)))


def _stdtr_df(ans, df, z):
    """d/d df of the t distribution's CDF at z. Below 0 the CDF is the tail
    I_w(df/2, 1/2) / 2 with w = df / (df + z^2), above 0 one minus it; at 0 it is 1/2
    for every df."""
    nonzero = raw(z) != 0
    z = _safe(nonzero, z)
    w = df / (df + z * z)
    d_tail = 0.5 * (0.5 * special._betainc_da(0.5 * df, 0.5, w)
                    + special._beta_density(0.5 * df, 0.5, w) * z * z / (df + z * z) ** 2)
    return ops.where(nonzero, ops.where(raw(z) < 0, d_tail, -d_tail), 0.0)


# The t distribution's CDF at z (SciPy's stdtr): its derivative in z is the density, a
# closed form that is smooth through 0, where the tail's formula is 0 * infinity.
_stdtr = elementwise(lambda df, z: special._sp.stdtr(df, z), "stdtr", _stdtr_df,
                     lambda ans, df, z: ops.exp(t.logpdf(z, df)),
                     doc="The CDF of Student's t with df degrees of freedom, at z.")


class gamma(_Density):
    """The gamma distribution with shape ``a``: density y**(a-1) e**-y / gamma(a) / scale,
    y = (x - loc) / scale > 0.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.gamma.logpdf(2.0, a=3.0)), 6)
    -1.306853
    """

    @staticmethod
    def logpdf(x, a, loc=0.0, scale=1.0):
        y = _standard(x, loc, scale)
        inside = raw(y) > 0
        y = _safe(inside, y)
        return _inside(inside, special.xlogy(a - 1.0, y) - y - special.gammaln(a)
                       - ops.log(scale))

    @staticmethod
    def cdf(x, a, loc=0.0, scale=1.0):
        inside, y = _positive_part(x, loc, scale)
        return _inside(inside, special.gammainc(a, y), 0.0)

    @staticmethod
    def logcdf(x, a, loc=0.0, scale=1.0):
        inside, y = _positive_part(x, loc, scale)
        return _inside(inside, ops.log(special.gammainc(a, y)))

    @staticmethod
    def sf(x, a, loc=0.0, scale=1.0):
        inside, y = _positive_part(x, loc, scale)
        return _inside(inside, special.gammaincc(a, y), 1.0)

    @staticmethod
    def logsf(x, a, loc=0.0, scale=1.0):
        inside, y = _positive_part(x, loc, scale)
        return _inside(inside, ops.log(special.gammaincc(a, y)), 0.0)


def _positive_part(x, loc, scale):
    """Where y = (x - loc) / scale is above 0 (a raw mask), and y there (1 elsewhere)."""
    y = _standard(x, loc, scale)
    inside = raw(y) > 0
    return inside, _safe(inside, y)


class chi2(_Density):
    """The chi-squared distribution with ``df`` degrees of freedom: gamma(df / 2, scale 2).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.chi2.pdf(2.0, df=2.0)), 6)      # e**-1 / 2
    0.18394
    """

    @staticmethod
    def logpdf(x, df, loc=0.0, scale=1.0):
        return gamma.logpdf(x, 0.5 * df, loc, 2.0 * scale)

    @staticmethod
    def cdf(x, df, loc=0.0, scale=1.0):
        return gamma.cdf(x, 0.5 * df, loc, 2.0 * scale)

    @staticmethod
    def logcdf(x, df, loc=0.0, scale=1.0):
        return gamma.logcdf(x, 0.5 * df, loc, 2.0 * scale)

    @staticmethod
    def sf(x, df, loc=0.0, scale=1.0):
        return gamma.sf(x, 0.5 * df, loc, 2.0 * scale)

    @staticmethod
    def logsf(x, df, loc=0.0, scale=1.0):
        return gamma.logsf(x, 0.5 * df, loc, 2.0 * scale)


class beta(_Density):
    """The beta distribution on [loc, loc + scale] with shapes ``a`` and ``b``.

    >>> import chainrule.scipy.stats as stats
    >>> float(stats.beta.pdf(0.5, a=2.0, b=2.0))
    1.5
    """

    @staticmethod
    def logpdf(x, a, b, loc=0.0, scale=1.0):
        y = _standard(x, loc, scale)
        inside = (raw(y) > 0) & (raw(y) < 1)
        y = _safe(inside, y, 0.5)
        return _inside(inside, special.xlogy(a - 1.0, y) + special.xlog1py(b - 1.0, -y)
                       - special.betaln(a, b) - ops.log(scale))

    @staticmethod
    def cdf(x, a, b, loc=0.0, scale=1.0):
        y = _standard(x, loc, scale)
        inside = (raw(y) > 0) & (raw(y) < 1)
        below = xp.where(raw(y) <= 0, 0.0, 1.0)
        return _inside(inside, special.betainc(a, b, _safe(inside, y, 0.5)), below)

    @staticmethod
    def logcdf(x, a, b, loc=0.0, scale=1.0):
        y = _standard(x, loc, scale)
        above = raw(y) > 0
        return _inside(above, ops.log(beta.cdf(_safe(above, x, loc + 0.5 * scale), a, b,
                                               loc, scale)))

    @staticmethod
    def sf(x, a, b, loc=0.0, scale=1.0):
        # I_{1-y}(b, a): the upper tail summed as itself, accurate where it is tiny
        y = _standard(x, loc, scale)
        inside = (raw(y) > 0) & (raw(y) < 1)
        above = xp.where(raw(y) <= 0, 1.0, 0.0)
        return _inside(inside, special.betainc(b, a, 1.0 - _safe(inside, y, 0.5)), above)

    @staticmethod
    def logsf(x, a, b, loc=0.0, scale=1.0):
        y = _standard(x, loc, scale)
        below = raw(y) < 1
        return _inside(below, ops.log(beta.sf(_safe(below, x, loc + 0.5 * scale), a, b,
                                              loc, scale)))


# The Poisson CDF, SciPy's pdtr: d/dmu of P(K <= k) is minus the mass at floor(k).
_pdtr = elementwise(lambda k, mu: special._sp.pdtr(k, mu), "pdtr", None,
                    lambda ans, k, mu: -ops.exp(poisson.logpmf(xp.floor(raw(k)), mu)),
                    doc="The Poisson distribution's CDF at k for the mean mu.")


class poisson:
    """The Poisson distribution with mean ``mu`` (differentiable in mu; k is a count).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.poisson.pmf(2, mu=3.0)), 6), round(float(stats.poisson.cdf(2, 3.0)), 6)
    (0.224042, 0.42319)
    """

    @staticmethod
    def logpmf(k, mu, loc=0.0):
        k = k - loc
        whole = (raw(k) >= 0) & (raw(k) == xp.floor(raw(k)))
        k = xp.where(whole, raw(k), 0.0)
        return _inside(whole, special.xlogy(k, mu) - special.gammaln(k + 1.0) - mu)

    @staticmethod
    def pmf(k, mu, loc=0.0):
        return ops.exp(poisson.logpmf(k, mu, loc))

    @staticmethod
    def cdf(k, mu, loc=0.0):
        return _pdtr(raw(k) - loc, mu)


class dirichlet(_Density):
    """The Dirichlet distribution with concentrations ``alpha`` (K of them); the K
    components of ``x`` run along its first axis, as in SciPy.

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), np.array([1.0, 2.0, 3.0]))), 6)
    1.504077
    """

    @staticmethod
    def logpdf(x, alpha):
        alpha_column = ops.reshape(alpha, (-1,) + (1,) * (ndim_of(x) - 1)) \
            if ndim_of(x) > 1 else alpha
        return (ops.sum(special.xlogy(alpha_column - 1.0, x), axis=0)
                + special.gammaln(ops.sum(alpha)) - ops.sum(special.gammaln(alpha)))


class multivariate_normal(_Density):
    """The multivariate normal distribution N(mean, cov); ``x`` holds one point per row
    (or is one point), as in SciPy. cov is a matrix, a vector (its diagonal) or a number
    (times the identity); positive definite, or with ``allow_singular=True`` positive
    semidefinite: the density is then SciPy's, on the subspace cov spans (-inf off it).

    >>> import chainrule.scipy.stats as stats
    >>> round(float(stats.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 6)
    -1.837877
    >>> flat = np.array([[1.0, 1.0], [1.0, 1.0]])          # all its mass on the line x = y
    >>> mvn = stats.multivariate_normal
    >>> round(float(mvn.logpdf(np.ones(2), None, flat, allow_singular=True)), 6)
    -1.765512
    """

    @staticmethod
    def logpdf(x, mean=None, cov=1.0, allow_singular=False):
        x = ops.atleast_1d(x)
        k = shape_of(x)[-1]
        diff = x - (0.0 * x if mean is None else mean)
        cov = _covariance(cov, k)
        columns = ops.transpose(ops.atleast_2d(diff))  # a point per column
        out = (_singular_logpdf if allow_singular else _logpdf)(columns, cov, k)
        return out[0] if ndim_of(diff) == 1 else out

    @staticmethod
    def pdf(x, mean=None, cov=1.0, allow_singular=False):
        return ops.exp(multivariate_normal.logpdf(x, mean, cov, allow_singular))

    @staticmethod
    def entropy(mean=None, cov=1.0):
        cov = _covariance(cov, 1 if mean is None else shape_of(ops.atleast_1d(mean))[-1])
        k = shape_of(cov)[-1]
        log_det = 2.0 * ops.sum(ops.log(ops.diagonal(ops.cholesky(cov))))
        return 0.5 * (k * (1.0 + _LOG_2PI) + log_det)


def _covariance(cov, k):
    """cov as a k x k matrix: a number times the identity, a vector as its diagonal."""
    if ndim_of(cov) == 0 or shape_of(cov) == (1,) or shape_of(cov) == (1, 1):
        return ops.reshape(cov, ()) * xp.eye(k)
    return ops.diag(cov) if ndim_of(cov) == 1 else cov


def _logpdf(columns, cov, k):
    lower = ops.cholesky(cov)
    z = ops.solve(lower, columns)  # L^-1 (x - mean), a column per point
    log_det = 2.0 * ops.sum(ops.log(ops.diagonal(lower)))
    return -0.5 * (k * _LOG_2PI + log_det + ops.sum(z * z, axis=0))


def _singular_logpdf(columns, cov, k):
    """SciPy's density of a degenerate normal: over the subspace cov spans (rank r), with
    its pseudo-determinant and pseudo-inverse.

    Write cov in the basis [U V] of its eigenvectors at this point (U spanning its range,
    V its null space; constants): blocks C11 = U^T cov U (r x r) and C21 = V^T cov U. A
    cov of the same rank nearby is W C11 W^T with W = [I; L], L = C21 C11^-1, so its
    pseudo-determinant is det(C11) det(I + L^T L) and a point x = W y of its subspace has
    (x - mean)^T cov^+ (x - mean) = y^T C11^-1 y, with y = U^T (x - mean). These are
    smooth in cov on the matrices of rank r, where an eigenvector's derivative is not
    (repeated zero eigenvalues): so derivatives of every order are exact along any path
    of covariances of that rank (A A^T, for A of r columns).
    """
    values, vectors = xp.linalg.eigh(raw(cov))
    cutoff = 1e6 * xp.finfo(values.dtype).eps * xp.max(xp.abs(values))  # SciPy's
    if xp.min(values) < -cutoff:
        raise ValueError(f"multivariate_normal: cov must be positive semidefinite; its "
                         f"smallest eigenvalue is {xp.min(values):.3g}")
    kept = values > cutoff
    span, null = vectors[:, kept], vectors[:, ~kept]
    rank = shape_of(span)[-1]
    cov = 0.5 * (cov + ops.transpose(cov))
    c11 = ops.transpose(span) @ cov @ span
    lower = ops.cholesky(c11)
    z = ops.solve(lower, ops.transpose(span) @ columns)
    log_pdet = 2.0 * ops.sum(ops.log(ops.diagonal(lower)))
    if rank < k:
        tilt = ops.transpose(ops.solve(c11, ops.transpose(ops.transpose(null) @ cov @ span)))
        log_pdet = log_pdet + ops.slogdet(xp.eye(rank) + ops.transpose(tilt) @ tilt)[1]
    out = -0.5 * (rank * _LOG_2PI + log_pdet + ops.sum(z * z, axis=0))
    # off the subspace, as SciPy: the part of x - mean in the null space, beyond a tolerance
    residual = xp.linalg.norm(xp.transpose(raw(columns)) @ null, axis=-1)
    return _inside(residual < 1e3 * cutoff, out)


# JAX imports each distribution as a module (``import jax.scipy.stats.norm as norm``):
# here the name under stats is the distribution itself, so that import works too
for _name in __all__:
    sys.modules[f"{__name__}.{_name}"] = globals()[_name]

__all__ += ["gaussian_kde"]  # (a class, as JAX's: not among the modules above)

"""scipy.special's functions, differentiable: the gamma family, error functions and the
normal distribution's, Bessel functions, and the log-sum-exp family.

    >>> import chainrule.scipy.special as sps
    >>> float(sps.gammaln(5.0)), cr.grad(sps.gammaln)(5.0)     # log 4!, digamma(5)
    (3.1780538303479458, 1.5061176684318003)

Each is an operation of the table's kind (``cr.elementwise``): it takes Tensors, NumPy
arrays, numbers and Values, in every transform and under cr.jit. Its derivative is a
formula in these functions and the table's (the derivative of ``gammaln`` is
``digamma``, whose derivative is ``polygamma(1, x)``, and so on), so the derivatives of
derivatives are exact too. An order (``n`` of ``polygamma``, ``v`` of ``iv``) is not
differentiated.
"""

import math

import scipy.special as _sp

from .. import arrays as xp, rules as ops
from ..primitive import elementwise, raw, shape_of
from ..api import incomplete
from . import special_more as _more
from .special_more import *  # noqa: F403  (more of jax.scipy.special: its __all__)

__all__ = ["gammaln", "gamma", "rgamma", "gammasgn", "digamma", "psi", "polygamma",
           "multigammaln", "beta", "betaln", "gammainc", "gammaincc", "betainc", "erf", "erfc",
           "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit", "logsumexp",
           "softmax", "log_softmax", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "exp1",
           "expi", "expn", "spence", "poch", "zeta", "hyp1f1", "hyp2f1", "i0", "i1", "iv",
           "i0e", "i1e", "ive", "j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn", *_more.__all__]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LOG_PI = math.log(math.pi)

# ---------------------------------------------------------------------------------------
# The gamma function and its logarithm, derivatives and relatives
# ---------------------------------------------------------------------------------------

# (SciPy's polygamma is Python around its ufuncs, which converts its arguments with
# np.asarray: xp.call hands it cr.jit's traced arrays as a function to record)
polygamma = elementwise(lambda n, x: xp.call(_sp.polygamma, n, x), "polygamma",
                        None, lambda ans, n, x: polygamma(n + 1, x),
                        doc="The n-th derivative of digamma; d/dx = polygamma(n + 1, x).")
digamma = elementwise(_sp.digamma, "digamma", lambda ans, x: polygamma(1, x),
                      doc="d/dx log gamma(x); its derivative is polygamma(1, x).")
psi = digamma  # (SciPy's other name)
gammaln = elementwise(_sp.gammaln, "gammaln", lambda ans, x: digamma(x),
                      doc="log |gamma(x)|; d/dx = digamma(x).")
gamma = elementwise(_sp.gamma, "gamma", lambda ans, x: ans * digamma(x),
                    doc="The gamma function; d/dx = gamma(x) digamma(x).")
rgamma = elementwise(_sp.rgamma, "rgamma", lambda ans, x: -ans * digamma(x),
                     doc="1 / gamma(x); d/dx = -digamma(x) / gamma(x).")
gammasgn = elementwise(_sp.gammasgn, "gammasgn", lambda ans, x: 0.0 * ans,
                       doc="The sign of gamma(x): piecewise constant, its derivative 0.")
beta = elementwise(_sp.beta, "beta",
                   lambda ans, a, b: ans * (digamma(a) - digamma(a + b)),
                   lambda ans, a, b: ans * (digamma(b) - digamma(a + b)),
                   doc="gamma(a) gamma(b) / gamma(a + b); d/da = beta (psi(a) - psi(a + b)).")
betaln = elementwise(_sp.betaln, "betaln",
                     lambda ans, a, b: digamma(a) - digamma(a + b),
                     lambda ans, a, b: digamma(b) - digamma(a + b),
                     doc="log |beta(a, b)|; d/da = digamma(a) - digamma(a + b).")


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (an integer):
    d (d - 1) / 4 log(pi) + the sum of gammaln(a - j / 2) for j = 0 .. d - 1.

    >>> import chainrule.scipy.special as sps
    >>> a = 3.0
    >>> round(float(sps.multigammaln(a, 2)), 10)
    1.550194994
    >>> round(float(cr.grad(lambda a: sps.multigammaln(a, 2))(a)), 10)   # the sum of digammas
    1.6259409757
    """
    if int(d) != d or d < 1:
        raise ValueError(f"multigammaln: d must be a positive integer, got {d!r}")
    terms = [gammaln(a - j / 2.0) for j in range(int(d))]
    return ops.sum(ops.stack(terms), axis=0) + d * (d - 1) / 4.0 * _LOG_PI


# ---------------------------------------------------------------------------------------
# The regularized incomplete gamma and beta functions. In x, the derivative is the
# integrand (a density); in a shape parameter it has no closed form and comes from the
# function's own series and continued fraction, differentiated term by term
# (incomplete.py). The derivative of that derivative in x is again a closed form; in
# the shape parameters it is not in the table, and asking for it raises.
# ---------------------------------------------------------------------------------------


def _gamma_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / gamma(a): the gamma distribution's density."""
    return ops.exp(xlogy(a - 1.0, x) - x - gammaln(a))


def _beta_density(a, b, x):
    """d/dx I_x(a, b) = x^(a-1) (1 - x)^(b-1) / B(a, b): the beta distribution's."""
    return ops.exp(xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b))


def _refused(function, parameter):
    """The partial of a shape derivative in a shape parameter: not in the table."""
    def partial(ans, *args):
        raise TypeError(f"{function}: no second derivative in {parameter}: its first "
                        f"derivative in the shape parameters comes from a series, not a "
                        f"formula of the table (derivatives in x, and the mixed ones, are "
                        f"available)")
    return partial


_gammainc_da = elementwise(lambda a, x: xp.call(incomplete.gammainc_da, a, x), "d_gammainc_da",
                           _refused("gammainc", "a"),
                           lambda ans, a, x: _gamma_density(a, x) * (ops.log(x) - digamma(a)),
                           doc="d/da of gammainc(a, x), by its series or continued fraction.")
gammainc = elementwise(_sp.gammainc, "gammainc", lambda ans, a, x: _gammainc_da(a, x),
                       lambda ans, a, x: _gamma_density(a, x),
                       doc="The regularized lower incomplete gamma function P(a, x); "
                           "d/dx = x**(a-1) e**-x / gamma(a).")
gammaincc = elementwise(_sp.gammaincc, "gammaincc", lambda ans, a, x: -_gammainc_da(a, x),
                        lambda ans, a, x: -_gamma_density(a, x),
                        doc="1 - gammainc(a, x), accurate where gammainc is near 1; "
                            "d/dx = -x**(a-1) e**-x / gamma(a).")
_betainc_da = elementwise(lambda a, b, x: xp.call(lambda *v: incomplete.betainc_dab(*v)[0],
                                                  a, b, x),
                          "d_betainc_da", _refused("betainc", "a"), _refused("betainc", "b"),
                          lambda ans, a, b, x: _beta_density(a, b, x) * (
                              ops.log(x) - digamma(a) + digamma(a + b)),
                          doc="d/da of betainc(a, b, x), by its series.")
_betainc_db = elementwise(lambda a, b, x: xp.call(lambda *v: incomplete.betainc_dab(*v)[1],
                                                  a, b, x),
                          "d_betainc_db", _refused("betainc", "a"), _refused("betainc", "b"),
                          lambda ans, a, b, x: _beta_density(a, b, x) * (
                              ops.log1p(-x) - digamma(b) + digamma(a + b)),
                          doc="d/db of betainc(a, b, x), by its series.")
betainc = elementwise(_sp.betainc, "betainc", lambda ans, a, b, x: _betainc_da(a, b, x),
                      lambda ans, a, b, x: _betainc_db(a, b, x),
                      lambda ans, a, b, x: _beta_density(a, b, x),
                      doc="The regularized incomplete beta function I_x(a, b); "
                          "d/dx = x**(a-1) (1-x)**(b-1) / B(a, b).")


# ---------------------------------------------------------------------------------------
# The error function, and the standard normal distribution's functions
# ---------------------------------------------------------------------------------------

erf = elementwise(_sp.erf, "erf", lambda ans, x: _TWO_OVER_SQRT_PI * ops.exp(-x * x),
                  doc="The error function; d/dx = 2 / sqrt(pi) exp(-x**2).")
erfc = elementwise(_sp.erfc, "erfc", lambda ans, x: -_TWO_OVER_SQRT_PI * ops.exp(-x * x),
                   doc="1 - erf(x), accurate where erf(x) is near 1; d/dx = -d erf/dx.")
erfinv = elementwise(_sp.erfinv, "erfinv", lambda ans, x: ops.exp(ans * ans) / _TWO_OVER_SQRT_PI,
                     doc="The inverse of erf on (-1, 1); d/dx = sqrt(pi) / 2 exp(erfinv(x)**2).")
erfcinv = elementwise(_sp.erfcinv, "erfcinv",
                      lambda ans, x: -ops.exp(ans * ans) / _TWO_OVER_SQRT_PI,
                      doc="The inverse of erfc on (0, 2); d/dx = -sqrt(pi) / 2 exp(ans**2).")
ndtr = elementwise(_sp.ndtr, "ndtr", lambda ans, x: ops.exp(-0.5 * x * x) / _SQRT_2PI,
                   doc="The standard normal CDF; d/dx = the normal density at x.")
ndtri = elementwise(_sp.ndtri, "ndtri", lambda ans, p: _SQRT_2PI * ops.exp(0.5 * ans * ans),
                    doc="The inverse of ndtr on (0, 1); d/dp = 1 / the density at ndtri(p).")
log_ndtr = elementwise(_sp.log_ndtr, "log_ndtr",
                       lambda ans, x: ops.exp(-0.5 * x * x - ans) / _SQRT_2PI,
                       doc="log ndtr(x), accurate far in the left tail; d/dx = density / ndtr.")
expit = ops.sigmoid  # (SciPy's name for the logistic sigmoid)
logit = ops.logit

# ---------------------------------------------------------------------------------------
# log-sum-exp and softmax, with SciPy's defaults (every axis unless told)
# ---------------------------------------------------------------------------------------


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over ``axis``, as scipy.special.logsumexp, without overflow.

    ``b`` scales each term (it broadcasts against ``a``); with ``return_sign=True`` the
    result is ``(log |sum|, sign of the sum)``, for weights that make the sum negative.

    >>> import chainrule.scipy.special as sps
    >>> x = np.array([1000.0, 1000.0])
    >>> float(sps.logsumexp(x)), float(sps.logsumexp(x, b=np.array([1.0, 3.0])))
    (1000.6931471805599, 1001.3862943611199)
    >>> cr.grad(lambda x: sps.logsumexp(x, b=np.array([1.0, 3.0])))(x).tolist()
    [0.25, 0.75]
    """
    if b is None and not return_sign:
        return ops.logsumexp(a, axis=axis, keepdims=keepdims)
    shift = xp.max(raw(a), axis=axis, keepdims=True)  # a constant: the result is the
    shift = xp.where(xp.isfinite(shift), shift, 0.0)  # same for any shift
    terms = ops.exp(a - shift) if b is None else b * ops.exp(a - shift)
    total = ops.sum(terms, axis=axis, keepdims=True)
    sign = xp.sign(raw(total))
    out = ops.log(ops.absolute(total) if return_sign else total) + shift
    if not keepdims:
        out = ops.squeeze(out, axis=axis)
        sign = xp.squeeze(sign, axis=axis)
    return (out, sign) if return_sign else out


def _over(function, x, axis):
    """``function(x, axis)``, over every entry where ``axis`` is None (SciPy's default)."""
    if axis is not None:
        return function(x, axis=axis)
    return ops.reshape(function(ops.reshape(x, (-1,)), axis=0), shape_of(x))


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over ``axis`` (all entries by default, as SciPy).

    >>> import chainrule.scipy.special as sps
    >>> sps.softmax(np.array([[0.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    return _over(ops.softmax, x, axis)


def log_softmax(x, axis=None):
    """The log of ``softmax(x, axis)`` (all entries by default), exact for huge x.

    >>> import chainrule.scipy.special as sps
    >>> sps.log_softmax(np.array([1000.0, 1000.0])).tolist()     # log(1/2) each
    [-0.6931471805599453, -0.6931471805599453]
    """
    return _over(ops.log_softmax, x, axis)


# ---------------------------------------------------------------------------------------
# x log y and the entropy
# ---------------------------------------------------------------------------------------

xlogy = elementwise(_sp.xlogy, "xlogy",
                    lambda ans, x, y: ops.log(y), lambda ans, x, y: x / y,
                    doc="x log(y), 0 where x = 0; d/dx = log(y), d/dy = x / y (as JAX).")
xlog1py = elementwise(_sp.xlog1py, "xlog1py",
                      lambda ans, x, y: ops.log1p(y), lambda ans, x, y: x / (1 + y),
                      doc="x log(1 + y), 0 where x = 0; d/dx = log1p(y), d/dy = x / (1 + y).")
entr = elementwise(_sp.entr, "entr", lambda ans, x: -(1 + ops.log(x)),
                   doc="-x log(x) for x > 0 (0 at 0); d/dx = -(1 + log(x)).")
rel_entr = elementwise(_sp.rel_entr, "rel_entr",
                       lambda ans, x, y: ops.log(x / y) + 1, lambda ans, x, y: -x / y,
                       doc="x log(x / y) for x, y > 0 (0 at x = 0); d/dx = log(x / y) + 1.")
kl_div = elementwise(_sp.kl_div, "kl_div",
                     lambda ans, x, y: ops.log(x / y), lambda ans, x, y: 1 - x / y,
                     doc="x log(x / y) - x + y for x, y > 0; d/dx = log(x / y), "
                         "d/dy = 1 - x / y.")

# ---------------------------------------------------------------------------------------
# Exponential integrals, the dilogarithm, Pochhammer's symbol, Hurwitz's zeta and the
# hypergeometric functions (the last two differentiated in their variable only)
# ---------------------------------------------------------------------------------------

exp1 = elementwise(_sp.exp1, "exp1", lambda ans, x: -ops.exp(-x) / x,
                   doc="The integral of e**-t / t from x to infinity; d/dx = -e**-x / x.")
expi = elementwise(_sp.expi, "expi", lambda ans, x: ops.exp(x) / x,
                   doc="The principal value of the integral of e**t / t up to x; "
                       "d/dx = e**x / x.")


def _expn_x(ans, n, x):
    # E_n' = -E_{n-1}, down to E_0 = e**-x / x, whose derivative has no lower neighbour
    first = raw(n) >= 1
    return ops.where(first, -expn(xp.where(first, raw(n) - 1, 0), x),
                     -(1 + 1 / x) * ops.exp(-x) / x)


expn = elementwise(lambda n, x: _sp.expn(n, x), "expn", None, _expn_x,
                   doc="The generalized exponential integral E_n(x); d/dx = -E_{n-1}(x).")
spence = elementwise(_sp.spence, "spence",
                     lambda ans, z: ops.where(raw(z) == 1, -1.0,
                                              ops.log(z) / (1 - ops.where(raw(z) == 1, 0.0, z))),
                     doc="Spence's function (the dilogarithm at 1 - z), z >= 0; "
                         "d/dz = log(z) / (1 - z).")
poch = elementwise(_sp.poch, "poch",
                   lambda ans, z, m: ans * (digamma(z + m) - digamma(z)),
                   lambda ans, z, m: ans * digamma(z + m),
                   doc="Pochhammer's rising factorial gamma(z + m) / gamma(z); "
                       "d/dm = poch(z, m) digamma(z + m).")
_hurwitz = elementwise(lambda x, q: _sp.zeta(x, q), "zeta", None,
                       lambda ans, x, q: -x * _hurwitz(x + 1, q),
                       doc="Hurwitz's zeta function; d/dq = -x zeta(x + 1, q).")


def zeta(x, q=None):
    """Hurwitz's zeta function, the sum of (k + q)**-x over k >= 0 (Riemann's without
    ``q``), as scipy.special.zeta; differentiable in q: d/dq = -x zeta(x + 1, q).

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.zeta(2.0)), 10), round(float(cr.grad(lambda q: sps.zeta(2.0, q))(1.0)), 10)
    (1.6449340668, -2.4041138063)
    """
    return _hurwitz(x, 1.0 if q is None else q)


hyp1f1 = elementwise(lambda a, b, x: _sp.hyp1f1(a, b, x), "hyp1f1", None, None,
                     lambda ans, a, b, x: a / b * hyp1f1(a + 1, b + 1, x),
                     doc="Kummer's confluent hypergeometric function 1F1(a; b; x); "
                         "d/dx = a / b 1F1(a + 1; b + 1; x).")
hyp2f1 = elementwise(lambda a, b, c, x: _sp.hyp2f1(a, b, c, x), "hyp2f1", None, None, None,
                     lambda ans, a, b, c, x: a * b / c * hyp2f1(a + 1, b + 1, c + 1, x),
                     doc="Gauss's hypergeometric function 2F1(a, b; c; x); "
                         "d/dx = a b / c 2F1(a + 1, b + 1; c + 1; x).")

# ---------------------------------------------------------------------------------------
# Bessel functions: d/dx of an order-v function is a mean of its neighbours' in order
# (I'_v = (I_{v-1} + I_{v+1}) / 2, J'_v = (J_{v-1} - J_{v+1}) / 2, Y likewise); the
# exponentially scaled ones, e^-|x| I_v(x), add -sign(x) times themselves.
# ---------------------------------------------------------------------------------------

iv = elementwise(_sp.iv, "iv", None, lambda ans, v, x: (iv(v - 1, x) + iv(v + 1, x)) / 2,
                 doc="The modified Bessel function of the first kind, of order v.")
ive = elementwise(_sp.ive, "ive", None,
                  lambda ans, v, x: (ive(v - 1, x) + ive(v + 1, x)) / 2 - ops.sign(x) * ans,
                  doc="iv(v, x) scaled by exp(-|x|).")
i0 = elementwise(_sp.i0, "i0", lambda ans, x: i1(x), doc="iv(0, x); d/dx = i1(x).")
i1 = elementwise(_sp.i1, "i1", lambda ans, x: (i0(x) + iv(2, x)) / 2,
                 doc="iv(1, x); d/dx = (i0(x) + iv(2, x)) / 2.")
i0e = elementwise(_sp.i0e, "i0e", lambda ans, x: i1e(x) - ops.sign(x) * ans,
                  doc="i0(x) scaled by exp(-|x|); d/dx = i1e(x) - sign(x) i0e(x).")
i1e = elementwise(_sp.i1e, "i1e",
                  lambda ans, x: (i0e(x) + ive(2, x)) / 2 - ops.sign(x) * ans,
                  doc="i1(x) scaled by exp(-|x|).")
jv = elementwise(_sp.jv, "jv", None, lambda ans, v, x: (jv(v - 1, x) - jv(v + 1, x)) / 2,
                 doc="The Bessel function of the first kind, of order v.")
jn = jv  # (an integer order: the same function)
j0 = elementwise(_sp.j0, "j0", lambda ans, x: -j1(x), doc="jv(0, x); d/dx = -j1(x).")
j1 = elementwise(_sp.j1, "j1", lambda ans, x: (j0(x) - jv(2, x)) / 2,
                 doc="jv(1, x); d/dx = (j0(x) - jv(2, x)) / 2.")
yv = elementwise(_sp.yv, "yv", None, lambda ans, v, x: (yv(v - 1, x) - yv(v + 1, x)) / 2,
                 doc="The Bessel function of the second kind, of order v (x > 0).")
yn = yv
y0 = elementwise(_sp.y0, "y0", lambda ans, x: -y1(x), doc="yv(0, x); d/dx = -y1(x).")
y1 = elementwise(_sp.y1, "y1", lambda ans, x: (y0(x) - yv(2, x)) / 2,
                 doc="yv(1, x); d/dx = (y0(x) - yv(2, x)) / 2.")

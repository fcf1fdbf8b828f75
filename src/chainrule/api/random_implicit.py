"""The derivatives of samples in their distributions' parameters, where the sample is
not an explicit function of a parameter-free draw: implicit reparameterization.

A gamma number x of shape a is drawn by rejection, so no formula x = T(u, a) gives its
derivative. But x sits at the quantile F(x; a) = u of its distribution; holding u
fixed while a moves gives (Figurnov, Mohamed and Mnih, "Implicit Reparameterization
Gradients", 2018; JAX's ``jax.random.gamma`` derivative)

    dx/da = -(dF/da)(x; a) / f(x; a),

the CDF's derivative in the parameter over the density. Each wrapper here returns its
sample unchanged, with that derivative attached; the samplers in ``random.py`` and
``random_distributions.py`` compose them (a chi-squared number is twice a gamma number,
a Dirichlet vector normalised gamma numbers, Student's t a normal over the root of a
chi-squared). The CDFs' derivatives in a shape parameter are series
(``incomplete.py``, which needs SciPy): they are computed when a derivative is asked
for, and are not differentiated again (a second derivative raises, as in JAX).

    >>> a = 2.0
    >>> dx_da = cr.grad(lambda a: cr.sum(cr.random.gamma(cr.random.key(0), a, (3,))))(a)
    >>> bool(dx_da > 0)       # a larger shape moves every quantile up
    True
"""

import math

import numpy as np

from .. import arrays as xp
from ..primitive import Primitive, elementwise

__all__ = ["gamma_sample", "beta_sample", "truncated_normal_sample", "wald_sample"]


def _numerics():
    """The incomplete gamma and beta functions' derivatives (``incomplete.py``), which
    need SciPy's gammaln, digamma and betainc."""
    try:
        from . import incomplete
    except ImportError as err:
        raise ImportError("cr.random: the derivative of a gamma, beta or Dirichlet sample "
                          "in its parameters needs SciPy (pip install 'chainrule[scipy]')"
                          ) from err
    return incomplete


def _no_second(name):
    def partial(ans, *args):
        raise TypeError(f"cr.random.{name}: no second derivative in the distribution's "
                        f"parameters: the first comes from a series, not a formula of the "
                        f"table (JAX gives none either)")
    return partial


def _gamma_dx_da(a, x):
    """dx/da at x's quantile: -(dP/da)(a, x) / (x^(a-1) e^-x / gamma(a))."""
    from scipy.special import gammaln
    log_density = (a - 1.0) * np.log(x) - x - gammaln(a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = -_numerics().gammainc_da(a, x) / np.exp(log_density)
    return np.where(x > 0, out, 0.0)  # (a number that underflowed to 0 stays there)


def _beta_dx_dab(a, b, x):
    """(dx/da, dx/db) at x's quantile: -(dI/da, dI/db) over the beta density."""
    from scipy.special import betaln
    d_a, d_b = _numerics().betainc_dab(a, b, x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        density = np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - betaln(a, b))
        inside = (x > 0) & (x < 1)
        return np.where(inside, -d_a / density, 0.0), np.where(inside, -d_b / density, 0.0)


_gamma_dx_da_op = elementwise(lambda a, x: xp.call(_gamma_dx_da, a, x), "gamma_dx_da",
                              _no_second("gamma"), _no_second("gamma"))
_beta_dx_da_op = elementwise(lambda a, b, x: xp.call(lambda *v: _beta_dx_dab(*v)[0], a, b, x),
                             "beta_dx_da", *[_no_second("beta")] * 3)
_beta_dx_db_op = elementwise(lambda a, b, x: xp.call(lambda *v: _beta_dx_dab(*v)[1], a, b, x),
                             "beta_dx_db", *[_no_second("beta")] * 3)


_SAME = 1.0  # (the partial in the sample itself: the value is the sample)


gamma_sample: Primitive = elementwise(
    lambda a, x: xp.positive(x), "gamma_sample",
    lambda ans, a, x: _gamma_dx_da_op(a, x), _SAME,
    doc="The gamma sample x of shape a, with dx/da by implicit reparameterization.")
beta_sample: Primitive = elementwise(
    lambda a, b, x: xp.positive(x), "beta_sample",
    lambda ans, a, b, x: _beta_dx_da_op(a, b, x),
    lambda ans, a, b, x: _beta_dx_db_op(a, b, x), _SAME,
    doc="The beta sample x of shapes a and b, with dx/da and dx/db by implicit "
        "reparameterization.")


# A truncated normal's CDF is (Phi(x) - Phi(lower)) / (Phi(upper) - Phi(lower)), so
#   dx/dlower = phi(lower) (Phi(upper) - Phi(x)) / (Z phi(x)),
#   dx/dupper = phi(upper) (Phi(x) - Phi(lower)) / (Z phi(x)),   Z = Phi(upper) - Phi(lower);
# each difference of Phi is taken in the tail where it is not a difference of numbers
# near 1 (no SciPy needed: math.erfc).
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _mass(low, high):
    """Phi(high) - Phi(low), for low <= high, without cancellation in either tail."""
    low, high = np.broadcast_arrays(np.asarray(low, float), np.asarray(high, float))
    root2 = math.sqrt(2.0)
    upper_tail = 0.5 * (_erfc(low / root2) - _erfc(high / root2))     # both large
    lower_tail = 0.5 * (_erfc(-high / root2) - _erfc(-low / root2))   # both small
    return np.where(low > 0, upper_tail, lower_tail)


def _log_phi(x):
    return -0.5 * x * x - 0.5 * math.log(2.0 * math.pi)


def _truncated_dx(lower, upper, x, which):
    lower, upper, x = np.broadcast_arrays(*(np.asarray(v, float) for v in (lower, upper, x)))
    z = _mass(lower, upper)
    if which == "lower":
        part = np.exp(_log_phi(lower) - _log_phi(x)) * _mass(x, upper)
    else:
        part = np.exp(_log_phi(upper) - _log_phi(x)) * _mass(lower, x)
    return part / z


_truncated_dx_ops = {
    which: elementwise(lambda lo, hi, x, w=which: xp.call(
        lambda *v: _truncated_dx(*v, w), lo, hi, x), f"truncated_normal_dx_d{which}",
        *[_no_second("truncated_normal")] * 3)
    for which in ("lower", "upper")}
truncated_normal_sample: Primitive = elementwise(
    lambda lower, upper, x: xp.positive(x), "truncated_normal_sample",
    lambda ans, lo, hi, x: _truncated_dx_ops["lower"](lo, hi, x),
    lambda ans, lo, hi, x: _truncated_dx_ops["upper"](lo, hi, x), _SAME,
    doc="The truncated normal sample x in [lower, upper], with dx/dlower and dx/dupper "
        "by implicit reparameterization.")


# A Wald (inverse Gaussian) number of mean m and shape 1 is drawn by choosing between two
# roots with a uniform number: a choice that moves with m, so the formula's own
# derivative misses the jumps and is biased (JAX's is: its mean slope is about 1.2 where
# the mean's is 1). At the quantile instead, with a1 = (x/m - 1)/sqrt(x) and
# a2 = -(x/m + 1)/sqrt(x), the CDF Phi(a1) + e^(2/m) Phi(a2) has
#   dF/dm = -(2/m^2) e^(2/m) Phi(a2)   (the two phi terms cancel: e^(2/m) phi(a2) = phi(a1)),
# and the density is phi(a1) x^(-3/2), so
#   dx/dm = (2/m^2) x^(3/2) e^(2/m) Phi(a2) / phi(a1),
# taken in logarithms (e^(2/m) overflows for a small mean).
def _wald_dx_dm(m, x):
    from scipy.special import log_ndtr
    m, x = np.broadcast_arrays(np.asarray(m, float), np.asarray(x, float))
    root = np.sqrt(x)
    a1, a2 = (x / m - 1.0) / root, -(x / m + 1.0) / root
    return 2.0 / m ** 2 * x * root * np.exp(2.0 / m + log_ndtr(a2) - _log_phi(a1))


_wald_dx_dm_op = elementwise(lambda m, x: xp.call(_wald_dx_dm, m, x), "wald_dx_dm",
                             *[_no_second("wald")] * 2)
wald_sample: Primitive = elementwise(
    lambda mean, x: xp.positive(x), "wald_sample",
    lambda ans, mean, x: _wald_dx_dm_op(mean, x), _SAME,
    doc="The Wald sample x of mean m, with dx/dm by implicit reparameterization.")

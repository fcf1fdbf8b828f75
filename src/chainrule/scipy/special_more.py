"""More of jax.scipy.special's functions, differentiable: Dawson's and the scaled
complementary error function, the Fresnel and the sine and cosine integrals, Owen's T,
the Box-Cox transforms, log-gamma, factorials and binomial coefficients, Bessel
functions of the first kind of orders 0 .. v, and the Bernoulli numbers.

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.erfcx(30.0)), 10), round(float(cr.grad(sps.dawsn)(0.0)), 10)
    (0.0187958889, 1.0)

As in chainrule.scipy.special, each elementwise function is an operation of the
table's kind whose derivative is a formula in the table's functions, so derivatives of
every order follow, in every transform and under cr.jit; the others are written with
those operations. Integer arguments (an order, ``n`` of ``bernoulli``) are not
differentiated.
"""

import math
from fractions import Fraction

import numpy as np
import scipy.special as _sp
from numpy.typing import ArrayLike

from .. import arrays as xp, rules as ops
from ..primitive import elementwise, raw

__all__ = ["dawsn", "erfcx", "wofz", "fresnel", "sici", "owens_t", "loggamma", "factorial",
           "comb", "boxcox", "boxcox1p", "bessel_jn", "bernoulli", "sph_harm_y"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_HALF_PI = 0.5 * math.pi

# (chainrule.scipy.special re-exports this module's names, so this module cannot import
# that one: the three operations it needs from there are made again here, privately,
# with the same derivatives)
_polygamma = elementwise(lambda n, x: xp.call(_sp.polygamma, n, x), "polygamma", None,
                         lambda ans, n, x: _polygamma(n + 1, x),
                         doc="The n-th derivative of digamma; d/dx = polygamma(n + 1, x).")
_digamma = elementwise(_sp.digamma, "digamma", lambda ans, x: _polygamma(1, x),
                       doc="d/dx log gamma(x); its derivative is polygamma(1, x).")
_jv = elementwise(_sp.jv, "jv", None, lambda ans, v, x: (_jv(v - 1, x) - _jv(v + 1, x)) / 2,
                  doc="The Bessel function of the first kind, of order v.")

dawsn = elementwise(_sp.dawsn, "dawsn", lambda ans, x: 1.0 - 2.0 * x * ans,
                    doc="""Dawson's integral exp(-x**2) times the integral of exp(t**2) from 0
    to x; d/dx = 1 - 2 x dawsn(x).

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.dawsn(1.0)), 10), round(float(cr.grad(sps.dawsn)(1.0)), 10)
    (0.5380795069, -0.0761590138)
    """)
erfcx = elementwise(_sp.erfcx, "erfcx", lambda ans, x: 2.0 * x * ans - _TWO_OVER_SQRT_PI,
                    doc="""The scaled complementary error function exp(x**2) erfc(x), finite
    where erfc underflows; d/dx = 2 x erfcx(x) - 2 / sqrt(pi).

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.erfcx(1.0)), 10), round(float(cr.grad(sps.erfcx)(1.0)), 10)
    (0.4275835762, -0.2732120148)
    """)
_TWO_I_OVER_SQRT_PI = 2j / math.sqrt(math.pi)
wofz = elementwise(lambda z: _sp.wofz(z + 0j), "wofz",
                   lambda ans, z: _TWO_I_OVER_SQRT_PI - 2.0 * z * ans,
                   doc="""The Faddeeva function exp(-z**2) erfc(-i z), complex for a real or
    complex z (jax.scipy.special.wofz); holomorphic, w'(z) = 2i / sqrt(pi) - 2 z w(z).

    >>> import chainrule.scipy.special as sps
    >>> complex(np.round(sps.wofz(0.5 + 0.3j), 8))
    (0.61485154+0.30312435j)
    """)
_fresnel_s = elementwise(lambda x: _sp.fresnel(x)[0], "fresnel_s",
                         lambda ans, x: ops.sin(_HALF_PI * x * x),
                         doc="The Fresnel integral S(x); d/dx = sin(pi x**2 / 2).")
_fresnel_c = elementwise(lambda x: _sp.fresnel(x)[1], "fresnel_c",
                         lambda ans, x: ops.cos(_HALF_PI * x * x),
                         doc="The Fresnel integral C(x); d/dx = cos(pi x**2 / 2).")


def _sinc(x):
    """sin(x) / x, 1 at 0: the table's sinc is sin(pi x) / (pi x)."""
    return ops.sinc(x / math.pi)


_si = elementwise(lambda x: _sp.sici(x)[0], "si", lambda ans, x: _sinc(x),
                  doc="The sine integral Si(x); d/dx = sin(x) / x.")
_ci = elementwise(lambda x: _sp.sici(x)[1], "ci", lambda ans, x: ops.cos(x) / x,
                  doc="The cosine integral Ci(x), x > 0; d/dx = cos(x) / x.")


def fresnel(x: ArrayLike) -> tuple:
    """The Fresnel integrals (S(x), C(x)): the integrals of sin(pi t**2 / 2) and
    cos(pi t**2 / 2) from 0 to x, as scipy.special.fresnel.

    >>> import chainrule.scipy.special as sps
    >>> s, c = sps.fresnel(1.0)
    >>> round(float(s), 10), round(float(c), 10)
    (0.4382591474, 0.7798934004)
    >>> round(float(cr.grad(lambda x: sps.fresnel(x)[0])(1.0)), 10)   # sin(pi / 2)
    1.0
    """
    return _fresnel_s(x), _fresnel_c(x)


def sici(x: ArrayLike) -> tuple:
    """The sine and cosine integrals (Si(x), Ci(x)), as scipy.special.sici (Ci for
    x > 0; SciPy's Ci(x) for x < 0 is the real part, Ci(-x)).

    >>> import chainrule.scipy.special as sps
    >>> si, ci = sps.sici(1.0)
    >>> round(float(si), 10), round(float(ci), 10)
    (0.9460830704, 0.3374039229)
    >>> round(float(cr.grad(lambda x: sps.sici(x)[1])(2.0)), 10)        # cos(2) / 2
    -0.2080734183
    """
    return _si(x), _ci(x)


owens_t = elementwise(
    _sp.owens_t, "owens_t",
    lambda ans, h, a: -0.5 * _INV_SQRT_2PI * ops.exp(-0.5 * h * h) * ops.erf(
        a * h / math.sqrt(2.0)),
    lambda ans, h, a: ops.exp(-0.5 * h * h * (1.0 + a * a)) / (2.0 * math.pi * (1.0 + a * a)),
    doc="""Owen's T function: the integral of exp(-h**2 (1 + x**2) / 2) / (1 + x**2) / (2 pi)
    over x from 0 to a; d/dh = -phi(h) erf(a h / sqrt(2)) / 2, d/da = the integrand at a.

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.owens_t(0.5, 0.7)), 10)
    0.0842385002
    >>> round(float(cr.grad(sps.owens_t, argnums=1)(0.5, 0.7)), 10)
    0.0886638358
    """)
loggamma = elementwise(_sp.loggamma, "loggamma",
                       lambda ans, x: _digamma(x),
                       doc="""log gamma(x) for x > 0 (nan for x <= 0, as JAX and SciPy for
    a real x); d/dx = digamma(x).

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.loggamma(4.0)), 10), round(float(cr.grad(sps.loggamma)(4.0)), 10)
    (1.7917594692, 1.2561176684)
    """)


def factorial(n: ArrayLike, exact: bool = False) -> object:
    """n! = gamma(n + 1), for real n (0 for n < 0), as jax.scipy.special.factorial;
    differentiable: d/dn = gamma(n + 1) digamma(n + 1). ``exact=True`` is refused, as
    JAX refuses it (use math.factorial for exact integers).

    >>> import chainrule.scipy.special as sps
    >>> sps.factorial(np.array([0.0, 3.0, -1.0])).tolist()
    [1.0, 6.0, 0.0]
    """
    if exact:
        raise ValueError("factorial: exact=True (arbitrary-precision integers) is not "
                         "supported, as in JAX; use math.factorial")
    negative = raw(n) < 0
    return ops.where(negative, 0.0, ops.exp(loggamma(ops.where(negative, 0.0, n) + 1.0)))


def comb(N: ArrayLike, k: ArrayLike, *, repetition: bool = False) -> object:
    """The binomial coefficient N choose k as a float, exp(gammaln(N + 1) - gammaln(k + 1)
    - gammaln(N - k + 1)); 0 where N < 0, k < 0 or k > N. With ``repetition=True``, the
    number of multisets: comb(N + k - 1, k) (1 at k = 0). Differentiable in N and k.

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.comb(5.0, 2.0)), 10), round(float(sps.comb(5.0, 2.0, repetition=True)), 10)
    (10.0, 15.0)
    """
    if repetition:
        first = (raw(k) == 0) & (raw(N) >= 0)
        return ops.where(first, 1.0, comb(N + k - 1.0, k))
    inside = (raw(k) <= raw(N)) & (raw(N) >= 0) & (raw(k) >= 0)
    N, k = ops.where(inside, N, 0.0), ops.where(inside, k, 0.0)
    out = ops.exp(loggamma(N + 1.0) - loggamma(k + 1.0)
                  - loggamma(N + 1.0 - k))
    return ops.where(inside, out, 0.0)


def _boxcox_of_log(log_x, lmbda):
    """(exp(lmbda log_x) - 1) / lmbda, log_x at lmbda = 0. Where t = lmbda log_x is
    small the quotient cancels: there it is log_x times a Taylor polynomial of
    expm1(t) / t, so that its derivatives of every order in lmbda are finite through 0."""
    with np.errstate(invalid="ignore"):
        small = xp.absolute(raw(lmbda) * raw(log_x)) < 1e-3
    t = ops.where(small, lmbda * log_x, 0.0)
    series = 1.0 + t * (0.5 + t * (1.0 / 6.0 + t * (1.0 / 24.0 + t / 120.0)))
    far = ops.where(small, 1.0, lmbda)
    return ops.where(small, log_x * series, ops.expm1(far * log_x) / far)


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> object:
    """The Box-Cox transform (x**lmbda - 1) / lmbda, log(x) at lmbda = 0 (nan for
    x < 0, as SciPy); differentiable in x and lmbda, also at lmbda = 0 (where
    d/dlmbda = log(x)**2 / 2; JAX gives 0 there).

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.boxcox(2.0, 0.5)), 10), round(float(sps.boxcox(2.0, 0.0)), 10)
    (0.8284271247, 0.6931471806)
    >>> round(float(cr.grad(sps.boxcox, argnums=1)(2.0, 0.0)), 10)     # log(2)**2 / 2
    0.240226507
    """
    with np.errstate(divide="ignore", invalid="ignore"):  # (x = 0 and x < 0, as SciPy)
        return _boxcox_of_log(ops.log(x), lmbda)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> object:
    """The Box-Cox transform of 1 + x, ((1 + x)**lmbda - 1) / lmbda (log1p(x) at
    lmbda = 0), accurate for a small x; differentiable in x and lmbda.

    >>> import chainrule.scipy.special as sps
    >>> round(float(sps.boxcox1p(1e-10, 0.5)), 20)
    1e-10
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return _boxcox_of_log(ops.log1p(x), lmbda)


def bessel_jn(z: ArrayLike, *, v: int, n_iter: int = 50) -> object:
    """The Bessel functions of the first kind J_0(z) .. J_v(z), stacked on a new first
    axis (shape (v + 1,) + z's), as jax.scipy.special.bessel_jn; differentiable in z.
    ``n_iter`` is the length of JAX's recurrence and changes nothing here (SciPy
    computes each order).

    >>> import chainrule.scipy.special as sps
    >>> np.round(sps.bessel_jn(np.array([1.0, 2.0]), v=2), 6).tolist()
    [[0.765198, 0.223891], [0.440051, 0.576725], [0.114903, 0.352834]]
    """
    if int(v) != v or v < 0:
        raise ValueError(f"bessel_jn: v must be a nonnegative integer, got {v!r}")
    return ops.stack([_jv(float(order), z) for order in range(int(v) + 1)])


def bernoulli(n: int) -> np.ndarray:
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2), as scipy.special.bernoulli, each
    the float nearest the exact fraction (Akiyama and Tanigawa's recurrence, in
    rationals; SciPy's and JAX's are off in the last digits).

    >>> import chainrule.scipy.special as sps
    >>> sps.bernoulli(4).tolist()
    [1.0, -0.5, 0.16666666666666666, 0.0, -0.03333333333333333]
    """
    if int(n) != n or n < 0:
        raise ValueError(f"bernoulli: n must be a nonnegative integer, got {n!r}")
    numbers, row = [], []
    for m in range(int(n) + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])  # B_m with B_1 = +1/2
    if n >= 1:
        numbers[1] = -numbers[1]
    return np.array([float(b) for b in numbers])


def _sph_harm_y_dtheta(ans, n, m, theta, phi):
    """d/dtheta Y_n^m = m cot(theta) Y_n^m + sqrt((n - m)(n + m + 1)) e^(-i phi) Y_n^(m+1)
    (Condon and Shortley's phase, as SciPy's; the second term is 0 at m = n)."""
    m_plus = ops.where(m < n, m + 1, m)  # (Y_n^(n+1) is 0: its factor is 0 there)
    step = xp.sqrt(xp.maximum((raw(n) - raw(m)) * (raw(n) + raw(m) + 1), 0))
    return (m / ops.tan(theta) * ans
            + step * ops.exp(-1j * phi) * _sph_harm_y(n, m_plus, theta, phi))


_sph_harm_y = elementwise(lambda n, m, theta, phi: xp.call(_sp.sph_harm_y, n, m, theta, phi),
                          "sph_harm_y", None, None, _sph_harm_y_dtheta,
                          lambda ans, n, m, theta, phi: 1j * m * ans)


def sph_harm_y(n: ArrayLike, m: ArrayLike, theta: ArrayLike, phi: ArrayLike,
               diff_n: int | None = None, n_max: int | None = None) -> ArrayLike:
    """The spherical harmonic Y_n^m at polar angle ``theta`` and azimuth ``phi``
    (``scipy.special.sph_harm_y``, ``jax.scipy.special.sph_harm_y``; Condon and
    Shortley's phase), complex; 0 where |m| > n. Differentiable to any order in theta
    and phi: dY/dphi = i m Y, and dY/dtheta a sum of Y_n^m and Y_n^(m+1). The degree n
    and order m are integers, not differentiated. ``n_max`` (JAX's bound on n) is
    checked where n's numbers are known; ``diff_n`` other than 0 is refused:
    ``cr.jacfwd`` gives the derivatives.

    >>> import chainrule.scipy.special as sps
    >>> complex(np.round(sps.sph_harm_y(3, 1, 0.7, 0.4), 8))
    (-0.36912883-0.15606516j)
    """
    if diff_n not in (None, 0):
        raise ValueError(f"sph_harm_y: diff_n={diff_n} is not computed here; differentiate "
                         f"in theta and phi with cr.grad or cr.jacfwd instead")
    degrees = raw(n)  # (checked where known: a traced n is checked by nothing here)
    if n_max is not None and isinstance(degrees, (np.ndarray, np.generic, int, float)) \
            and np.any(degrees > n_max):
        raise ValueError(f"sph_harm_y: a degree n above n_max={n_max}")
    return _sph_harm_y(n, m, theta, phi)

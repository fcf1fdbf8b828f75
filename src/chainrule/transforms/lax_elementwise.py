"""``jax.lax``'s elementwise arithmetic under its own names (``lax.add``, ``lax.exp``,
``lax.integer_pow``, ``lax.round``...), each a composition of chainrule's differentiable
operations, so that grad, jvp, vmap, cr.jit, complex numbers and Tensors take them as
they take those. Where JAX's derivative is its own choice, the composition makes it:
``abs`` has slope 1 at 0, ``clamp`` passes a gradient only strictly inside its bounds,
``round``, ``floor``, ``ceil`` and ``sign`` have none, ``max`` and ``min`` share it
evenly at a tie. ``accuracy=`` is accepted and changes nothing (a CPU computes one way).

>>> cr.grad(lambda x: cr.lax.mul(cr.lax.sin(x), x))(0.0)
0.0
"""

import enum
from typing import Any

import numpy as np

from .. import rules as R
from ..api import numpy as cnp
from ..primitive import raw
from ..rules import predicates as P

__all__ = ["add", "sub", "mul", "div", "rem", "neg", "pow", "integer_pow", "square",
           "reciprocal", "sqrt", "rsqrt", "cbrt", "exp", "exp2", "expm1", "log", "log1p",
           "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
           "tanh", "asinh", "acosh", "atanh", "erf", "abs", "sign", "max", "min", "clamp",
           "floor", "ceil", "round", "RoundingMethod", "is_finite", "nextafter", "complex",
           "conj", "real", "imag"]


def _is_integer(x: Any) -> bool:
    return np.result_type(raw(x)).kind in "iub"


def add(x: Any, y: Any) -> Any:
    """x + y, elementwise.

    >>> cr.lax.add(np.array([1.0, 2.0]), 3.0).tolist()
    [4.0, 5.0]
    """
    return R.add(x, y)


def sub(x: Any, y: Any) -> Any:
    """x - y, elementwise.

    >>> cr.lax.sub(np.array([1.0, 2.0]), 3.0).tolist()
    [-2.0, -1.0]
    """
    return R.subtract(x, y)


def mul(x: Any, y: Any) -> Any:
    """x * y, elementwise.

    >>> cr.lax.mul(np.array([1.0, 2.0]), 3.0).tolist()
    [3.0, 6.0]
    """
    return R.multiply(x, y)


def div(x: Any, y: Any) -> Any:
    """x / y, elementwise; for integers rounded towards zero, as JAX's (not floored).

    >>> cr.lax.div(np.array([7, -7]), 2).tolist(), float(cr.lax.div(1.0, 4.0))
    ([3, -3], 0.25)
    """
    if _is_integer(x) and _is_integer(y):
        floored = cnp.floor_divide(x, y)  # then one up where it rounded down past 0
        inexact = P.logical_and(P.not_equal(cnp.remainder(x, y), 0),
                                P.not_equal(P.less(x, 0), P.less(y, 0)))
        return cnp.where(inexact, floored + 1, floored)
    return R.divide(x, y)


def rem(x: Any, y: Any) -> Any:
    """The remainder of x / y with the sign of x (C's fmod, as JAX's), elementwise;
    its slope in y is minus the quotient rounded towards zero.

    >>> cr.lax.rem(np.array([7.0, -7.0]), 3.0).tolist()
    [1.0, -1.0]
    """
    return R.fmod(x, y)


def neg(x: Any) -> Any:
    """-x, elementwise.

    >>> cr.lax.neg(np.array([1.0, -2.0])).tolist()
    [-1.0, 2.0]
    """
    return R.negative(x)


def pow(x: Any, y: Any) -> Any:  # noqa: A001  (JAX's name)
    """x ** y, elementwise; no slope in x where y is 0, none in y where x is 0 (JAX's).

    >>> cr.lax.pow(2.0, np.array([3.0, 0.5])).round(6).tolist()
    [8.0, 1.414214]
    """
    return R.power(x, y)


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a Python int ``y`` (negative too), elementwise; its slope
    ``y * x ** (y - 1)``, 0 for y = 0.

    >>> cr.lax.integer_pow(np.array([2.0, -3.0]), 3).tolist(), cr.grad(
    ...     lambda x: cr.lax.integer_pow(x, 2))(3.0)
    ([8.0, -27.0], 6.0)
    """
    if isinstance(y, bool) or int(y) != y:
        raise TypeError(f"integer_pow: the exponent must be a Python int, got {y!r}")
    if y == 0:
        return R.add(R.multiply(x, 0), 1)
    return R.power(x, int(y))


def square(x: Any) -> Any:
    """x * x, elementwise.

    >>> cr.lax.square(np.array([3.0, -2.0])).tolist()
    [9.0, 4.0]
    """
    return R.multiply(x, x)


def reciprocal(x: Any) -> Any:
    """1 / x, elementwise.

    >>> cr.lax.reciprocal(np.array([4.0, -0.5])).tolist()
    [0.25, -2.0]
    """
    return R.reciprocal(x)


def sqrt(x: Any, *, accuracy: Any = None) -> Any:
    """The square root, elementwise.

    >>> cr.lax.sqrt(np.array([4.0, 2.25])).tolist()
    [2.0, 1.5]
    """
    return R.sqrt(x)


def rsqrt(x: Any, *, accuracy: Any = None) -> Any:
    """1 / sqrt(x), elementwise.

    >>> cr.lax.rsqrt(np.array([4.0, 0.25])).tolist()
    [0.5, 2.0]
    """
    return R.reciprocal(R.sqrt(x))


def cbrt(x: Any, *, accuracy: Any = None) -> Any:
    """The real cube root, elementwise (negative for negative x).

    >>> cr.lax.cbrt(np.array([8.0, -27.0])).round(12).tolist()
    [2.0, -3.0]
    """
    s = R.sign(x)                               # (no slope)
    return R.multiply(s, R.power(R.multiply(x, s), 1.0 / 3.0))


def exp(x: Any, *, accuracy: Any = None) -> Any:
    """e ** x, elementwise.

    >>> cr.lax.exp(np.array([0.0, 1.0])).round(6).tolist()
    [1.0, 2.718282]
    """
    return R.exp(x)


def exp2(x: Any, *, accuracy: Any = None) -> Any:
    """2 ** x, elementwise.

    >>> cr.lax.exp2(np.array([3.0, -1.0])).tolist()
    [8.0, 0.5]
    """
    return R.exp2(x)


def expm1(x: Any, *, accuracy: Any = None) -> Any:
    """e ** x - 1, accurate near 0, elementwise.

    >>> float(cr.lax.expm1(1e-10)) == 1e-10 + 5e-21
    True
    """
    return R.expm1(x)


def log(x: Any, *, accuracy: Any = None) -> Any:
    """The natural logarithm, elementwise.

    >>> cr.lax.log(np.array([1.0, np.e])).tolist()
    [0.0, 1.0]
    """
    return R.log(x)


def log1p(x: Any, *, accuracy: Any = None) -> Any:
    """log(1 + x), accurate near 0, elementwise.

    >>> float(cr.lax.log1p(1e-10)) == 1e-10 - 5e-21
    True
    """
    return R.log1p(x)


def logistic(x: Any, *, accuracy: Any = None) -> Any:
    """1 / (1 + e ** -x), elementwise.

    >>> cr.lax.logistic(np.array([0.0])).tolist()
    [0.5]
    """
    return R.sigmoid(x)


def sin(x: Any, *, accuracy: Any = None) -> Any:
    """The sine, elementwise.

    >>> cr.lax.sin(np.array([0.0, np.pi / 2])).tolist()
    [0.0, 1.0]
    """
    return R.sin(x)


def cos(x: Any, *, accuracy: Any = None) -> Any:
    """The cosine, elementwise.

    >>> cr.lax.cos(np.array([0.0, np.pi])).tolist()
    [1.0, -1.0]
    """
    return R.cos(x)


def tan(x: Any, *, accuracy: Any = None) -> Any:
    """The tangent, elementwise.

    >>> cr.lax.tan(np.array([0.0, np.pi / 4])).round(12).tolist()
    [0.0, 1.0]
    """
    return R.tan(x)


def asin(x: Any) -> Any:
    """The inverse sine, elementwise.

    >>> cr.lax.asin(np.array([0.0, 1.0])).round(6).tolist()
    [0.0, 1.570796]
    """
    return R.arcsin(x)


def acos(x: Any) -> Any:
    """The inverse cosine, elementwise.

    >>> cr.lax.acos(np.array([1.0, 0.0])).round(6).tolist()
    [0.0, 1.570796]
    """
    return R.arccos(x)


def atan(x: Any) -> Any:
    """The inverse tangent, elementwise.

    >>> cr.lax.atan(np.array([0.0, 1.0])).round(6).tolist()
    [0.0, 0.785398]
    """
    return R.arctan(x)


def atan2(x: Any, y: Any) -> Any:
    """The angle of the point (y, x): arctan(x / y) in the right quadrant, elementwise
    (x first, as JAX's and NumPy's ``arctan2``).

    >>> cr.lax.atan2(np.array([1.0, 1.0]), np.array([1.0, -1.0])).round(6).tolist()
    [0.785398, 2.356194]
    """
    return R.arctan2(x, y)


def sinh(x: Any) -> Any:
    """The hyperbolic sine, elementwise.

    >>> cr.lax.sinh(np.array([0.0])).tolist()
    [0.0]
    """
    return R.sinh(x)


def cosh(x: Any) -> Any:
    """The hyperbolic cosine, elementwise.

    >>> cr.lax.cosh(np.array([0.0])).tolist()
    [1.0]
    """
    return R.cosh(x)


def tanh(x: Any, *, accuracy: Any = None) -> Any:
    """The hyperbolic tangent, elementwise.

    >>> cr.lax.tanh(np.array([0.0, 100.0])).tolist()
    [0.0, 1.0]
    """
    return R.tanh(x)


def asinh(x: Any) -> Any:
    """The inverse hyperbolic sine, elementwise.

    >>> cr.lax.asinh(np.array([0.0, 1.0])).round(6).tolist()
    [0.0, 0.881374]
    """
    return R.arcsinh(x)


def acosh(x: Any) -> Any:
    """The inverse hyperbolic cosine, elementwise.

    >>> cr.lax.acosh(np.array([1.0, 2.0])).round(6).tolist()
    [0.0, 1.316958]
    """
    return R.arccosh(x)


def atanh(x: Any) -> Any:
    """The inverse hyperbolic tangent, elementwise.

    >>> cr.lax.atanh(np.array([0.0, 0.5])).round(6).tolist()
    [0.0, 0.549306]
    """
    return R.arctanh(x)


def erf(x: Any) -> Any:
    """The error function, elementwise.

    >>> cr.lax.erf(np.array([0.0, 1.0])).round(6).tolist()
    [0.0, 0.842701]
    """
    return R.erf(x)


def abs(x: Any) -> Any:  # noqa: A001  (JAX's name)
    """|x|, elementwise; for real x its slope is 1 at 0, as JAX's (``x >= 0`` picks x).

    >>> cr.lax.abs(np.array([-2.0, 0.0])).tolist(), cr.grad(cr.lax.abs)(0.0)
    ([2.0, 0.0], 1.0)
    """
    if np.result_type(raw(x)).kind == "c":
        return R.absolute(x)
    return R.where(P.less(x, 0), R.negative(x), R.add(x, 0))  # (+ 0: -0.0 becomes 0.0)


def sign(x: Any) -> Any:
    """-1, 0 or 1 by the sign of x (x / |x| for complex x), elementwise; no slope.

    >>> cr.lax.sign(np.array([-2.0, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    return R.sign(x)


def max(x: Any, y: Any) -> Any:  # noqa: A001  (JAX's name)
    """The larger of x and y, elementwise (NaN if either is); at a tie each gets half
    the gradient, as JAX's.

    >>> cr.lax.max(np.array([1.0, 5.0]), 3.0).tolist(), cr.grad(cr.lax.max)(2.0, 2.0)
    ([3.0, 5.0], 0.5)
    """
    return R.maximum(x, y)


def min(x: Any, y: Any) -> Any:  # noqa: A001  (JAX's name)
    """The smaller of x and y, elementwise (NaN if either is); at a tie each gets half
    the gradient, as JAX's.

    >>> cr.lax.min(np.array([1.0, 5.0]), 3.0).tolist()
    [1.0, 3.0]
    """
    return R.minimum(x, y)


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002  (JAX's names)
    """x limited to [min, max] (the bounds first and last, as JAX's), elementwise.
    As JAX's, x's gradient flows only strictly between the bounds, min's where it is
    above x (and below max), max's where it is below x; at a bound, none.

    >>> cr.lax.clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0).tolist()
    [0.0, 0.5, 1.0]
    >>> cr.grad(lambda x: cr.lax.clamp(0.0, x, 1.0))(1.0)
    0.0
    """
    value = R.stop_gradient(R.minimum(R.maximum(x, min), max))
    inside = P.logical_and(P.greater(x, min), P.less(x, max))
    to_min = P.logical_and(P.greater(min, x), P.less(min, max))
    to_max = P.less(max, x)
    return R.where(inside, x, R.where(to_min, min, R.where(to_max, max, value)))


def floor(x: Any) -> Any:
    """The largest integer not above x, elementwise; no slope.

    >>> cr.lax.floor(np.array([-1.5, 1.5])).tolist()
    [-2.0, 1.0]
    """
    return R.floor(x)


def ceil(x: Any) -> Any:
    """The smallest integer not below x, elementwise; no slope.

    >>> cr.lax.ceil(np.array([-1.5, 1.5])).tolist()
    [-1.0, 2.0]
    """
    return R.ceil(x)


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks a tie (x.5): away from zero (JAX's default) or to the even
    neighbour (NumPy's).

    >>> cr.lax.RoundingMethod.TO_NEAREST_EVEN
    <RoundingMethod.TO_NEAREST_EVEN: 1>
    """
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any,  # noqa: A001  (JAX's name)
          rounding_method: RoundingMethod = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """x rounded to the nearest integer, elementwise, a tie away from zero (JAX's
    default) or, with ``RoundingMethod.TO_NEAREST_EVEN``, to the even one; no slope.

    >>> cr.lax.round(np.array([0.5, 1.5, -2.5])).tolist()
    [1.0, 2.0, -3.0]
    >>> cr.lax.round(np.array([0.5, 1.5, -2.5]), cr.lax.RoundingMethod.TO_NEAREST_EVEN).tolist()
    [0.0, 2.0, -2.0]
    """
    if RoundingMethod(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return R.stop_gradient(R.round(x))
    whole = R.trunc(x)
    away = P.greater_equal(R.absolute(R.subtract(x, whole)), 0.5)  # (x - trunc x is exact)
    return R.stop_gradient(R.where(away, R.add(whole, R.sign(x)), whole))


def is_finite(x: Any) -> Any:
    """Whether x is neither infinite nor NaN, elementwise.

    >>> cr.lax.is_finite(np.array([1.0, np.inf, np.nan])).tolist()
    [True, False, False]
    """
    return P.isfinite(x)


def nextafter(x1: Any, x2: Any) -> Any:
    """The next float after x1 towards x2, elementwise (no derivative, as JAX's).

    >>> float(cr.lax.nextafter(1.0, 2.0) - 1.0) == float(np.finfo(np.float64).eps)
    True
    """
    return cnp.nextafter(x1, x2)


def complex(x: Any, y: Any) -> Any:  # noqa: A001  (JAX's name)
    """x + i y from real parts x and imaginary parts y, elementwise.

    >>> cr.lax.complex(np.array([1.0]), np.array([2.0])).tolist()
    [(1+2j)]
    """
    return R.add(x, R.multiply(y, 1j))


def conj(x: Any) -> Any:
    """The complex conjugate, elementwise; a complex result for real x too, as JAX's.

    >>> cr.lax.conj(np.array([1 + 2j])).tolist(), cr.lax.conj(np.array([1.0])).dtype
    ([(1-2j)], dtype('complex128'))
    """
    kind = np.result_type(raw(x))
    if kind.kind != "c":
        x = R.astype(x, np.result_type(kind, np.complex64))
    return R.conj(x)


def real(x: Any) -> Any:
    """The real part, elementwise.

    >>> cr.lax.real(np.array([1 + 2j])).tolist()
    [1.0]
    """
    return R.real(x)


def imag(x: Any) -> Any:
    """The imaginary part, elementwise.

    >>> cr.lax.imag(np.array([1 + 2j])).tolist()
    [2.0]
    """
    return R.imag(x)

"""More elementwise functions, NumPy's names: inverse trigonometric and hyperbolic
functions, logarithms and exponentials in other bases, logaddexp, rounding, NaN-aware
maximum and minimum (real, imag, conj and angle are in ``complexes.py``).

Each is defined by its partial derivatives (``elementwise``), as in ``elementwise.py``:
the VJP is g * partial and the JVP t * partial. Rounding (floor, ceil, round, trunc) is
piecewise constant: its derivative is 0 wherever it exists, as in PyTorch and JAX.
Where a partial is 0/0 at a point (hypot at the origin) the convention of ``norm`` holds:
the gradient is 0 there.
"""

import math

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import elementwise, raw
from ..arrays import as_array
from .common import Result
from .elementwise import _tie_share, absolute, cos, exp, log, log1p, maximum, sqrt, where
from .elementwise import remainder as mod  # (NumPy's other name for it)

__all__ = ["arcsin", "arccos", "arctan2", "hypot", "sinh", "cosh", "arcsinh", "arccosh",
           "arctanh", "expm1", "log2", "log10", "exp2", "logaddexp", "logaddexp2",
           "square", "logit", "reciprocal", "sinc", "deg2rad", "rad2deg", "radians", "degrees",
           "fabs", "fmax", "fmin", "mod", "fmod", "floor", "ceil", "round", "around",
           "rint", "trunc", "fix", "nan_to_num", "elu",
           "stop_gradient"]
METHODS = ["round", "log2", "log10", "expm1"]  # also methods of Tensor

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _safe(x):
    """x with its zeros replaced by 1: a denominator whose 0/0 points are masked by a
    where, so that no infinity reaches a derivative (0 * inf would be NaN)."""
    return where(raw(x) == 0, 1.0, x)


# ---------------------------------------------------------------------------------------
# Inverse trigonometric and hyperbolic functions
# ---------------------------------------------------------------------------------------

arcsin = elementwise(xp.asin, "arcsin", lambda ans, x: 1 / sqrt(1 - x * x),
                     text=("1 / sqrt(1 - {0}**2)",),
                     doc="The inverse sine, in [-pi/2, pi/2]; d/dx = 1 / sqrt(1 - x**2).")
arccos = elementwise(xp.acos, "arccos", lambda ans, x: -1 / sqrt(1 - x * x),
                     text=("-1 / sqrt(1 - {0}**2)",),
                     doc="The inverse cosine, in [0, pi]; d/dx = -1 / sqrt(1 - x**2).")
arctan2 = elementwise(xp.atan2, "arctan2",
                      lambda ans, y, x: x / (x * x + y * y),
                      lambda ans, y, x: -y / (x * x + y * y),
                      text=("{1} / ({0}**2 + {1}**2)", "-{0} / ({0}**2 + {1}**2)"), doc="""\
The angle of the point (x, y), ``arctan2(y, x)``, in (-pi, pi], with broadcasting.

    d/dy = x / (x**2 + y**2), d/dx = -y / (x**2 + y**2).

    >>> y = cr.tensor(1.0, requires_grad=True)
    >>> cr.arctan2(y, 1.0).backward()
    >>> y.grad.tolist()
    0.5
    """)
hypot = elementwise(xp.hypot, "hypot",
                    lambda ans, a, b: where(raw(ans) == 0, 0.0, a / _safe(ans)),
                    lambda ans, a, b: where(raw(ans) == 0, 0.0, b / _safe(ans)),
                    text=("{0} / {out}", "{1} / {out}"),
                    doc="""\
sqrt(a**2 + b**2) without overflow; d/da = a / hypot (0 at 0).

    >>> a = cr.tensor(3.0, requires_grad=True)
    >>> y = cr.hypot(a, 4.0)
    >>> y.backward()
    >>> y.item(), a.grad.item()                 # 5, 3/5
    (5.0, 0.6)
    """)
sinh = elementwise(xp.sinh, "sinh", lambda ans, x: cosh(x), text=("cosh({0})",),
                   doc="The hyperbolic sine; d/dx = cosh(x).")
cosh = elementwise(xp.cosh, "cosh", lambda ans, x: sinh(x), text=("sinh({0})",),
                   doc="The hyperbolic cosine; d/dx = sinh(x).")
arcsinh = elementwise(xp.asinh, "arcsinh", lambda ans, x: 1 / sqrt(x * x + 1),
                      text=("1 / sqrt({0}**2 + 1)",),
                      doc="The inverse hyperbolic sine; d/dx = 1 / sqrt(x**2 + 1).")
arccosh = elementwise(xp.acosh, "arccosh", lambda ans, x: 1 / sqrt(x * x - 1),
                      text=("1 / sqrt({0}**2 - 1)",),
                      doc="The inverse hyperbolic cosine (x >= 1); d/dx = 1/sqrt(x**2 - 1).")
arctanh = elementwise(xp.atanh, "arctanh", lambda ans, x: 1 / (1 - x * x),
                      text=("1 / (1 - {0}**2)",),
                      doc="The inverse hyperbolic tangent (|x| < 1); d/dx = 1/(1 - x**2).")

# ---------------------------------------------------------------------------------------
# Exponentials and logarithms in other bases
# ---------------------------------------------------------------------------------------

# (its derivative is exp(x) itself, not ans + 1, which cancels to 0 below x = -37)
expm1 = elementwise(xp.expm1, "expm1", lambda ans, x: exp(x), text=("exp({0})",),
                    doc="""\
exp(x) - 1, accurate for tiny x; d/dx = exp(x).

    >>> float(cr.expm1(1e-20))                  # exp(1e-20) - 1 would round to 0
    1e-20
    >>> float(cr.grad(cr.expm1)(-40.0))         # exp(-40), where ans + 1 would give 0
    4.248354255291589e-18
    """)
log2 = elementwise(xp.log2, "log2", lambda ans, x: 1 / (x * _LN2),
                   text=("1 / ({0} ln 2)",),
                   doc="The base-2 logarithm; d/dx = 1 / (x ln 2).")
log10 = elementwise(xp.log10, "log10", lambda ans, x: 1 / (x * _LN10),
                    text=("1 / ({0} ln 10)",),
                    doc="The base-10 logarithm; d/dx = 1 / (x ln 10).")
exp2 = elementwise(xp.exp2, "exp2", lambda ans, x: ans * _LN2, text=("{out} ln 2",),
                   doc="2**x; d/dx = 2**x ln 2.")
logaddexp = elementwise(xp.logaddexp, "logaddexp",
                        lambda ans, a, b: exp(a - ans), lambda ans, a, b: exp(b - ans),
                        text=("exp({0} - {out})", "exp({1} - {out})"), doc="""\
log(exp(a) + exp(b)) without overflow; d/da = exp(a - result), a softmax weight.

    >>> a = cr.tensor(0.0, requires_grad=True)
    >>> cr.logaddexp(a, 0.0).backward()
    >>> a.grad.tolist()
    0.5
    """)
logaddexp2 = elementwise(xp.logaddexp2, "logaddexp2",
                         lambda ans, a, b: exp((a - ans) * _LN2),
                         lambda ans, a, b: exp((b - ans) * _LN2),
                         text=("2**({0} - {out})", "2**({1} - {out})"),
                         doc="""\
log2(2**a + 2**b); d/da = 2**(a - result).

    >>> cr.grad(lambda a: cr.logaddexp2(a, 0.0))(0.0)
    0.5
    """)

# ---------------------------------------------------------------------------------------
# Powers, angles, absolute values
# ---------------------------------------------------------------------------------------

square = elementwise(xp.square, "square", lambda ans, x: 2 * x, text=("2 {0}",),
                     doc="x * x; d/dx = 2x.")

logit = elementwise(lambda p: xp.log(p) - xp.log1p(-p), "logit",
                    lambda ans, p: 1 / (p * (1 - p)), text=("1 / ({0} (1 - {0}))",),
                    doc="log(p / (1 - p)), the inverse of sigmoid (0 < p < 1); d/dp = 1/(p (1-p)).")


def _held_logs(p, log, log1p, maximum, where):
    """log p and log(1 - p), each held at -100 or more, as PyTorch's binary
    cross-entropy holds them: p of exactly 0 or 1 gives -100 (and no divide-by-zero
    warning). Given xp's functions for the forward, the table's own in a rule (so that
    the rule can be differentiated again)."""
    inside, below_one = raw(p) > 0, raw(p) < 1
    log_p = log(where(inside, p, 1.0))
    log_q = log1p(-where(below_one, p, 0.0))
    return (maximum(where(inside, log_p, -100.0), -100.0),
            maximum(where(below_one, log_q, -100.0), -100.0))


# PyTorch's floor under p (1 - p) in the gradient: 1e-12 as a float32 number, as its
# kernel writes it (in float64 it is 9.99999996e-13)
_BCE_EPS = 9.999999960041972e-13


def _bce(p, y):
    log_p, log_q = _held_logs(p, xp.log, xp.log1p, xp.maximum, xp.where)
    return -(y * log_p + (1 - y) * log_q)


def _bce_target_slope(ans, p, y):
    log_p, log_q = _held_logs(p, log, log1p, maximum, where)
    return log_q - log_p


binary_cross_entropy = elementwise(
    _bce, "binary_cross_entropy",
    lambda ans, p, y: (p - y) / maximum(p * (1 - p), _BCE_EPS),
    _bce_target_slope,
    text=("({0} - {1}) / max({0} (1 - {0}), 1e-12)", "log(1 - {0}) - log {0}"),
    doc="""\
-[y log p + (1 - y) log(1 - p)] entry by entry, for probabilities p and targets y, as
PyTorch's BCELoss computes it: each log held at -100 or more, so p of exactly 0 or 1
(a sigmoid that rounded) gives a finite loss, and d/dp = (p - y) / max(p (1 - p), 1e-12),
finite there too (nn.functional.binary_cross_entropy reduces it).

>>> float(cr.rules.elementary.binary_cross_entropy(np.array(0.5), np.array(1.0)))
0.6931471805599453
""")


def _floats(x):
    """x as an array of floats (integers become float64, as for a true division)."""
    x = as_array(x)
    return x if x.dtype.kind in "fc" else x.astype(xp.float64)


reciprocal = elementwise(lambda x: xp.reciprocal(_floats(x)), "reciprocal",
                         lambda ans, x: -(ans * ans), text=("-{out}**2",),
                         doc="""\
1 / x (integers become floats); d/dx = -1 / x**2.

    >>> float(cr.reciprocal(4.0)), cr.grad(cr.reciprocal)(2.0)
    (0.25, -0.25)
    """)


def _sinc_slope(ans, x):
    """d/dx sin(pi x) / (pi x) = (cos(pi x) - sinc(x)) / x; near 0, where that is 0/0,
    its Taylor polynomial, whose own derivatives are right there too."""
    small = xp.abs(raw(x)) < 1e-3
    px = xp.pi * x
    series = x * (-(xp.pi ** 2) / 3 + (xp.pi ** 4 / 30) * x * x)
    return where(small, series, (cos(px) - ans) / where(small, 1.0, x))


sinc = elementwise(xp.sinc, "sinc", _sinc_slope, text=("(cos(pi {0}) - {out}) / {0}",),
                   doc="""\
sin(pi x) / (pi x), 1 at 0 (NumPy's normalised sinc).

    >>> float(cr.sinc(0.0)), cr.grad(cr.sinc)(0.0)
    (1.0, -0.0)
    >>> round(cr.grad(cr.grad(cr.sinc))(0.0), 6)      # -pi**2 / 3
    -3.289868
    """)
deg2rad = elementwise(xp.deg2rad, "deg2rad", lambda ans, x: xp.pi / 180, text=("pi / 180",),
                      doc="""\
Degrees to radians: x pi / 180.

    >>> round(float(cr.deg2rad(180.0)), 6)
    3.141593
    """)
rad2deg = elementwise(xp.rad2deg, "rad2deg", lambda ans, x: 180 / xp.pi, text=("180 / pi",),
                      doc="""\
Radians to degrees: x 180 / pi.

    >>> round(float(cr.rad2deg(np.pi)), 6)
    180.0
    """)
radians, degrees = deg2rad, rad2deg
fabs = absolute  # (NumPy's fabs is abs for reals: the same derivative, 0 at 0)


def _nan_aware_share(a, b):
    """fmax's share for a: maximum's (ties share), and all of it where b is NaN."""
    a, b = raw(a), raw(b)
    return xp.where(xp.isnan(b) & ~xp.isnan(a), 1.0, _tie_share(a, b))


fmax = elementwise(xp.fmax, "fmax", lambda ans, a, b: _nan_aware_share(a, b),
                   lambda ans, a, b: _nan_aware_share(b, a),
                   doc="""\
The larger of a and b, ignoring NaN; ties share the gradient.

    >>> cr.fmax(cr.tensor([1.0, np.nan]), cr.tensor([2.0, 0.5])).data.tolist()
    [2.0, 0.5]
    """)
fmin = elementwise(xp.fmin, "fmin", lambda ans, a, b: _nan_aware_share(-raw(a), -raw(b)),
                   lambda ans, a, b: _nan_aware_share(-raw(b), -raw(a)),
                   doc="""\
The smaller of a and b, ignoring NaN; ties share the gradient.

    >>> cr.fmin(cr.tensor([1.0, np.nan]), cr.tensor([2.0, 0.5])).data.tolist()
    [1.0, 0.5]
    """)

# ---------------------------------------------------------------------------------------
# Remainders and rounding
# ---------------------------------------------------------------------------------------

fmod = elementwise(xp.fmod, "fmod", 1, lambda ans, a, b: -xp.trunc(raw(a) / raw(b)),
                   text=("1", "-trunc({0} / {1})"), doc="""\
""\
The remainder of a / b with the sign of a (C's fmod): a - b * trunc(a / b).

    Its derivative is 1 in a and -trunc(a / b) in b.
    ""

    >>> cr.fmod(cr.tensor([-3.0, 3.0]), 2.0).data.tolist()     # the sign of a
    [-1.0, 1.0]
    >>> cr.grad(lambda b: cr.fmod(7.0, b))(2.0)               # -trunc(7 / 2)
    -3.0
    """)


def _flat(name, forward, doc, example=""):
    """A piecewise constant function: derivative 0 wherever it has one."""
    return elementwise(forward, name, lambda ans, *args, **kwargs: xp.zeros_like(raw(ans)),
                       text=("0",), doc=f"{doc} Piecewise constant: its gradient is 0.\n"
                                        f"{example}")


floor = _flat("floor", xp.floor, "The largest integer <= x, elementwise.",
              example="""
    >>> cr.floor(cr.tensor([1.5, -1.5])).data.tolist(), cr.grad(cr.floor)(1.5)
    ([1.0, -2.0], 0.0)
    """)
ceil = _flat("ceil", xp.ceil, "The smallest integer >= x, elementwise.",
             example="""
    >>> cr.ceil(cr.tensor([1.5, -1.5])).data.tolist()
    [2.0, -1.0]
    """)
trunc = _flat("trunc", xp.trunc, "x rounded towards 0, elementwise.",
              example="""
    >>> cr.trunc(cr.tensor([1.5, -1.5])).data.tolist()
    [1.0, -1.0]
    """)
rint = _flat("rint", xp.rint, "x rounded to the nearest integer (half to even).",
             example="""
    >>> cr.rint(cr.tensor([0.5, 1.5, 2.5])).data.tolist()      # half to even
    [0.0, 2.0, 2.0]
    """)
fix = trunc


def _held(x):
    # x's value, a new array (np.positive, which has no loop for bools: a mask's copy)
    if xp.result_type(x) == bool:
        return xp.logical_and(x, True)
    return xp.positive(x)


stop_gradient = elementwise(
    _held, "stop_gradient", lambda ans, x: xp.zeros_like(raw(ans)), text=("0",),
    doc="""\
x itself, as a constant of differentiation (jax.lax.stop_gradient): its derivative is
    0, so every transform and backward() sees no dependence on x through it, at every
    order; under cr.vmap a batch stays a batch.

    >>> cr.grad(lambda x: x * cr.stop_gradient(x))(3.0)      # d/dx (x * c) at c = x
    3.0
    """)
round = _flat("round", lambda x, decimals=0: xp.round(x, decimals),
              "x rounded to ``decimals`` places (half to even, as NumPy).", example="""
    >>> cr.round(cr.tensor([1.234, 5.678]), 1).data.tolist()
    [1.2, 5.7]
    """)
around = round


def _finite_slope(ans, x, nan=0.0, posinf=None, neginf=None):
    # 1 where x is finite, in x's dtype (float32 stays float32): a product, not an
    # astype to a computed dtype, so that cr.jit's compiled tier takes it as it is
    values = raw(x)
    return xp.isfinite(values) * xp.ones_like(values)


nan_to_num = elementwise(
    lambda x, nan=0.0, posinf=None, neginf=None: xp.nan_to_num(x, nan=nan, posinf=posinf,
                                                             neginf=neginf),
    "nan_to_num", _finite_slope, text=("1 where {0} is finite, else 0",),
    doc="""\
NaN and infinities replaced by numbers; the gradient passes where x is finite.

    >>> x = cr.tensor([1.0, np.nan, np.inf], requires_grad=True)
    >>> y = cr.nan_to_num(x, posinf=9.0)
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([1.0, 0.0, 9.0], [1.0, 0.0, 0.0])
    """)


# An activation built on expm1 (relu, gelu and silu are in elementwise.py)
def elu(x: ArrayLike, alpha: float = 1.0) -> Result:
    """The ELU activation: x where x > 0, else alpha (e**x - 1); a composition. Its
    derivative at 0 is alpha's side's, alpha, as PyTorch's.

    >>> x = cr.tensor([-1.0, 2.0], requires_grad=True)
    >>> y = cr.elu(x)
    >>> y.sum().backward()
    >>> np.round(y.data, 4).tolist(), np.round(x.grad, 4).tolist()
    ([-0.6321, 2.0], [0.3679, 1.0])
    """
    # expm1 of the positive entries is not selected, but would overflow (and its
    # derivative times 0 would be NaN): it sees 0 there instead
    negative = raw(x) <= 0
    return where(negative, alpha * expm1(where(negative, x, 0.0)), x)

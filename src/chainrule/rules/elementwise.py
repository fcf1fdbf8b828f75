"""Elementwise operations: arithmetic, exponentials and logarithms, trigonometric and
hyperbolic functions, activations and kinks.

Each is defined by its partial derivatives (``elementwise``), one per argument, from
which both the VJP (g * partial) and the JVP (t * partial) follow. Arguments broadcast
as in NumPy; the engine sums each gradient back to its argument's shape. Each takes
Tensors, NumPy arrays and numbers, and a function of one argument takes a Value too
(and gives one). An operation with nothing to show beyond its formula has a one-line
docstring; its example is its row in tests/test_derivatives.py.

Conventions (docs/conventions.md gives the reasons): relu'(0) = abs'(0) = 0; ties in
maximum and minimum share the gradient evenly; d/da a**0 = 0 at a = 0 and
d/db 0**b = 0 for b > 0.
"""

import math
from numbers import Number

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import elementwise, of_a_library, raw, shape_of
from ..arrays import as_array
from .common import Result

__all__ = ["add", "subtract", "multiply", "divide", "negative", "power", "exp", "log",
           "log1p", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "relu",
           "leaky_relu", "absolute", "sign", "clip", "softplus", "maximum", "minimum",
           "where", "gelu", "silu", "arctan", "remainder"]
# Also methods of Tensor and the tracers: x.exp() is exp(x), x.abs() is absolute(x).
METHODS = ["exp", "log", "log1p", "sqrt", "sin", "cos", "tan", "tanh", ("abs", "absolute"),
           "sign", "erf", "sigmoid", "relu", "softplus", "leaky_relu", "gelu", "clip", "maximum",
           "minimum"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# ---------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------

add = elementwise(xp.add, "add", 1, 1, text=("1", "1"), doc="""\
a + b, elementwise, with NumPy broadcasting (the result has the broadcast shape).

    Each gradient is g, summed back to its input's shape where that input was broadcast.

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor(10.0, requires_grad=True)     # a 0-d tensor, broadcast to (2,)
    >>> c = cr.add(a, b)                            # the same as a + b
    >>> c
    tensor([11., 12.], grad_fn=add)
    >>> c.sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()            # b was used twice: 1 + 1
    ([1.0, 1.0], 2.0)
    """)

subtract = elementwise(xp.subtract, "subtract", 1, -1, text=("1", "-{g}"), doc="""\
a - b, elementwise, with NumPy broadcasting; the gradients are g and -g.

    >>> a = cr.tensor(5.0, requires_grad=True)
    >>> b = cr.tensor(3.0, requires_grad=True)
    >>> c = cr.subtract(a, b)                       # the same as a - b
    >>> c.backward()
    >>> c.item(), a.grad.tolist(), b.grad.tolist()
    (2.0, 1.0, -1.0)
    """)

multiply = elementwise(xp.multiply, "multiply",
                       lambda ans, a, b: b,
                       lambda ans, a, b: a,
                       text=("{1}", "{0}"), doc="""\
a * b, elementwise, with NumPy broadcasting; d/da = b and d/db = a.

    >>> a = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> b = cr.tensor([4.0, 5.0, 6.0], requires_grad=True)
    >>> cr.multiply(a, b).sum().backward()          # sum(a * b)
    >>> a.grad.tolist(), b.grad.tolist()
    ([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    """)

divide = elementwise(xp.true_divide, "divide",
                     lambda ans, a, b: 1 / b,
                     lambda ans, a, b: -ans / b,                # d/db a/b = -a/b**2
                     text=("1 / {1} * {g}", "-{out} / {1} * {g}"), doc="""\
a / b, elementwise, with NumPy broadcasting; d/da = 1/b and d/db = -a/b**2.

    >>> a = cr.tensor(6.0, requires_grad=True)
    >>> b = cr.tensor(2.0, requires_grad=True)
    >>> c = cr.divide(a, b)                         # the same as a / b
    >>> c.backward()
    >>> c.item(), a.grad.tolist(), b.grad.tolist()  # 3, 1/2, -6/4
    (3.0, 0.5, -1.5)
    """)

negative = elementwise(xp.negative, "negative", -1, text=("-{g}",), doc="""\
-x, elementwise (the shape of x); the gradient is -g.

    >>> x = cr.tensor([1.0, -2.0], requires_grad=True)
    >>> y = cr.negative(x)                          # the same as -x
    >>> y.data.tolist()
    [-1.0, 2.0]
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [-1.0, -1.0]
    """)


def _d_power_base(a, b):
    """d/da a**b = b * a**(b-1), and 0 where b = 0 (a**0 = 1), even at a = 0."""
    if isinstance(b, Number):
        if b == 0:
            return 0.0 * a
        if b == 1:
            return 1.0
        return 2 * a if b == 2 else b * a ** (b - 1)  # (no a**1 node for a square)
    return b * where(raw(b) == 0, 1.0, a) ** (b - 1)


def _pow(a, b):
    """a ** b; for an array of real floats, a square or a cube as multiplies when the
    exponent is that number (about 3x faster than pow, as PyTorch does too): a*a is
    pow's own result, a*a*a within two units in the last place of it
    (tests/test_fused.py). Any other base is pow's: integers and booleans multiplied
    would keep their dtype (and wrap) where a float exponent makes pow's floats, a
    complex square is not pow's to the bit, and a Python number would stay one."""
    if (type(b) is int or type(b) is float) and \
            getattr(getattr(a, "dtype", None), "kind", None) == "f":
        if b == 2:
            return xp.square(a)
        if b == 3:
            return a * a * a
    return xp.pow(a, b)


def _d_power_exponent(ans, a):
    """d/db a**b = a**b * ln a, and 0 where a = 0 (0**b = 0 for b > 0)."""
    return ans * log(where(raw(a) == 0, 1.0, a))


power = elementwise(_pow, "power",
                    lambda ans, a, b: _d_power_base(a, b),
                    lambda ans, a, b: _d_power_exponent(ans, a),
                    text=("{1} * {0}**({1} - 1)", "{out} * log({0})"), doc="""\
a ** b, elementwise, with NumPy broadcasting; both base and exponent may vary.

    d/da = b * a**(b-1) and d/db = a**b * log(a). Where the formulas would say NaN
    for a finite function, the derivative is 0: d/da a**0 at a = 0, and d/db 0**b.

    >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> cr.power(x, 2).sum().backward()             # the same as (x ** 2).sum()
    >>> x.grad.tolist()                             # 2 * x
    [2.0, 4.0, 6.0]
    >>> b = cr.tensor(3.0, requires_grad=True)
    >>> y = cr.power(2.0, b)                        # 2 ** b
    >>> y.backward()
    >>> y.item(), round(b.grad.item(), 4)           # 8 * log(2)
    (8.0, 5.5452)
    """)


# ---------------------------------------------------------------------------------------
# Exponentials, logarithms, trigonometric and hyperbolic functions
# ---------------------------------------------------------------------------------------

exp = elementwise(xp.exp, "exp", lambda ans, x: ans, text=("{out}",),
                  doc="e**x, elementwise; its derivative is itself.")

log = elementwise(xp.log, "log", lambda ans, x: 1 / x, text=("1 / {0} * {g}",), doc="""\
The natural logarithm, elementwise (the shape of x); its derivative is 1/x.

    On tensors, log(0) is -inf and a negative x gives nan, as in NumPy
    (``cr.detect_anomaly()`` stops there); on a Value it is a ValueError.

    >>> x = cr.tensor([1.0, 4.0], requires_grad=True)
    >>> y = cr.log(x)                               # or x.log()
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [1.0, 0.25]
    """)

log1p = elementwise(xp.log1p, "log1p", lambda ans, x: 1 / (1 + x),
                    text=("1 / (1 + {0}) * {g}",), doc="""\
log(1 + x), elementwise, accurate for tiny x; its derivative is 1/(1 + x).

    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> cr.log1p(x).sum().backward()                # or x.log1p()
    >>> x.grad.tolist()
    [1.0, 0.5]
    >>> float(cr.log1p(1e-20)), float(np.log(1 + 1e-20))     # 1 + 1e-20 rounds to 1
    (1e-20, 0.0)
    """)

sqrt = elementwise(xp.sqrt, "sqrt", lambda ans, x: 0.5 / ans, text=("0.5 / {out} * {g}",),
                   doc="The square root, elementwise; its derivative is 1 / (2 sqrt(x)).")

sin = elementwise(xp.sin, "sin", lambda ans, x: cos(x), text=("cos({0})",),
                  doc="The sine, elementwise; its derivative is cos(x).")

cos = elementwise(xp.cos, "cos", lambda ans, x: -sin(x), text=("-sin({0})",),
                  doc="The cosine, elementwise; its derivative is -sin(x).")

tan = elementwise(xp.tan, "tan", lambda ans, x: 1 + ans * ans, text=("(1 + {out}**2)",),
                  doc="The tangent, elementwise; its derivative is 1 + tan(x)**2.")

tanh = elementwise(xp.tanh, "tanh", lambda ans, x: 1 - ans * ans,
                   text=("(1 - {out}**2)",), doc="""\
The hyperbolic tangent, elementwise; its derivative is 1 - tanh(x)**2.

    No overflow far from 0: tanh(100) is 1 with derivative 0. Derivatives of any
    order come from the same rule.

    >>> x = cr.tensor([0.0, 100.0], requires_grad=True)
    >>> y = cr.tanh(x)                              # or x.tanh()
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([0.0, 1.0], [1.0, 0.0])
    >>> round(cr.grad(cr.grad(cr.tanh))(0.5), 6)    # -2 tanh(x) (1 - tanh(x)**2)
    -0.726862
    """)


arctan = elementwise(xp.atan, "arctan", lambda ans, x: 1 / (1 + x * x),
                     text=("1 / (1 + {0}**2)",),
                     doc="The inverse tangent, in (-pi/2, pi/2); d/dx = 1 / (1 + x**2).")


remainder = elementwise(xp.remainder, "remainder", 1,
                        lambda ans, a, b: -xp.floor(raw(a) / raw(b)),
                        text=("1", "-floor({0} / {1})"), doc="""\
a mod b, elementwise (``a % b``), with the sign of b as in NumPy and Python.

    a - b * floor(a / b): its derivative is 1 in a and -floor(a / b) in b (the floor is
    piecewise constant).

    >>> x = cr.tensor([1.5, 2.5], requires_grad=True)
    >>> y = x % 1.0
    >>> y.data.tolist()
    [0.5, 0.5]
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [1.0, 1.0]
    """)


def _sigmoid(x):
    """The logistic function 1 / (1 + e**-x), elementwise (the shape of x).

    Computed without overflow (e**-|x| never exceeds 1); its derivative is
    sigmoid(x) * (1 - sigmoid(x)).

    >>> x = cr.tensor([0.0, -1000.0], requires_grad=True)
    >>> y = cr.sigmoid(x)                     # or x.sigmoid()
    >>> y
    tensor([0.5, 0. ], grad_fn=sigmoid)
    >>> y.sum().backward()
    >>> x.grad.tolist()                       # 0.5 * (1 - 0.5), and flat far out
    [0.25, 0.0]
    """
    e = xp.exp(-xp.abs(x))
    return xp.where(as_array(x) >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = elementwise(_sigmoid, "sigmoid", lambda ans, x: ans * (1 - ans),
                      text=("{out} * (1 - {out})",))


def _erf(x):
    """The error function, elementwise: 2/sqrt(pi) times the integral of e**-t**2 from 0 to x.

    Its derivative is 2/sqrt(pi) * e**-x**2; the result has the shape of x.

    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> y = cr.erf(x)
    >>> y.sum().backward()
    >>> np.round(y.data, 4).tolist(), np.round(x.grad, 4).tolist()
    ([0.0, 0.8427], [1.1284, 0.4151])
    """
    dtype = xp.result_type(x)  # float32 stays float32; anything else is float64
    erf = xp.vectorize(math.erf, otypes=[dtype if dtype.kind == "f" else xp.float64])
    return xp.call(erf, x)  # (Python's erf, entry by entry: one call of a cr.jit program)


erf = elementwise(_erf, "erf", lambda ans, x: _TWO_OVER_SQRT_PI * exp(-x * x),
                  text=("2/sqrt(pi) * exp(-{0}**2)",))


def _softplus(x):
    """log(1 + e**x), elementwise (the shape of x), computed without overflow.

    A smooth relu; its derivative is sigmoid(x).

    >>> x = cr.tensor([0.0, 1000.0], requires_grad=True)
    >>> y = cr.softplus(x)
    >>> np.round(y.data, 4).tolist()          # log 2, and no overflow at 1000
    [0.6931, 1000.0]
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [0.5, 1.0]
    """
    return xp.logaddexp(0, x)


softplus = elementwise(_softplus, "softplus", lambda ans, x: sigmoid(x))


# ---------------------------------------------------------------------------------------
# Kinks: relu'(0) = abs'(0) = 0; leaky_relu'(0) is its slope, as in PyTorch. The masks are
# computed on raw numbers: piecewise constant, their own derivative is 0.
# ---------------------------------------------------------------------------------------

def _relu(x):
    """max(x, 0), elementwise (the shape of x); its derivative is 1 where x > 0, else 0.

    At the kink, relu'(0) is taken to be 0, as in PyTorch and JAX.

    >>> x = cr.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    >>> y = cr.relu(x)                        # or x.relu()
    >>> y
    tensor([0., 0., 2.], grad_fn=relu)
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [0.0, 0.0, 1.0]
    """
    return xp.maximum(x, 0)


relu = elementwise(_relu, "relu", lambda ans, x: raw(x) > 0, text=("({0} > 0)",))


def _leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else ``negative_slope * x``, elementwise (the shape of x).

    >>> x = cr.tensor([-2.0, 3.0], requires_grad=True)
    >>> y = cr.leaky_relu(x, negative_slope=0.1)
    >>> y.data.tolist()
    [-0.2, 3.0]
    >>> y.sum().backward()
    >>> x.grad.tolist()                       # the slope on each side
    [0.1, 1.0]
    """
    return xp.where(as_array(x) > 0, x, xp.multiply(x, negative_slope))


leaky_relu = elementwise(_leaky_relu, "leaky_relu",
                         lambda ans, x, negative_slope=0.01:
                         xp.where(raw(x) > 0, 1.0, negative_slope))

absolute = elementwise(xp.abs, "abs", lambda ans, x: xp.sign(raw(x)), text=("sign({0})",), doc="""\
|x|, elementwise (the shape of x); ``cr.abs`` is the same function.

    Its derivative is sign(x), taken to be 0 at the kink x = 0 (of a complex z, the
    rules are in ``complexes.py``).

    >>> x = cr.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    >>> y = cr.abs(x)                               # or abs(x), x.abs()
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([2.0, 0.0, 3.0], [-1.0, 0.0, 1.0])
    """)

sign = elementwise(xp.sign, "sign", lambda ans, x: xp.zeros_like(raw(ans)), text=("0",), doc="""\
-1, 0 or 1 by the sign of x, elementwise; flat, so its gradient is 0.

    >>> x = cr.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    >>> y = cr.sign(x)                              # or x.sign()
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([-1.0, 0.0, 1.0], [0.0, 0.0, 0.0])
    """)


def _tie_share(a, b):
    """1 where a wins, 0 where it loses, 1/2 at a tie: ties share the gradient evenly."""
    a, b = raw(a), raw(b)
    return xp.where(a > b, 1.0, xp.where(a == b, 0.5, 0.0))


maximum = elementwise(xp.maximum, "maximum",
                      lambda ans, a, b: _tie_share(a, b),
                      lambda ans, a, b: _tie_share(b, a), doc="""\
The larger of a and b, elementwise, with NumPy broadcasting.

    The gradient goes to the larger one; at a tie, half to each.

    >>> a = cr.tensor([1.0, 5.0, 3.0], requires_grad=True)
    >>> b = cr.tensor([4.0, 2.0, 3.0], requires_grad=True)
    >>> y = cr.maximum(a, b)                        # or a.maximum(b)
    >>> y.sum().backward()
    >>> y.data.tolist(), a.grad.tolist(), b.grad.tolist()
    ([4.0, 5.0, 3.0], [0.0, 1.0, 0.5], [1.0, 0.0, 0.5])
    """)

minimum = elementwise(xp.minimum, "minimum",
                      lambda ans, a, b: _tie_share(b, a),
                      lambda ans, a, b: _tie_share(a, b), doc="""\
The smaller of a and b, elementwise, with NumPy broadcasting.

    The gradient goes to the smaller one; at a tie, half to each.

    >>> a = cr.tensor([1.0, 5.0, 3.0], requires_grad=True)
    >>> y = cr.minimum(a, 2.0)                      # a number broadcasts
    >>> y.sum().backward()
    >>> y.data.tolist(), a.grad.tolist()
    ([1.0, 2.0, 2.0], [1.0, 0.0, 0.0])
    """)


def _inside(x, a_min, a_max):
    """Where clip lets x through (bounds included, as in PyTorch's clamp)."""
    x, a_min, a_max = raw(x), raw(a_min), raw(a_max)
    inside = xp.ones(shape_of(x), dtype=bool)
    if a_min is not None:
        inside = inside & (x >= a_min)
    if a_max is not None:
        inside = inside & (x <= a_max)
    return inside


def _clipped_to_min(x, a_min, a_max):
    """Where x is below the lower bound and not above the upper one."""
    below = raw(x) < raw(a_min)
    return below if a_max is None else below & ~(raw(x) > raw(a_max))


# x passes where it is inside; a bound passes where x is beyond it.
_clip = elementwise(xp.clip, "clip",
                    lambda ans, x, lo, hi: _inside(x, lo, hi),
                    lambda ans, x, lo, hi: _clipped_to_min(x, lo, hi),
                    lambda ans, x, lo, hi: raw(x) > raw(hi))


def clip(x: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None, *,
         min: ArrayLike | None = None, max: ArrayLike | None = None) -> Result:
    """x limited to [a_min, a_max], elementwise; either bound may be None (no limit).
    ``min=`` and ``max=`` name them as NumPy 2 and PyTorch's clamp do.

    The bounds may be numbers, arrays or Tensors that broadcast against x; the result
    has the broadcast shape. The gradient passes where x is inside the bounds (bounds
    included, as PyTorch's clamp) and goes to the bound where x is clipped.

    >>> x = cr.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    >>> y = cr.clip(x, 0.0, 1.0)              # or x.clip(0.0, 1.0)
    >>> y
    tensor([0. , 0.5, 1. ], grad_fn=clip)
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [0.0, 1.0, 0.0]
    """
    return _clip(x, a_min if min is None else min, a_max if max is None else max)


_where = elementwise(xp.where, "where", None,
                     lambda ans, c, a, b: c,
                     lambda ans, c, a, b: ~c)


def where(condition: ArrayLike, a: ArrayLike, b: ArrayLike) -> Result:
    """``a`` where ``condition`` holds, else ``b``, elementwise (np.where).

    ``condition`` is a boolean array or Tensor (it gets no gradient); a and b are
    differentiable, each receiving the gradient where it was chosen. The three
    broadcast together; the result has the broadcast shape.

    >>> x = cr.tensor([-1.0, 2.0], requires_grad=True)
    >>> y = cr.where(x > 0, x, x * x)         # x for positives, x**2 elsewhere
    >>> y.data.tolist()
    [1.0, 2.0]
    >>> y.sum().backward()
    >>> x.grad.tolist()                       # 2x on the left, 1 on the right
    [-2.0, 1.0]
    """
    condition = raw(condition)  # (torch's, Dask's mask: kept in its library)
    return _where(condition if of_a_library(condition) else as_array(condition, bool), a, b)


# ---------------------------------------------------------------------------------------
# Compositions: no rules of their own, the rules of their parts do it all
# ---------------------------------------------------------------------------------------

def gelu(x: ArrayLike, approximate: str = "none") -> Result:
    """The GELU activation x * Phi(x), elementwise, Phi the standard normal CDF.

    ``approximate="tanh"`` uses PyTorch's tanh formula instead of erf. A composition
    of table operations, so it needs no rule of its own.

    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> y = cr.gelu(x)                        # or x.gelu()
    >>> y.sum().backward()
    >>> np.round(y.data, 4).tolist(), np.round(x.grad, 4).tolist()   # Phi(x) + x phi(x)
    ([0.0, 0.8413], [0.5, 1.0833])
    """
    if approximate == "tanh":
        return 0.5 * x * (1 + tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return 0.5 * x * (1 + erf(x / math.sqrt(2.0)))


def silu(x: ArrayLike) -> Result:
    """The SiLU (swish) activation x * sigmoid(x), elementwise; a composition.

    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> y = cr.silu(x)
    >>> y.sum().backward()
    >>> np.round(y.data, 4).tolist(), np.round(x.grad, 4).tolist()
    ([0.0, 0.7311], [0.5, 0.9277])
    """
    return x * sigmoid(x)


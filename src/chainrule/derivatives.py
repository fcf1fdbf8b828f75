"""The tensor engine's derivative table: every operation, its forward computation in
NumPy, and its rules, reverse mode (VJP) beside forward mode (JVP).

How to read a rule:

    exp.defvjp(lambda g, ans, x: g * ans)     # reverse: gradient of the input from g
    exp.defjvp(lambda t, ans, x: t * ans)     # forward: tangent of the output from t

``g`` is the gradient arriving at the result ``ans``; ``t`` is the tangent of one input.
A VJP rule must also work when ``g`` carries extra *leading* axes, a batch of
cotangents (the rows of an identity, for a whole Jacobian in one backward pass): so the
rules address axes from the end and build shapes as ``_lead(g, ans) + shape``.
The rules are written with the operations of this table, so they run on raw arrays
in an ordinary backward pass and on Tensors with ``backward(create_graph=True)``,
giving derivatives of any order from this one table. Two things the engine does for
every rule, so no rule has to: a VJP's result is summed back to its input's shape
(``unbroadcast``) and cast to its dtype; a JVP's result is broadcast to the output's.

Masks (where x > 0, where a tie is) are computed on the raw numbers with ``_raw``: they
are piecewise constant, so their own derivative is 0.

Conventions (docs/conventions.md gives the reasons): relu'(0) = abs'(0) = 0; ties in
max, min, maximum and minimum share the gradient evenly; d/dx x**0 = 0 at x = 0 and
d/dy 0**y = 0 for y > 0; the gradient of norm at 0 is 0.
"""

import builtins
import math
from numbers import Number

import numpy as np

from .tensor import Primitive, Tensor, _raw

_SQRT_2 = math.sqrt(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _ndim(x):
    """x.ndim for arrays, Tensors and tracers (an attribute: NumPy's np.ndim is slower)."""
    ndim = getattr(x, "ndim", None)
    return np.ndim(x) if ndim is None else ndim


def _shape(x):
    shape = getattr(x, "shape", None)
    return np.shape(x) if shape is None else tuple(shape)


def _primitive(name):
    return lambda forward: Primitive(forward, name)


def _tangent_lead(t, x):
    """The leading batch axes of a tangent: those beyond its input's own axes."""
    return tuple(_shape(t)[:_ndim(t) - _ndim(x)])


def _broadcasting(*prims):
    """Mark operations that broadcast their operands against each other: the engine pads
    a batched tangent to the result's rank first, so that batch axes stay in front."""
    for prim in prims:
        prim.broadcasts = True


# ---------------------------------------------------------------------------------------
# Arithmetic (NumPy broadcasting; the engine sums each gradient back to its input's shape)
# ---------------------------------------------------------------------------------------

add = Primitive(np.add, "add")
add.defvjp(lambda g, ans, a, b: g,
           lambda g, ans, a, b: g)
add.defjvp(lambda t, ans, a, b: t,
           lambda t, ans, a, b: t)

subtract = Primitive(np.subtract, "subtract")
subtract.defvjp(lambda g, ans, a, b: g,
                lambda g, ans, a, b: -g)
subtract.defjvp(lambda t, ans, a, b: t,
                lambda t, ans, a, b: -t)

multiply = Primitive(np.multiply, "multiply")
multiply.defvjp(lambda g, ans, a, b: g * b,
                lambda g, ans, a, b: g * a)
multiply.defjvp(lambda t, ans, a, b: t * b,
                lambda t, ans, a, b: a * t)

divide = Primitive(np.true_divide, "divide")
divide.defvjp(lambda g, ans, a, b: g / b,
              lambda g, ans, a, b: -g * ans / b)          # d/db a/b = -a/b**2
divide.defjvp(lambda t, ans, a, b: t / b,
              lambda t, ans, a, b: -t * ans / b)

negative = Primitive(np.negative, "negative")
negative.defvjp(lambda g, ans, x: -g)
negative.defjvp(lambda t, ans, x: -t)


def _d_power_base(a, b):
    """d/da a**b = b * a**(b-1), and 0 where b = 0 (a**0 = 1), even at a = 0."""
    if isinstance(b, Number):
        return b * a ** (b - 1) if b != 0 else 0.0 * a
    return b * where(_raw(b) == 0, 1.0, a) ** (b - 1)


def _d_power_exponent(ans, a, b):
    """d/db a**b = a**b * ln a, and 0 where a = 0 (0**b = 0 for b > 0)."""
    return ans * log(where(_raw(a) == 0, 1.0, a))


power = Primitive(np.power, "power")
power.defvjp(lambda g, ans, a, b: g * _d_power_base(a, b),
             lambda g, ans, a, b: g * _d_power_exponent(ans, a, b))
power.defjvp(lambda t, ans, a, b: t * _d_power_base(a, b),
             lambda t, ans, a, b: t * _d_power_exponent(ans, a, b))


# ---------------------------------------------------------------------------------------
# Exponentials, logarithms, trigonometric and hyperbolic functions
# ---------------------------------------------------------------------------------------

exp = Primitive(np.exp, "exp")
exp.defvjp(lambda g, ans, x: g * ans)
exp.defjvp(lambda t, ans, x: t * ans)

log = Primitive(np.log, "log")
log.defvjp(lambda g, ans, x: g / x)
log.defjvp(lambda t, ans, x: t / x)

log1p = Primitive(np.log1p, "log1p")
log1p.defvjp(lambda g, ans, x: g / (1 + x))
log1p.defjvp(lambda t, ans, x: t / (1 + x))

sqrt = Primitive(np.sqrt, "sqrt")
sqrt.defvjp(lambda g, ans, x: g / (2 * ans))
sqrt.defjvp(lambda t, ans, x: t / (2 * ans))

sin = Primitive(np.sin, "sin")
sin.defvjp(lambda g, ans, x: g * cos(x))
sin.defjvp(lambda t, ans, x: t * cos(x))

cos = Primitive(np.cos, "cos")
cos.defvjp(lambda g, ans, x: -g * sin(x))
cos.defjvp(lambda t, ans, x: -t * sin(x))

tan = Primitive(np.tan, "tan")
tan.defvjp(lambda g, ans, x: g * (1 + ans * ans))         # sec^2 = 1 + tan^2
tan.defjvp(lambda t, ans, x: t * (1 + ans * ans))

tanh = Primitive(np.tanh, "tanh")
tanh.defvjp(lambda g, ans, x: g * (1 - ans * ans))
tanh.defjvp(lambda t, ans, x: t * (1 - ans * ans))


@_primitive("sigmoid")
def sigmoid(x):
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
    e = np.exp(-np.abs(x))
    return np.where(np.asarray(x) >= 0, 1 / (1 + e), e / (1 + e))


sigmoid.defvjp(lambda g, ans, x: g * ans * (1 - ans))
sigmoid.defjvp(lambda t, ans, x: t * ans * (1 - ans))


@_primitive("erf")
def erf(x):
    """The error function, elementwise: 2/sqrt(pi) times the integral of e**-t**2 from 0 to x.

    Its derivative is 2/sqrt(pi) * e**-x**2; the result has the shape of x.

    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> y = cr.erf(x)
    >>> y.sum().backward()
    >>> np.round(y.data, 4).tolist(), np.round(x.grad, 4).tolist()
    ([0.0, 0.8427], [1.1284, 0.4151])
    """
    dtype = np.asarray(x).dtype  # float32 stays float32; anything else is float64
    return np.vectorize(math.erf, otypes=[dtype if dtype.kind == "f" else np.float64])(x)


erf.defvjp(lambda g, ans, x: g * _TWO_OVER_SQRT_PI * exp(-x * x))
erf.defjvp(lambda t, ans, x: t * _TWO_OVER_SQRT_PI * exp(-x * x))


# ---------------------------------------------------------------------------------------
# Kinks: relu'(0) = abs'(0) = 0; leaky_relu'(0) is its slope, as in PyTorch
# ---------------------------------------------------------------------------------------

@_primitive("relu")
def relu(x):
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
    return np.maximum(x, 0)


relu.defvjp(lambda g, ans, x: g * (_raw(x) > 0))
relu.defjvp(lambda t, ans, x: t * (_raw(x) > 0))


@_primitive("leaky_relu")
def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else ``negative_slope * x``, elementwise (the shape of x).

    >>> x = cr.tensor([-2.0, 3.0], requires_grad=True)
    >>> y = cr.leaky_relu(x, negative_slope=0.1)
    >>> y.data.tolist()
    [-0.2, 3.0]
    >>> y.sum().backward()
    >>> x.grad.tolist()                       # the slope on each side
    [0.1, 1.0]
    """
    return np.where(np.asarray(x) > 0, x, np.multiply(x, negative_slope))


leaky_relu.defvjp(lambda g, ans, x, negative_slope=0.01:
                  where(_raw(x) > 0, g, g * negative_slope))
leaky_relu.defjvp(lambda t, ans, x, negative_slope=0.01:
                  where(_raw(x) > 0, t, t * negative_slope))

absolute = Primitive(np.abs, "abs")
absolute.defvjp(lambda g, ans, x: g * np.sign(_raw(x)))
absolute.defjvp(lambda t, ans, x: t * np.sign(_raw(x)))

sign = Primitive(np.sign, "sign")                        # flat almost everywhere
sign.defvjp(lambda g, ans, x: 0 * g)
sign.defjvp(lambda t, ans, x: 0 * t)


@_primitive("clip")
def _clip(x, a_min, a_max):
    return np.clip(x, a_min, a_max)


def _inside(x, a_min, a_max):
    """Where clip lets x through (bounds included, as in PyTorch's clamp)."""
    x, a_min, a_max = _raw(x), _raw(a_min), _raw(a_max)
    inside = np.ones(_shape(x), dtype=bool)
    if a_min is not None:
        inside = inside & (x >= a_min)
    if a_max is not None:
        inside = inside & (x <= a_max)
    return inside


def _below(x, bound):
    return _raw(x) < _raw(bound)


def _above(x, bound):
    return _raw(x) > _raw(bound)


# x passes where it is inside; a bound passes where x is beyond it.
_clip.defvjp(lambda g, ans, x, lo, hi: g * _inside(x, lo, hi),
             lambda g, ans, x, lo, hi: g * (_below(x, lo) & ~_above(x, hi) if hi is not None
                                            else _below(x, lo)),
             lambda g, ans, x, lo, hi: g * _above(x, hi))
_clip.defjvp(lambda t, ans, x, lo, hi: t * _inside(x, lo, hi),
             lambda t, ans, x, lo, hi: t * (_below(x, lo) & ~_above(x, hi) if hi is not None
                                            else _below(x, lo)),
             lambda t, ans, x, lo, hi: t * _above(x, hi))


def clip(x, a_min=None, a_max=None):
    """x limited to [a_min, a_max], elementwise; either bound may be None (no limit).

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
    return _clip(x, a_min, a_max)


@_primitive("softplus")
def softplus(x):
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
    return np.logaddexp(0, x)


softplus.defvjp(lambda g, ans, x: g * sigmoid(x))
softplus.defjvp(lambda t, ans, x: t * sigmoid(x))


def _tie_share(a, b):
    """1 where a wins, 0 where it loses, 1/2 at a tie: ties share the gradient evenly."""
    a, b = _raw(a), _raw(b)
    return np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))


maximum = Primitive(np.maximum, "maximum")
maximum.defvjp(lambda g, ans, a, b: g * _tie_share(a, b),
               lambda g, ans, a, b: g * _tie_share(b, a))
maximum.defjvp(lambda t, ans, a, b: t * _tie_share(a, b),
               lambda t, ans, a, b: t * _tie_share(b, a))

minimum = Primitive(np.minimum, "minimum")
minimum.defvjp(lambda g, ans, a, b: g * _tie_share(b, a),
               lambda g, ans, a, b: g * _tie_share(a, b))
minimum.defjvp(lambda t, ans, a, b: t * _tie_share(b, a),
               lambda t, ans, a, b: t * _tie_share(a, b))


@_primitive("where")
def _where(condition, a, b):
    return np.where(condition, a, b)


_where.defvjp(None,
              lambda g, ans, c, a, b: _where(c, g, 0 * g),
              lambda g, ans, c, a, b: _where(c, 0 * g, g))
_where.defjvp(None,
              lambda t, ans, c, a, b: _where(c, t, 0 * t),
              lambda t, ans, c, a, b: _where(c, 0 * t, t))


def where(condition, a, b):
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
    return _where(_raw(condition), a, b)


# ---------------------------------------------------------------------------------------
# Reductions: the gradient of a reduced axis is spread back along it (expand_reduced)
# ---------------------------------------------------------------------------------------

def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim if ndim else a for a in axes))


def _lead(g, ans):
    """The leading batch axes of a gradient: those beyond the result's own axes."""
    return tuple(_shape(g)[:_ndim(g) - _ndim(ans)])


def _from_end(axis, ndim):
    """Axes counted from the end (-1 is the last), so that batch axes in front are ignored."""
    return tuple(a - ndim for a in _axes(axis, ndim))


def expand_reduced(g, shape, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction back to the shape it reduced (keeping any
    leading batch axes of g)."""
    shape = tuple(shape)
    axes = _axes(axis, len(shape))
    lead = tuple(_shape(g)[:_ndim(g) - (len(shape) if keepdims else
                                             len(shape) - len(axes))])
    if not keepdims:
        kept = list(shape)
        for a in axes:
            kept[a] = 1
        g = reshape(g, lead + tuple(kept))
    return broadcast_to(g, lead + shape)


def unbroadcast(g, shape, batch_ndim=0):
    """Sum a gradient of a broadcast result back to an operand's shape: first the
    leading axes the operand lacked, then the axes where it had size 1. The first
    ``batch_ndim`` axes of g (a batch of cotangents) are kept as they are."""
    shape, g_shape = tuple(shape), _shape(g)
    start = len(g_shape) - len(shape)  # the operand's first axis in g
    axes = tuple(range(batch_ndim, start))
    if 1 in shape:
        axes += tuple(start + i for i, n in enumerate(shape)
                      if n == 1 and g_shape[start + i] != 1)
    target = g_shape[:batch_ndim] + shape
    if type(g) is np.ndarray:  # an ordinary backward pass: NumPy directly
        g = np.add.reduce(g, axis=axes) if axes else g
        return g.reshape(target) if g.shape != target else g
    if axes:
        g = sum(g, axis=axes)
    return reshape(g, target) if _shape(g) != target else g


@_primitive("sum")
def sum(x, axis=None, keepdims=False):  # noqa: A001  (cr.sum, like np.sum)
    """The sum over ``axis`` (an int, a tuple, or None for all), like np.sum.

    The result has x's shape without the summed axes (kept as size 1 with
    ``keepdims=True``). Every entry counts once, so the gradient is g spread back
    over the summed axes.

    >>> x = cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)  # (2, 3)
    >>> cr.sum(x, axis=0)                     # shape (3,); or x.sum(axis=0)
    tensor([5., 7., 9.], grad_fn=sum)
    >>> x.sum(axis=1, keepdims=True).shape
    (2, 1)
    >>> x.sum().backward()
    >>> x.grad.tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    if type(x) is np.ndarray and x.dtype.kind == "f":  # the ufunc itself: no wrapper
        return np.add.reduce(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


sum.defvjp(lambda g, ans, x, axis=None, keepdims=False:
           expand_reduced(g, _shape(x), axis, keepdims))
sum.defjvp(lambda t, ans, x, axis=None, keepdims=False:
           sum(t, _from_end(axis, _ndim(x)), keepdims))


def _count(x, ans):
    return np.size(x) // builtins.max(np.size(ans), 1) if np.size(x) else 0


@_primitive("mean")
def mean(x, axis=None, keepdims=False):
    """The mean over ``axis`` (an int, a tuple, or None for all), like np.mean.

    Shapes as for ``sum``; each of the n averaged entries gets 1/n of the gradient.

    >>> x = cr.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> m = cr.mean(x)                        # or x.mean()
    >>> m
    tensor(2.5, grad_fn=mean)
    >>> m.backward()
    >>> x.grad.tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    return np.mean(x, axis=axis, keepdims=keepdims)


mean.defvjp(lambda g, ans, x, axis=None, keepdims=False:
            expand_reduced(g, _shape(x), axis, keepdims) / _count(x, ans))
mean.defjvp(lambda t, ans, x, axis=None, keepdims=False:
            mean(t, _from_end(axis, _ndim(x)), keepdims))


def _extremum_share(x, ans, axis, keepdims):
    """Where x attains its max (or min): ties share evenly, so the shares sum to 1."""
    x = _raw(x)
    hit = x == expand_reduced(_raw(ans), _shape(x), axis, keepdims)
    return hit / np.sum(hit, axis=_axes(axis, _ndim(x)), keepdims=True)


@_primitive("max")
def max(x, axis=None, keepdims=False):  # noqa: A001
    """The largest entry over ``axis`` (an int, a tuple, or None for all), like np.max.

    Shapes as for ``sum``. The gradient goes to the largest entry; entries tied for
    the maximum share it evenly.

    >>> x = cr.tensor([1.0, 3.0, 3.0], requires_grad=True)
    >>> m = cr.max(x)                         # or x.max()
    >>> m.item()
    3.0
    >>> m.backward()
    >>> x.grad.tolist()                       # a tie: half each
    [0.0, 0.5, 0.5]
    """
    return np.max(x, axis=axis, keepdims=keepdims)


@_primitive("min")
def min(x, axis=None, keepdims=False):  # noqa: A001
    """The smallest entry over ``axis`` (an int, a tuple, or None for all), like np.min.

    Shapes as for ``sum``. The gradient goes to the smallest entry; entries tied for
    the minimum share it evenly.

    >>> x = cr.tensor([[2.0, 1.0], [0.0, 5.0]], requires_grad=True)
    >>> m = cr.min(x, axis=1)                 # the smallest of each row, shape (2,)
    >>> m.data.tolist()
    [1.0, 0.0]
    >>> m.sum().backward()
    >>> x.grad.tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    return np.min(x, axis=axis, keepdims=keepdims)


for _extremum in (max, min):
    _extremum.defvjp(lambda g, ans, x, axis=None, keepdims=False:
                     expand_reduced(g, _shape(x), axis, keepdims)
                     * _extremum_share(x, ans, axis, keepdims))
    _extremum.defjvp(lambda t, ans, x, axis=None, keepdims=False:
                     sum(t * _extremum_share(x, ans, axis, keepdims),
                         _from_end(axis, _ndim(x)), keepdims))


@_primitive("prod")
def prod(x, axis=None, keepdims=False):
    """The product over ``axis`` (an int, a tuple, or None for all), like np.prod.

    Shapes as for ``sum``. The derivative with respect to an entry is the product of
    the others, computed without dividing by the entry, so it is exact with zeros.

    >>> x = cr.tensor([2.0, 0.0, 4.0], requires_grad=True)
    >>> p = cr.prod(x)                        # or x.prod()
    >>> p.item()
    0.0
    >>> p.backward()
    >>> x.grad.tolist()                       # 0*4, 2*4, 2*0
    [0.0, 8.0, 0.0]
    """
    return np.prod(x, axis=axis, keepdims=keepdims)


def _product_of_the_others(x, axis):
    """For each element, the product of the other elements along ``axis``.

    ans / x would divide by zero, so the zeros are kept apart: the product of the
    non-zero others (exact) times the product of the *other zeros*, written so that it
    stays differentiable in those zeros (their value is 0, their derivative is not):
    with one zero z, that product is z for every other element and 1 for z itself; with
    two zeros z1, z2, it is z1 * z2, or the other zero for each of them. With three or
    more zeros it is 0 with a first derivative of 0, exact to second order.
    """
    raw = np.asarray(_raw(x))
    is_zero = raw == 0
    nonzero = where(is_zero, 1.0, x)
    others_nonzero = expand_reduced(prod(nonzero, axis, True), raw.shape, axis, True) / nonzero
    count = np.sum(is_zero, axis=_axes(axis, raw.ndim), keepdims=True)
    if not count.any():
        return others_nonzero
    zeros = where(is_zero, x, 0.0)                       # the zeros themselves, else 0
    e1 = expand_reduced(sum(zeros, axis, True), raw.shape, axis, True)
    e2 = expand_reduced((sum(zeros, axis, True) ** 2 - sum(zeros * zeros, axis, True)) / 2,
                        raw.shape, axis, True)           # z1 * z2 for two zeros
    other_zeros = where(count == 1, where(is_zero, 1.0, e1),
                        where(count == 2, where(is_zero, e1 - zeros, e2), 0.0 * e1))
    return where(count == 0, others_nonzero, others_nonzero * other_zeros)


prod.defvjp(lambda g, ans, x, axis=None, keepdims=False:
            expand_reduced(g, _shape(x), axis, keepdims) * _product_of_the_others(x, axis))
prod.defjvp(lambda t, ans, x, axis=None, keepdims=False:
            sum(t * _product_of_the_others(x, axis), _from_end(axis, _ndim(x)), keepdims))


def var(x, axis=None, ddof=0, keepdims=False):
    """The variance over ``axis``: the mean of (x - mean(x))**2, divided by n - ddof.

    ``ddof=0`` by default, as NumPy (PyTorch's ``correction=0``); ``ddof=1`` gives the
    unbiased estimate. Shapes as for ``sum``.

    >>> x = cr.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> v = cr.var(x)                         # or x.var()
    >>> v.item(), round(cr.var(x, ddof=1).item(), 4)
    (1.25, 1.6667)
    >>> v.backward()
    >>> x.grad.tolist()                       # 2 * (x - 2.5) / 4
    [-0.75, -0.25, 0.25, 0.75]
    """
    centred = x - mean(x, axis, keepdims=True)
    shape = _shape(_raw(x))
    n = int(np.prod([shape[a] for a in _axes(axis, len(shape))]))
    return sum(centred * centred, axis, keepdims) / (n - ddof)


def std(x, axis=None, ddof=0, keepdims=False):
    """The standard deviation over ``axis``, the square root of ``var`` (``ddof=0``).

    Shapes as for ``sum``.

    >>> x = cr.tensor([1.0, 3.0], requires_grad=True)
    >>> s = cr.std(x)                         # or x.std()
    >>> s.item()
    1.0
    >>> s.backward()
    >>> x.grad.tolist()                       # (x - mean) / (n * std)
    [-0.5, 0.5]
    """
    return sqrt(var(x, axis, ddof, keepdims))


@_primitive("logsumexp")
def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over ``axis``, shifted by the max so that nothing overflows.

    Shapes as for ``sum``; its gradient is the softmax of x along the reduced axes.

    >>> x = cr.tensor([1000.0, 1000.0], requires_grad=True)
    >>> y = cr.logsumexp(x)                   # exp(1000) alone would overflow
    >>> round(y.item(), 4)                    # 1000 + log 2
    1000.6931
    >>> y.backward()
    >>> x.grad.tolist()
    [0.5, 0.5]
    """
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=_axes(axis, x.ndim))


def _softmax_of(x, axis):
    """exp(x - logsumexp(x)) over ``axis``, computed as exp(x - m) / sum(exp(x - m)) with
    m the max, a constant (the softmax does not change when x shifts): subtracting a
    rounded logsumexp instead would lose every digit for huge x."""
    raw = np.asarray(_raw(x))
    shift = np.max(raw, axis=_axes(axis, raw.ndim), keepdims=True)
    shifted = exp(x - np.where(np.isfinite(shift), shift, 0))
    return shifted / expand_reduced(sum(shifted, axis, True), raw.shape, axis, True)


logsumexp.defvjp(lambda g, ans, x, axis=None, keepdims=False:
                 expand_reduced(g, _shape(x), axis, keepdims) * _softmax_of(x, axis))
logsumexp.defjvp(lambda t, ans, x, axis=None, keepdims=False:
                 sum(t * _softmax_of(x, axis), _from_end(axis, _ndim(x)), keepdims))


@_primitive("softmax")
def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis`` (the last by default), the shape of x.

    Shifted by the max first, so nothing overflows. The derivative of entry i with
    respect to x is p_i * (onehot_i - p).

    >>> x = cr.tensor([0.0, np.log(3.0)], requires_grad=True)
    >>> p = cr.softmax(x)                     # or x.softmax()
    >>> p
    tensor([0.25, 0.75], grad_fn=softmax)
    >>> p[0].backward()
    >>> x.grad.tolist()                       # 0.25 * ([1, 0] - [0.25, 0.75])
    [0.1875, -0.1875]
    """
    x = np.asarray(x)
    shifted = np.asarray(x - np.maximum.reduce(x, axis=axis, keepdims=True))  # 0-d: an array
    if shifted.dtype.kind != "f":  # integers: a float result, as np.exp gives
        shifted = shifted.astype(np.result_type(shifted, np.float64))
    np.exp(shifted, out=shifted)  # in place: the array is ours
    shifted /= np.add.reduce(shifted, axis=axis, keepdims=True)  # (x.sum adds a wrapper)
    return shifted


softmax.defvjp(lambda g, ans, x, axis=-1:
               ans * (g - sum(g * ans, _from_end(axis, _ndim(ans)), keepdims=True)))
softmax.defjvp(lambda t, ans, x, axis=-1:
               ans * (t - sum(t * ans, _from_end(axis, _ndim(ans)), keepdims=True)))


@_primitive("log_softmax")
def log_softmax(x, axis=-1):
    """The log of the softmax along ``axis`` (the last by default), the shape of x.

    Computed as (x - m) - log(sum(exp(x - m))) with m the max: exact even for huge x,
    where log(softmax(x)) would give log(0). Its gradient is g - softmax(x) * sum(g).

    >>> x = cr.tensor([1000.0, 0.0], requires_grad=True)
    >>> y = cr.log_softmax(x)                 # or x.log_softmax()
    >>> y
    tensor([    0., -1000.], grad_fn=log_softmax)
    >>> y[1].backward()
    >>> x.grad.tolist()                       # [0, 1] - softmax(x) = [0, 1] - [1, 0]
    [-1.0, 1.0]
    """
    x = np.asarray(x)
    shifted = x - np.maximum.reduce(x, axis=axis, keepdims=True)  # the ufuncs themselves:
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))


log_softmax.defvjp(lambda g, ans, x, axis=-1:
                   g - exp(ans) * sum(g, _from_end(axis, _ndim(ans)), keepdims=True))
log_softmax.defjvp(lambda t, ans, x, axis=-1:
                   t - sum(exp(ans) * t, _from_end(axis, _ndim(ans)), keepdims=True))


@_primitive("norm")
def norm(x, axis=None, keepdims=False):
    """The 2-norm sqrt(sum(x**2)) over ``axis`` (None: all entries, so the Frobenius
    norm of a matrix).

    Shapes as for ``sum``. The gradient is x / norm, and 0 where the norm is 0
    (PyTorch's choice).

    >>> x = cr.tensor([3.0, 4.0], requires_grad=True)
    >>> n = cr.norm(x)                        # or x.norm()
    >>> n.item()
    5.0
    >>> n.backward()
    >>> np.round(x.grad, 6).tolist()          # x / 5
    [0.6, 0.8]
    """
    return np.sqrt(np.sum(np.square(x), axis=axis, keepdims=keepdims))


def _safe_reciprocal(ans):
    """1 / ans, and 0 where ans = 0: at 0 the norm's gradient is 0 (PyTorch's choice)."""
    return 1 / where(_raw(ans) == 0, np.inf, ans)


norm.defvjp(lambda g, ans, x, axis=None, keepdims=False:
            x * expand_reduced(g * _safe_reciprocal(ans), _shape(x), axis, keepdims))
norm.defjvp(lambda t, ans, x, axis=None, keepdims=False:
            sum(t * x, _from_end(axis, _ndim(x)), keepdims) * _safe_reciprocal(ans))


# ---------------------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------------------

def _matmul_vjp_a(g, a, b):
    """d/da (a @ b) applied to g: g @ b^T. A 1-D operand is promoted to a matrix, as
    np.matmul does (b to a column, a to a row), and the extra axis dropped again."""
    if type(g) is type(a) is type(b) is np.ndarray and a.ndim > 1 and b.ndim > 1:
        return np.matmul(g, b.swapaxes(-1, -2))  # plain matrices: the formula as it reads
    if _ndim(a) == 1 and _ndim(b) == 2:  # vector @ matrix: b g for each row g, all at once
        return matmul(g, swapaxes(b, -1, -2))
    if _ndim(b) == 1:
        g, b = expand_dims(g, -1), reshape(b, (1, -1))
    else:
        b = swapaxes(b, -1, -2)
    if _ndim(a) == 1:
        return squeeze(matmul(expand_dims(g, -2), b), -2)
    return matmul(g, b)


def _matmul_vjp_b(g, a, b):
    """d/db (a @ b) applied to g: a^T @ g, with 1-D operands promoted likewise."""
    if type(g) is type(a) is type(b) is np.ndarray and a.ndim > 1 and b.ndim > 1:
        return np.matmul(a.swapaxes(-1, -2), g)
    if _ndim(a) == 2 and _ndim(b) == 1:  # matrix @ vector: a^T g for each row g, as g @ a
        return matmul(g, a)
    if _ndim(b) == 1:
        g = expand_dims(g, -1)
    if _ndim(a) == 1:
        g, a = expand_dims(g, -2), reshape(a, (-1, 1))
    else:
        a = swapaxes(a, -1, -2)
    out = matmul(a, g)
    return squeeze(out, -1) if _ndim(b) == 1 else out


matmul = Primitive(np.matmul, "matmul")
matmul.defvjp(lambda g, ans, a, b: _matmul_vjp_a(g, a, b),
              lambda g, ans, a, b: _matmul_vjp_b(g, a, b))
def _pad(t, lead, core, ndim):
    """Reshape a tangent to lead + (1, ...) + core, with ``ndim`` axes after the lead."""
    return reshape(t, lead + (1,) * (ndim - len(core)) + core)


def _matmul_jvp_a(t, a, b):
    """t @ b, with a batched tangent: a 1-D a is promoted to a row explicitly (as
    np.matmul does inside) and padded, so that the batch axes of t stay in front."""
    if _ndim(a) == 1 and _ndim(b) == 2:  # vector @ matrix: every row of t times b at once
        return matmul(t, b)
    lead = _tangent_lead(t, a)
    core = (1,) + _shape(a) if _ndim(a) == 1 else _shape(a)
    t = _pad(t, lead, core, builtins.max(len(core), _ndim(b), 2))
    out = matmul(t, b)
    if _ndim(a) == 1:
        out = squeeze(out, -1 if _ndim(b) == 1 else -2)
    return out


def _matmul_jvp_b(t, a, b):
    """a @ t, likewise: a 1-D b is promoted to a column."""
    if _ndim(a) == 2 and _ndim(b) == 1:  # matrix @ vector: a t for each row t, as t @ a^T
        return matmul(t, swapaxes(a, -1, -2))
    lead = _tangent_lead(t, b)
    core = _shape(b) + (1,) if _ndim(b) == 1 else _shape(b)
    t = _pad(t, lead, core, builtins.max(len(core), _ndim(a), 2))
    out = matmul(a, t)
    return squeeze(out, -1) if _ndim(b) == 1 else out


matmul.defjvp(lambda t, ans, a, b: _matmul_jvp_a(t, a, b),
              lambda t, ans, a, b: _matmul_jvp_b(t, a, b))


# A layer's affine map x @ W + b as one operation, as torch.addmm is: one node instead of
# two, so the tensor engine spends less Python per layer. Its rules are matmul's and add's.

@_primitive("linear")
def linear(x, weight, bias):
    """``x @ weight + bias``: x (..., in), weight (in, out), bias (out,) -> (..., out).

    >>> import chainrule as cr
    >>> from chainrule.nn.functional import linear
    >>> x = cr.tensor([[1.0, 2.0]])
    >>> W = cr.tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True)
    >>> b = cr.tensor([10.0, 20.0], requires_grad=True)
    >>> y = linear(x, W, b)
    >>> y.data.tolist()
    [[11.0, 22.0]]
    >>> y.sum().backward()
    >>> W.grad.tolist(), b.grad.tolist()
    ([[1.0, 1.0], [2.0, 2.0]], [1.0, 1.0])
    """
    out = np.matmul(x, weight)
    if (type(out) is np.ndarray and type(bias) is np.ndarray and bias.dtype == out.dtype
            and bias.ndim <= 1):
        return np.add(out, bias, out=out)  # the product is a new array: add in place
    return out + bias


def _linear_vjp(g, ans, x, weight, bias, needs):
    """matmul's rules and add's, in one call: g @ W^T, x^T @ g, and g itself for the
    bias (summed over the batch by the engine). Only what ``needs`` asks for is
    computed: the first layer's input needs no gradient."""
    return (_matmul_vjp_a(g, x, weight) if needs[0] else None,
            _matmul_vjp_b(g, x, weight) if needs[1] else None,
            g)


linear.defvjp_all(_linear_vjp)
linear.defjvp(lambda t, ans, x, weight, bias: _matmul_jvp_a(t, x, weight),
              lambda t, ans, x, weight, bias: _matmul_jvp_b(t, x, weight),
              lambda t, ans, x, weight, bias:   # batch axes kept in front of the result's
              _pad(t, _tangent_lead(t, bias), _shape(bias), _ndim(ans)))


# A hidden layer, relu(x @ W + b), as one operation too: a node and a pass over the
# activations fewer per layer. relu'(z) is 1 where z > 0, that is where the output is > 0
# (0 at the kink, as for relu itself); the gradient is masked once and then goes through
# linear's rules.

@_primitive("linear_relu")
def linear_relu(x, weight, bias):
    """``relu(x @ weight + bias)``: x (..., in), weight (in, out), bias (out,) -> (..., out).

    >>> import chainrule as cr
    >>> from chainrule.nn.functional import linear
    >>> x = cr.tensor([[1.0, 2.0]])
    >>> W = cr.tensor([[1.0, -1.0], [1.0, -1.0]], requires_grad=True)
    >>> b = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> y = linear(x, W, b, activation="relu")
    >>> y
    tensor([[3., 0.]], grad_fn=linear_relu)
    >>> y.sum().backward()
    >>> W.grad.tolist(), b.grad.tolist()          # the second unit is off: no gradient
    ([[1.0, 0.0], [2.0, 0.0]], [1.0, 0.0])
    """
    out = linear.forward(x, weight, bias)
    return np.maximum(out, 0, out=out) if type(out) is np.ndarray else np.maximum(out, 0)


def _linear_relu_vjp(g, ans, x, weight, bias, needs):
    """relu's rule (mask g where the output is positive), then linear's."""
    g = g * (_raw(ans) > 0)
    return _linear_vjp(g, ans, x, weight, bias, needs)


def _masked_by_relu(linear_jvp):
    """linear's tangent rule for one argument, then relu's: zero where the output is."""
    return lambda t, ans, *args: linear_jvp(t, ans, *args) * (_raw(ans) > 0)


linear_relu.defvjp_all(_linear_relu_vjp)
linear_relu.defjvp(*[_masked_by_relu(linear.jvps[argnum]) for argnum in range(3)])


def dot(a, b):
    """The dot product of two vectors, or a matrix-vector or matrix-matrix product.

    Operands of at most 2 axes (np.dot's cases; ``matmul`` takes batches); a 0-d
    operand multiplies.

    >>> a = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> b = cr.tensor([4.0, 5.0, 6.0], requires_grad=True)
    >>> y = cr.dot(a, b)                      # or a.dot(b): 4 + 10 + 18
    >>> y.item()
    32.0
    >>> y.backward()
    >>> a.grad.tolist(), b.grad.tolist()      # each gradient is the other vector
    ([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    """
    if _ndim(a) > 2 or _ndim(b) > 2:
        raise ValueError(f"dot: operands of shapes {_shape(a)} and {_shape(b)}; "
                         f"expected at most 2-D; use matmul for batches")
    if _ndim(a) == 0 or _ndim(b) == 0:
        return multiply(a, b)
    return matmul(a, b)


def outer(a, b):
    """The outer product: ``out[i, j] = a[i] * b[j]``, of shape (a.size, b.size).

    Operands with more axes are flattened first, as np.outer does.

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor([3.0, 4.0, 5.0], requires_grad=True)
    >>> y = cr.outer(a, b)                    # shape (2, 3)
    >>> y.data.tolist()
    [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    >>> y.sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()      # sum(b) for each a[i], sum(a) for each b[j]
    ([12.0, 12.0], [3.0, 3.0, 3.0])
    """
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


# ---------------------------------------------------------------------------------------
# Shapes: the gradient is the inverse reshaping of g
# ---------------------------------------------------------------------------------------

@_primitive("reshape")
def reshape(x, shape):
    """The same entries in a new shape (one entry may be -1: whatever fits).

    A view when NumPy can make one; the gradient is reshaped back to x's shape.

    >>> x = cr.arange(6.0, requires_grad=True)
    >>> y = cr.reshape(x, (2, 3))             # or x.reshape(2, 3)
    >>> y.data.tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    >>> y[1].sum().backward()                 # only the second row is used
    >>> x.grad.tolist()
    [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    """
    return np.reshape(x, shape)


reshape.defvjp(lambda g, ans, x, shape: reshape(g, _lead(g, ans) + _shape(x)))
reshape.defjvp(lambda t, ans, x, shape: reshape(t, _tangent_lead(t, x) + _shape(ans)))


@_primitive("transpose")
def transpose(x, axes=None):
    """The axes in the order ``axes`` gives (reversed when None), like np.transpose.

    Axis i of the result is axis ``axes[i]`` of x; the gradient is transposed back.

    >>> x = cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> cr.transpose(x).data.tolist()         # or x.T
    [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    >>> cr.transpose(cr.zeros(2, 3, 4), (1, 0, 2)).shape
    (3, 2, 4)
    """
    return np.transpose(x, axes)


def _transpose_back(g, ans, axes):
    """Undo a transpose, leaving g's leading batch axes where they are."""
    ndim, lead = _ndim(ans), len(_lead(g, ans))
    order = range(ndim)[::-1] if axes is None else [a % ndim for a in axes]
    inverse = np.argsort(order)
    return transpose(g, tuple(range(lead)) + tuple(lead + int(a) for a in inverse))


transpose.defvjp(lambda g, ans, x, axes=None: _transpose_back(g, ans, axes))
def _transpose_forward(t, x, axes):
    """The same transpose, behind a tangent's leading batch axes."""
    ndim, lead = _ndim(x), len(_tangent_lead(t, x))
    order = range(ndim)[::-1] if axes is None else [a % ndim for a in axes]
    return transpose(t, tuple(range(lead)) + tuple(lead + a for a in order))


transpose.defjvp(lambda t, ans, x, axes=None: _transpose_forward(t, x, axes))


def permute(x, *axes):
    """The axes in the given order: PyTorch's name for ``transpose(x, axes)``.

    >>> x = cr.zeros(2, 3, 4)
    >>> cr.permute(x, 2, 0, 1).shape          # or x.permute(2, 0, 1)
    (4, 2, 3)
    """
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return transpose(x, axes)


@_primitive("swapaxes")
def swapaxes(x, axis1, axis2):
    """x with axes ``axis1`` and ``axis2`` exchanged.

    >>> cr.swapaxes(cr.zeros(2, 3, 4), 0, 2).shape      # or x.swapaxes(0, 2)
    (4, 3, 2)
    """
    if type(x) is np.ndarray:  # the method: np.swapaxes adds a wrapper's cost
        return x.swapaxes(axis1, axis2)
    return np.swapaxes(x, axis1, axis2)


swapaxes.defvjp(lambda g, ans, x, axis1, axis2:
                swapaxes(g, *_from_end((axis1, axis2), _ndim(ans))))
swapaxes.defjvp(lambda t, ans, x, axis1, axis2:
                swapaxes(t, *_from_end((axis1, axis2), _ndim(x))))


@_primitive("broadcast_to")
def broadcast_to(x, shape):
    """x repeated along new leading axes and size-1 axes to ``shape`` (a read-only view).

    Every copy of an entry contributes, so the gradient sums them back.

    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> y = cr.broadcast_to(x, (3, 2))        # three copies of the row
    >>> y.data.tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [3.0, 3.0]
    """
    return np.broadcast_to(x, shape)


broadcast_to.defvjp(lambda g, ans, x, shape: g)           # the engine sums it back
broadcast_to.defjvp(lambda t, ans, x, shape: broadcast_to(
    reshape(t, _tangent_lead(t, x) + (1,) * (len(shape) - _ndim(x)) + _shape(x)),
    _tangent_lead(t, x) + tuple(shape)))


def expand(x, *shape):
    """PyTorch's name for ``broadcast_to``; a size of -1 keeps x's size on that axis.

    >>> x = cr.tensor([[1.0], [2.0]])         # shape (2, 1)
    >>> cr.expand(x, -1, 3).data.tolist()     # or x.expand(-1, 3)
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    lead = len(shape) - _ndim(x)
    shape = tuple(_shape(x)[i - lead] if n == -1 else n for i, n in enumerate(shape))
    return broadcast_to(x, shape)


@_primitive("squeeze")
def squeeze(x, axis=None):
    """x without its size-1 axes (all of them, or those in ``axis``).

    >>> x = cr.zeros(1, 3, 1)
    >>> cr.squeeze(x).shape, cr.squeeze(x, 0).shape       # or x.squeeze()
    ((3,), (3, 1))
    """
    return np.squeeze(x, axis)


squeeze.defvjp(lambda g, ans, x, axis=None: reshape(g, _lead(g, ans) + _shape(x)))
squeeze.defjvp(lambda t, ans, x, axis=None: reshape(t, _tangent_lead(t, x) + _shape(ans)))


@_primitive("expand_dims")
def expand_dims(x, axis):
    """x with a new axis of size 1 at position ``axis`` (PyTorch's ``unsqueeze``).

    >>> x = cr.zeros(3)
    >>> cr.expand_dims(x, 0).shape, cr.unsqueeze(x, -1).shape   # or x.unsqueeze(0)
    ((1, 3), (3, 1))
    """
    return np.expand_dims(x, axis)


expand_dims.defvjp(lambda g, ans, x, axis: reshape(g, _lead(g, ans) + _shape(x)))
expand_dims.defjvp(lambda t, ans, x, axis:
                   reshape(t, _tangent_lead(t, x) + _shape(ans)))

unsqueeze = expand_dims


def flatten(x, start_dim=0, end_dim=-1):
    """The axes from ``start_dim`` to ``end_dim`` (both included) merged into one.

    PyTorch's flatten; by default all axes, giving a vector.

    >>> x = cr.zeros(2, 3, 4)
    >>> cr.flatten(x).shape, cr.flatten(x, 1).shape     # or x.flatten(1)
    ((24,), (2, 12))
    """
    shape = _shape(x)
    if not shape:
        return reshape(x, (1,))
    start, end = start_dim % len(shape), end_dim % len(shape)
    merged = int(np.prod(shape[start:end + 1]))
    return reshape(x, shape[:start] + (merged,) + shape[end + 1:])


@_primitive("astype")
def astype(x, dtype):
    return np.asarray(x).astype(dtype)


astype.defvjp(lambda g, ans, x, dtype: astype(g, np.asarray(_raw(x)).dtype))
astype.defjvp(lambda t, ans, x, dtype: astype(t, dtype))


def _slice_along(axis, ndim, index):
    """An index that takes ``index`` along ``axis``, written from the end (batch-safe)."""
    return (Ellipsis, index) + (slice(None),) * (ndim - 1 - axis % ndim)


@_primitive("concatenate")
def _concatenate(*arrays, axis=0):
    return np.concatenate(arrays, axis=axis)


def _piece(argnum, arrays, axis):
    """Where argument ``argnum`` sits along ``axis`` in the concatenation."""
    sizes = [_shape(a)[axis] for a in arrays]
    start = int(np.sum(sizes[:argnum]))
    return _slice_along(axis, _ndim(arrays[0]), slice(start, start + sizes[argnum]))


_concatenate.defvjp_any(lambda argnum, g, ans, *arrays, axis=0:
                        getitem(g, index=_piece(argnum, arrays, axis)))
_concatenate.defjvp_any(lambda argnum, t, ans, *arrays, axis=0:
                        index_set(_zeros_like_raw(_tangent_lead(t, arrays[argnum])
                                                  + _shape(ans), t), t,
                                  index=_piece(argnum, arrays, axis)))


def concatenate(tensors, axis=0):
    """Tensors joined along an existing ``axis``; the other axes must agree.

    Each input gets back the slice of the gradient where it went.

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor([3.0], requires_grad=True)
    >>> c = cr.concatenate([a, b])            # shape (3,)
    >>> c.data.tolist()
    [1.0, 2.0, 3.0]
    >>> (c * cr.tensor([10.0, 20.0, 30.0])).sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()
    ([10.0, 20.0], [30.0])
    """
    return _concatenate(*tensors, axis=axis)


@_primitive("stack")
def _stack(*arrays, axis=0):
    return np.stack(arrays, axis=axis)


_stack.defvjp_any(lambda argnum, g, ans, *arrays, axis=0:
                  getitem(g, index=_slice_along(axis, _ndim(ans), argnum)))
_stack.defjvp_any(lambda argnum, t, ans, *arrays, axis=0:
                  index_set(_zeros_like_raw(_tangent_lead(t, arrays[argnum]) + _shape(ans),
                                            t), t,
                            index=_slice_along(axis, _ndim(ans), argnum)))


def stack(tensors, axis=0):
    """Tensors of one shape joined along a new ``axis``: n of shape s give (n, *s).

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor([3.0, 4.0], requires_grad=True)
    >>> cr.stack([a, b]).data.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> s = cr.stack([a, b], axis=1)          # shape (2, 2): columns a and b
    >>> s[0].sum().backward()                 # the first row: a[0] + b[0]
    >>> a.grad.tolist(), b.grad.tolist()
    ([1.0, 0.0], [1.0, 0.0])
    """
    return _stack(*tensors, axis=axis)


def split(x, indices_or_sections, axis=0):
    """A list of pieces of x along ``axis``, as np.split: n equal ones, or cut at indices.

    Each piece is differentiable; the gradient of x gathers theirs.

    >>> x = cr.arange(6.0, requires_grad=True)
    >>> [p.data.tolist() for p in cr.split(x, 3)]       # or x.split(3)
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    >>> first, middle, last = cr.split(x, [1, 4])       # cut before 1 and before 4
    >>> middle.sum().backward()
    >>> x.grad.tolist()
    [0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    """
    n = _shape(x)[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ValueError(f"split: axis {axis} of size {n} does not divide into "
                             f"{indices_or_sections} equal sections")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        bounds = [0, *indices_or_sections, n]
    ndim = _ndim(x)
    return [getitem(x, index=_slice_along(axis, ndim, slice(lo, hi)))
            for lo, hi in zip(bounds[:-1], bounds[1:])]


# ---------------------------------------------------------------------------------------
# Indexing, and JAX's functional updates x.at[index].set(v) / .add(v)
# ---------------------------------------------------------------------------------------

def _is_basic(index):
    """Basic indexing (ints, slices, None, ...) never repeats an element."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, (int, np.integer, slice)) or p is None or p is Ellipsis
               for p in parts)


@_primitive("getitem")
def getitem(x, index):
    return np.asarray(x)[index]


@_primitive("index_set")
def index_set(x, value, index):
    out = np.array(x, copy=True)
    out[index] = value
    return out


@_primitive("index_add")
def index_add(x, value, index):
    out = np.array(x, dtype=np.result_type(x, value), copy=True)
    if _is_basic(index) or (isinstance(index, np.ndarray) and index.dtype == bool):
        out[index] += value
    else:
        np.add.at(out, index, value)  # repeated indices add up
    return out


def _behind(lead, index):
    """The same index, after the leading batch axes of a gradient."""
    if not lead:
        return index
    return (slice(None),) * len(lead) + (index if isinstance(index, tuple) else (index,))


getitem.defvjp(lambda g, ans, x, index:
               index_add(_zeros_like_raw(_lead(g, ans) + _shape(x), g), g,
                         index=_behind(_lead(g, ans), index)))
getitem.defjvp(lambda t, ans, x, index: getitem(t, index=_behind(_tangent_lead(t, x), index)))

index_set.defvjp(lambda g, ans, x, value, index:
                 index_set(g, 0, index=_behind(_lead(g, ans), index)),
                 lambda g, ans, x, value, index: getitem(g, index=_behind(_lead(g, ans), index)))
index_set.defjvp(lambda t, ans, x, value, index:
                 index_set(t, 0, index=_behind(_tangent_lead(t, x), index)),
                 lambda t, ans, x, value, index:
                 _place(index_set, t, _tangent_lead(t, value), ans, index))

index_add.defvjp(lambda g, ans, x, value, index: g,
                 lambda g, ans, x, value, index: getitem(g, index=_behind(_lead(g, ans), index)))
index_add.defjvp(lambda t, ans, x, value, index: t,
                 lambda t, ans, x, value, index:
                 _place(index_add, t, _tangent_lead(t, value), ans, index))


def _place(update, t, lead, ans, index):
    """The tangent of the written values, placed at the index in zeros shaped like the
    result (behind any batch axes)."""
    zeros = _zeros_like_raw(lead + _shape(ans), t)
    if lead:  # the batch axes of t must line up with those of the zeros
        region = _shape(np.zeros(_shape(ans))[index])
        t = broadcast_to(reshape(t, lead + (1,) * (len(region) - (_ndim(t) - len(lead)))
                                 + _shape(t)[len(lead):]), lead + region)
    return update(zeros, t, index=_behind(lead, index))


def _zeros_like_raw(shape, g):
    """A zero array of this shape, with the dtype of the gradient (a constant)."""
    return np.zeros(shape, dtype=np.result_type(_raw(g)))


@_primitive("identity")
def identity(x):
    """x itself (a view): how a function transform marks an input already in a graph."""
    return np.asarray(x).view()


identity.defvjp(lambda g, ans, x: g)
identity.defjvp(lambda t, ans, x: t)


# ---------------------------------------------------------------------------------------
# Compositions (no rules of their own: the rules of their parts do it all)
# ---------------------------------------------------------------------------------------

def gelu(x, approximate="none"):
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
    return 0.5 * x * (1 + erf(x / _SQRT_2))


_broadcasting(add, subtract, multiply, divide, power, maximum, minimum, _where, _clip)


def _declare_batch_safe():
    """Every rule of this table works on batches (tests/test_derivatives.py, sections 8
    and 9, check each one); users' primitives are treated row by row."""
    for value in list(globals().values()):
        if isinstance(value, Primitive):
            value.batch_safe = True


# The scalar engine's own versions, for cr.exp(Value(...)) and the like.
def _connect_scalar_engine():
    from . import value
    for prim, impl in [(exp, value.exp), (log, value.log), (sqrt, value.sqrt),
                       (sin, value.sin), (cos, value.cos), (tanh, value.tanh),
                       (sigmoid, value.sigmoid), (relu, value.relu),
                       (absolute, value.absolute), (power, value.power)]:
        prim.value_impl = impl


_connect_scalar_engine()
_declare_batch_safe()


# ---------------------------------------------------------------------------------------
# The docstrings of the operations that NumPy computes directly (a Primitive takes its
# forward function's docstring; NumPy's own would describe out= and where=, which these
# operations do not differentiate through). The Tensor methods made below carry them too.
# ---------------------------------------------------------------------------------------

add.__doc__ = """a + b, elementwise, with NumPy broadcasting (the result has the broadcast shape).

    Each gradient is g, summed back to its input's shape where that input was broadcast.

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor(10.0, requires_grad=True)     # a 0-d tensor, broadcast to (2,)
    >>> c = cr.add(a, b)                            # the same as a + b
    >>> c
    tensor([11., 12.], grad_fn=add)
    >>> c.sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()            # b was used twice: 1 + 1
    ([1.0, 1.0], 2.0)
    """

subtract.__doc__ = """a - b, elementwise, with NumPy broadcasting; the gradients are g and -g.

    >>> a = cr.tensor(5.0, requires_grad=True)
    >>> b = cr.tensor(3.0, requires_grad=True)
    >>> c = cr.subtract(a, b)                       # the same as a - b
    >>> c.backward()
    >>> c.item(), a.grad.tolist(), b.grad.tolist()
    (2.0, 1.0, -1.0)
    """

multiply.__doc__ = """a * b, elementwise, with NumPy broadcasting; d/da = b and d/db = a.

    >>> a = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> b = cr.tensor([4.0, 5.0, 6.0], requires_grad=True)
    >>> cr.multiply(a, b).sum().backward()          # sum(a * b)
    >>> a.grad.tolist(), b.grad.tolist()
    ([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    """

divide.__doc__ = """a / b, elementwise, with NumPy broadcasting; d/da = 1/b and d/db = -a/b**2.

    >>> a = cr.tensor(6.0, requires_grad=True)
    >>> b = cr.tensor(2.0, requires_grad=True)
    >>> c = cr.divide(a, b)                         # the same as a / b
    >>> c.backward()
    >>> c.item(), a.grad.tolist(), b.grad.tolist()  # 3, 1/2, -6/4
    (3.0, 0.5, -1.5)
    """

negative.__doc__ = """-x, elementwise (the shape of x); the gradient is -g.

    >>> x = cr.tensor([1.0, -2.0], requires_grad=True)
    >>> y = cr.negative(x)                          # the same as -x
    >>> y.data.tolist()
    [-1.0, 2.0]
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [-1.0, -1.0]
    """

power.__doc__ = """a ** b, elementwise, with NumPy broadcasting; both base and exponent may vary.

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
    """

exp.__doc__ = """e**x, elementwise (the shape of x); its derivative is itself.

    Like the other functions of one argument, it also takes a Value (and gives one),
    a NumPy array or a number.

    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> y = cr.exp(x)                               # or x.exp()
    >>> y.sum().backward()
    >>> np.round(y.data, 4).tolist(), np.round(x.grad, 4).tolist()
    ([1.0, 2.7183], [1.0, 2.7183])
    >>> cr.exp(cr.Value(0.0)).data                  # the scalar engine
    1.0
    """

log.__doc__ = """The natural logarithm, elementwise (the shape of x); its derivative is 1/x.

    On tensors, log(0) is -inf and a negative x gives nan, as in NumPy
    (``cr.detect_anomaly()`` stops there); on a Value it is a ValueError.

    >>> x = cr.tensor([1.0, 4.0], requires_grad=True)
    >>> y = cr.log(x)                               # or x.log()
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [1.0, 0.25]
    """

log1p.__doc__ = """log(1 + x), elementwise, accurate for tiny x; its derivative is 1/(1 + x).

    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> cr.log1p(x).sum().backward()                # or x.log1p()
    >>> x.grad.tolist()
    [1.0, 0.5]
    >>> float(cr.log1p(1e-20)), float(np.log(1 + 1e-20))     # 1 + 1e-20 rounds to 1
    (1e-20, 0.0)
    """

sqrt.__doc__ = """The square root, elementwise (the shape of x); its derivative is 1 / (2 sqrt(x)).

    >>> x = cr.tensor([1.0, 4.0], requires_grad=True)
    >>> y = cr.sqrt(x)                              # or x.sqrt()
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([1.0, 2.0], [0.5, 0.25])
    """

sin.__doc__ = """The sine, elementwise (the shape of x); its derivative is cos(x).

    >>> x = cr.tensor([0.0, np.pi / 2], requires_grad=True)
    >>> y = cr.sin(x)                               # or x.sin()
    >>> y.sum().backward()
    >>> np.round(y.data, 6).tolist(), np.round(x.grad, 6).tolist()
    ([0.0, 1.0], [1.0, 0.0])
    """

cos.__doc__ = """The cosine, elementwise (the shape of x); its derivative is -sin(x).

    >>> x = cr.tensor(np.pi / 2, requires_grad=True)
    >>> y = cr.cos(x)                               # or x.cos()
    >>> y.backward()
    >>> round(y.item(), 6), x.grad.tolist()         # cos(pi/2) = 0, -sin(pi/2) = -1
    (0.0, -1.0)
    """

tan.__doc__ = """The tangent, elementwise (the shape of x); its derivative is 1 + tan(x)**2.

    >>> x = cr.tensor([0.0, np.pi / 4], requires_grad=True)
    >>> y = cr.tan(x)                               # or x.tan()
    >>> y.sum().backward()
    >>> np.round(y.data, 6).tolist(), np.round(x.grad, 6).tolist()
    ([0.0, 1.0], [1.0, 2.0])
    """

tanh.__doc__ = """The hyperbolic tangent, elementwise; its derivative is 1 - tanh(x)**2.

    No overflow far from 0: tanh(100) is 1 with derivative 0. Derivatives of any
    order come from the same rule.

    >>> x = cr.tensor([0.0, 100.0], requires_grad=True)
    >>> y = cr.tanh(x)                              # or x.tanh()
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([0.0, 1.0], [1.0, 0.0])
    >>> round(cr.grad(cr.grad(cr.tanh))(0.5), 6)    # -2 tanh(x) (1 - tanh(x)**2)
    -0.726862
    """

absolute.__doc__ = """|x|, elementwise (the shape of x); ``cr.abs`` is the same function.

    Its derivative is sign(x), taken to be 0 at the kink x = 0.

    >>> x = cr.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    >>> y = cr.abs(x)                               # or abs(x), x.abs()
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([2.0, 0.0, 3.0], [-1.0, 0.0, 1.0])
    """

sign.__doc__ = """-1, 0 or 1 by the sign of x, elementwise; flat, so its gradient is 0.

    >>> x = cr.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    >>> y = cr.sign(x)                              # or x.sign()
    >>> y.sum().backward()
    >>> y.data.tolist(), x.grad.tolist()
    ([-1.0, 0.0, 1.0], [0.0, 0.0, 0.0])
    """

maximum.__doc__ = """The larger of a and b, elementwise, with NumPy broadcasting.

    The gradient goes to the larger one; at a tie, half to each.

    >>> a = cr.tensor([1.0, 5.0, 3.0], requires_grad=True)
    >>> b = cr.tensor([4.0, 2.0, 3.0], requires_grad=True)
    >>> y = cr.maximum(a, b)                        # or a.maximum(b)
    >>> y.sum().backward()
    >>> y.data.tolist(), a.grad.tolist(), b.grad.tolist()
    ([4.0, 5.0, 3.0], [0.0, 1.0, 0.5], [1.0, 0.0, 0.5])
    """

minimum.__doc__ = """The smaller of a and b, elementwise, with NumPy broadcasting.

    The gradient goes to the smaller one; at a tie, half to each.

    >>> a = cr.tensor([1.0, 5.0, 3.0], requires_grad=True)
    >>> y = cr.minimum(a, 2.0)                      # a number broadcasts
    >>> y.sum().backward()
    >>> y.data.tolist(), a.grad.tolist()
    ([1.0, 2.0, 2.0], [1.0, 0.0, 0.0])
    """

matmul.__doc__ = """The matrix product a @ b, as np.matmul: 1-D, 2-D and batches of matrices.

    Shapes (n, k) @ (k, m) -> (n, m); a 1-D operand is a row (on the left) or a column
    (on the right), and its axis is dropped from the result; leading axes are batches,
    broadcast. The gradients are g @ b.T and a.T @ g.

    >>> a = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)   # (2, 2)
    >>> b = cr.tensor([1.0, 1.0], requires_grad=True)                  # (2,)
    >>> y = cr.matmul(a, b)                         # the same as a @ b, shape (2,)
    >>> y.data.tolist()
    [3.0, 7.0]
    >>> y.sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()            # g b^T and a^T g, g = [1, 1]
    ([[1.0, 1.0], [1.0, 1.0]], [4.0, 6.0])
    """


# ---------------------------------------------------------------------------------------
# The methods of Tensor that are operations of this table
# ---------------------------------------------------------------------------------------

_METHODS = {}


def _transpose_method(x, *axes):
    """Axes permuted: ``x.transpose()`` reverses them, ``x.transpose(1, 0, 2)`` orders them.

    >>> x = cr.zeros(2, 3, 4)
    >>> x.transpose().shape, x.transpose(1, 0, 2).shape
    ((4, 3, 2), (3, 2, 4))
    """
    return permute(x, *axes) if axes else transpose(x)


def _reshape_method(x, *shape):
    """The same entries in a new shape: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``.

    >>> x = cr.arange(6.0)
    >>> x.reshape(2, 3).data.tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    >>> x.reshape((3, -1)).shape              # -1: whatever fits
    (3, 2)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return reshape(x, shape)


def _install_methods():
    methods = _METHODS
    methods.update({
        "exp": exp, "log": log, "log1p": log1p, "sqrt": sqrt, "abs": absolute,
        "sin": sin, "cos": cos, "tan": tan, "tanh": tanh, "sigmoid": sigmoid,
        "relu": relu, "leaky_relu": leaky_relu, "gelu": gelu, "softplus": softplus,
        "clip": clip, "sign": sign, "erf": erf,
        "sum": sum, "mean": mean, "max": max, "min": min, "prod": prod, "var": var,
        "std": std, "logsumexp": logsumexp, "softmax": softmax, "log_softmax": log_softmax,
        "norm": norm, "dot": dot, "outer": outer, "matmul": matmul,
        "transpose": _transpose_method,
        "permute": permute, "swapaxes": swapaxes, "expand": expand,
        "broadcast_to": broadcast_to, "squeeze": squeeze, "unsqueeze": expand_dims,
        "expand_dims": expand_dims, "flatten": flatten, "split": split,
        "maximum": maximum, "minimum": minimum,
        "reshape": _reshape_method,
    })
    for name, function in methods.items():
        setattr(Tensor, name, _as_method(function, name))


def _as_method(function, name):
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = function.__doc__
    return method


_install_methods()

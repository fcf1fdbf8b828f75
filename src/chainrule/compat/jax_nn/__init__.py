"""``jax.nn``'s functions, for programs that import it: ``import chainrule.jax_nn as nn``
where JAX's had ``import jax.nn as nn`` (or ``from jax import nn``).

``chainrule.nn`` is PyTorch's shape (modules, ``nn.Linear``), so JAX's functional
namespace has a path of its own, as ``jax.numpy`` has ``chainrule.numpy``. Each
function is written with chainrule's differentiable operations, with JAX's formula, so
its value and its derivatives are JAX's, at the kinks too: ``relu``'s derivative at 0 is
0, ``relu6``'s at 0 and 6 is 0, ``leaky_relu``'s at 0 is 1, ``hard_tanh``'s at +-1 is 1,
and ``celu`` and ``sparse_sigmoid``, made of ``maximum`` and ``minimum``, take half of
each side at a tie, as JAX's ``maximum`` does. ``gelu`` is the tanh approximation unless
``approximate=False``, JAX's default (``cr.gelu`` is PyTorch's erf form).

``chainrule.jax_nn.initializers`` holds ``jax.nn.initializers``, taking ``cr.random``
keys (chainrule's draws, not JAX's bits: the same distributions, other numbers).

>>> import chainrule.jax_nn as jnn
>>> jnn.relu6(np.array([-1.0, 3.0, 8.0])).tolist()
[0.0, 3.0, 6.0]
>>> cr.grad(lambda x: jnn.relu(x))(0.0)
0.0
"""

import math

import numpy as _np

from ...api import numpy as _cnp
from ...primitive import raw as _raw, shape_of as _shape_of
from ... import rules as _ops
from ...scipy import special as _special
from . import initializers
from .attention import dot_product_attention

__all__ = ["celu", "dot_product_attention", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu",
           "hard_swish", "hard_tanh", "identity", "initializers", "leaky_relu", "log1mexp",
           "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid",
           "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid",
           "squareplus", "standardize", "swish", "tanh"]


def identity(x):
    """x itself (``jax.nn.identity``).

    >>> from chainrule import jax_nn
    >>> x = np.array([-2.0, 0.0, 2.0])
    >>> jax_nn.identity(x) is x
    True
    """
    return x


def relu(x):
    """max(x, 0); derivative 1 where x > 0, else 0 (0 at 0, as JAX's).

    >>> from chainrule import jax_nn
    >>> jax_nn.relu(np.array([-2.0, 0.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
    >>> cr.grad(jax_nn.relu)(0.0)                 # JAX's choice at the kink
    0.0
    """
    return _cnp.where(x > 0, x, 0.0)


def relu6(x):
    """min(max(x, 0), 6); derivative 1 strictly between 0 and 6 (0 at both ends, as JAX's).

    >>> from chainrule import jax_nn
    >>> jax_nn.relu6(np.array([-1.0, 3.0, 8.0])).tolist()
    [0.0, 3.0, 6.0]
    >>> cr.grad(jax_nn.relu6)(6.0), cr.grad(jax_nn.relu6)(3.0)
    (0.0, 1.0)
    """
    # (each where between x and a Python number, so that x's dtype stays)
    return _cnp.where(x >= 6, 6.0, _cnp.where(x > 0, x, 0.0))


def sigmoid(x):
    """1 / (1 + exp(-x)) (``jax.nn.sigmoid``, JAX's logistic).

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.sigmoid(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [0.1192, 0.5, 0.8808]
    >>> cr.grad(jax_nn.sigmoid)(0.0)               # sigmoid(x) (1 - sigmoid(x))
    0.25
    """
    return _ops.sigmoid(x)


def tanh(x):
    """The hyperbolic tangent, (exp(x) - exp(-x)) / (exp(x) + exp(-x)) (``jax.nn.tanh``,
    which is ``jax.numpy.tanh``).

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.tanh(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [-0.964, 0.0, 0.964]
    >>> cr.grad(jax_nn.tanh)(0.0)                  # 1 - tanh(x)**2
    1.0
    """
    return _ops.tanh(x)


def softplus(x):
    """log(1 + exp(x)), as JAX's ``logaddexp(x, 0)``.

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.softplus(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [0.1269, 0.6931, 2.1269]
    >>> jax_nn.softplus(np.array([1000.0])).tolist()     # no overflow
    [1000.0]
    """
    return _cnp.logaddexp(x, 0.0)


def sparse_plus(x):
    """0 below -1, (x + 1)**2 / 4 between -1 and 1, x above (JAX's ``sparse_plus``).

    >>> from chainrule import jax_nn
    >>> jax_nn.sparse_plus(np.array([-2.0, 0.0, 0.5, 2.0])).tolist()
    [0.0, 0.25, 0.5625, 2.0]
    """
    return _cnp.where(x <= -1.0, 0.0, _cnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """The derivative of ``sparse_plus``: 0, (x + 1) / 2, 1.

    >>> from chainrule import jax_nn
    >>> jax_nn.sparse_sigmoid(np.array([-2.0, 0.0, 0.5, 2.0])).tolist()
    [0.0, 0.5, 0.75, 1.0]
    """
    # (JAX's clip is a maximum then a minimum: half of each side at the ends)
    return 0.5 * _cnp.minimum(_cnp.maximum(x + 1.0, 0.0), 2.0)


def soft_sign(x):
    """x / (|x| + 1), |x| with JAX's derivative 1 at 0 (its second derivative there).

    >>> from chainrule import jax_nn
    >>> jax_nn.soft_sign(np.array([-3.0, 0.0, 1.0])).tolist()
    [-0.75, 0.0, 0.5]
    >>> cr.grad(jax_nn.soft_sign)(0.0)
    1.0
    """
    return x / (_cnp.where(x >= 0, x, -x) + 1)


def silu(x):
    """x * sigmoid(x); ``swish`` is the same function.

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.silu(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [-0.2384, 0.0, 1.7616]
    >>> jax_nn.swish is jax_nn.silu
    True
    """
    return x * _ops.sigmoid(x)


swish = silu


def mish(x):
    """x * tanh(softplus(x)).

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.mish(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [-0.2525, 0.0, 1.944]
    """
    return x * _ops.tanh(softplus(x))


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2.

    >>> from chainrule import jax_nn
    >>> jax_nn.squareplus(np.array([-3.0, 0.0, 3.0]), b=16).tolist()
    [1.0, 2.0, 4.0]
    """
    return (x + _cnp.sqrt(x * x + b)) / 2


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|.

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.log_sigmoid(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [-2.1269, -0.6931, -0.1269]
    >>> jax_nn.log_sigmoid(np.array([-1000.0])).tolist()  # not log(0)
    [-1000.0]
    """
    return -softplus(-x)


def leaky_relu(x, negative_slope=1e-2):
    """x where x >= 0, else negative_slope * x (derivative 1 at 0, as JAX's).

    >>> from chainrule import jax_nn
    >>> jax_nn.leaky_relu(np.array([-2.0, 0.0, 2.0])).tolist()
    [-0.02, 0.0, 2.0]
    >>> jax_nn.leaky_relu(np.array([-2.0]), negative_slope=0.5).tolist()
    [-1.0]
    >>> cr.grad(jax_nn.leaky_relu)(0.0)
    1.0
    """
    return _cnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """x clipped to [-1, 1], as JAX writes it: derivative 1 at +-1.

    >>> from chainrule import jax_nn
    >>> jax_nn.hard_tanh(np.array([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    >>> cr.grad(jax_nn.hard_tanh)(1.0)
    1.0
    """
    return _cnp.where(x > 1, 1.0, _cnp.where(x < -1, -1.0, x))


def elu(x, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1); the exponential is taken of min(x, 0)
    only, as JAX's, so that a large x gives no inf (nor a nan gradient).

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.elu(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [-0.8647, 0.0, 2.0]
    >>> cr.grad(jax_nn.elu)(1000.0)                # no inf * 0 on the other side
    1.0
    """
    safe = _cnp.where(x > 0, 0.0, x)
    return _cnp.where(x > 0, x, alpha * _cnp.expm1(safe))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha).

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.celu(np.array([-2.0, 0.0, 2.0]), alpha=2.0), 4).tolist()
    [-1.2642, 0.0, 2.0]
    """
    return _cnp.maximum(x, 0.0) + alpha * _cnp.expm1(_cnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """scale * elu(x, alpha), with the self-normalising constants.

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.selu(np.array([-2.0, 0.0, 2.0])), 4).tolist()
    [-1.5202, 0.0, 2.1014]
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x, approximate=True):
    """x * Phi(x), Phi the standard normal CDF; ``approximate=True`` (JAX's default)
    is the tanh formula 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))).

    >>> from chainrule import jax_nn
    >>> x = np.array([-2.0, 0.0, 2.0])
    >>> np.round(jax_nn.gelu(x), 4).tolist()                     # tanh approximation
    [-0.0454, 0.0, 1.9546]
    >>> np.round(jax_nn.gelu(x, approximate=False), 4).tolist()  # erf, exact
    [-0.0455, 0.0, 1.9545]
    """
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        return 0.5 * x * (1 + _ops.tanh(inner))
    return _ops.gelu(x)


def glu(x, axis=-1):
    """The gated linear unit: x's two halves along ``axis``, a * sigmoid(b).

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.glu(np.array([1.0, 2.0, 0.0, 0.0])), 4).tolist()   # [1, 2] * sigmoid([0, 0])
    [0.5, 1.0]
    """
    size = _shape_of(x)[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of x {_shape_of(x)} must have an even size, "
                         f"got {size}")
    a, b = _cnp.split(x, 2, axis=axis)
    return a * _ops.sigmoid(b)


def hard_sigmoid(x):
    """relu6(x + 3) / 6.

    >>> from chainrule import jax_nn
    >>> jax_nn.hard_sigmoid(np.array([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x); ``hard_swish`` is the same function.

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.hard_silu(np.array([-4.0, 1.0, 4.0])), 4).tolist()
    [-0.0, 0.6667, 4.0]
    >>> jax_nn.hard_swish is jax_nn.hard_silu
    True
    """
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis`` (an int or a tuple of ints).

    >>> from chainrule import jax_nn
    >>> jax_nn.softmax(np.array([0.0, np.log(3.0)])).round(4).tolist()
    [0.25, 0.75]
    >>> jax_nn.softmax(np.zeros((2, 2)), axis=(0, 1)).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    if isinstance(axis, tuple):
        return _cnp.exp(log_softmax(x, axis))
    return _ops.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along ``axis``.

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.log_softmax(np.array([0.0, np.log(3.0)])), 4).tolist()
    [-1.3863, -0.2877]
    """
    if isinstance(axis, tuple):
        return x - _ops.logsumexp(x, axis=axis, keepdims=True)
    return _ops.log_softmax(x, axis=axis)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) along ``axis``, stable: ``jax.nn.logsumexp`` is
    ``jax.scipy.special.logsumexp``, and so is this (``b`` of any sign, with
    ``return_sign=True`` for a sum that may be negative).

    >>> from chainrule import jax_nn
    >>> round(float(jax_nn.logsumexp(np.array([1000.0, 1000.0]))), 4)   # 1000 + log 2
    1000.6931
    >>> round(float(jax_nn.logsumexp(np.zeros(2), b=np.array([1.0, 3.0]))), 4)  # log 4
    1.3863
    """
    return _special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """(x - mean) / sqrt(variance + epsilon), the moments along ``axis`` unless given
    (the variance as JAX computes it: mean(x**2) - mean**2).

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.standardize(np.array([1.0, 2.0, 3.0])), 4).tolist()
    [-1.2247, 0.0, 1.2247]
    """
    if mean is None:
        mean = _cnp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = _cnp.mean(x * x, axis=axis, keepdims=True) - mean * mean
    return (x - mean) / _cnp.sqrt(variance + epsilon)


def one_hot(x, num_classes, dtype=_np.float64, axis=-1):
    """1 at each entry's class along a new axis of ``num_classes``, else 0; an entry
    outside [0, num_classes) gives a row of zeros, as JAX's.

    >>> from chainrule import jax_nn
    >>> jax_nn.one_hot(np.array([0, 2, 5]), 3).tolist()        # 5 is out of range
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    >>> jax_nn.one_hot(np.array([1]), 2, axis=0).shape
    (2, 1)
    """
    if int(num_classes) != num_classes or num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be a non-negative int, got "
                         f"{num_classes!r}")
    # (labels carry no derivative: compared as plain numbers, or per example under vmap)
    hot = _ops.expand_dims(_raw(x), -1) == _np.arange(int(num_classes))
    out = _ops.astype(hot, _np.dtype(dtype))
    return out if axis == -1 else _cnp.moveaxis(out, -1, axis)


def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, accurate at both ends (``jax.nn.log1mexp``: Mächler's
    two forms, log(-expm1(-x)) below log 2 and log1p(-exp(-x)) above); its derivative
    is 1 / expm1(x) on either side.

    >>> from chainrule import jax_nn
    >>> np.round(jax_nn.log1mexp(np.array([1e-10, 50.0])), 6).tolist()
    [-23.025851, -0.0]
    """
    below = x < math.log(2.0)
    return _cnp.where(below, _cnp.log(-_cnp.expm1(-x)), _cnp.log1p(-_cnp.exp(-x)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along ``axis``, stable (``jax.nn.logmeanexp``): logsumexp less
    the log of how many entries (``where`` True) it took.

    >>> from chainrule import jax_nn
    >>> round(float(jax_nn.logmeanexp(np.array([1000.0, 1000.0]))), 4)
    1000.0
    """
    if where is not None:
        where = _np.broadcast_to(_np.asarray(_raw(where), bool), _shape_of(x))
        x = _cnp.where(where, x, -_np.inf)
        count = _np.sum(where, axis=axis, keepdims=keepdims)
    else:
        count = _np.sum(_np.ones(_shape_of(x)), axis=axis, keepdims=keepdims)
    return _ops.logsumexp(x, axis=axis, keepdims=keepdims) - _np.log(count)

"""``nn.functional``'s activations, normalisations and dropout, with torch's arguments
(``chainrule.nn.functional`` is where users find them; this file is their home).
``inplace=True`` is accepted and computes out of place: the result is the same, and the
input is kept (a recorded graph may need it).

>>> import chainrule.nn.functional as F
>>> F.leaky_relu(cr.tensor([-1.0, 2.0]), 0.1)
tensor([-0.1,  2. ])
"""


import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import raw as _raw, shape_of
from ..api.torch_random import default_generator
from ..rules.common import Result, float_dtype

__all__ = ["relu", "leaky_relu", "elu", "gelu", "silu", "sigmoid", "tanh", "softplus",
           "softmax", "log_softmax", "dropout", "gumbel_softmax", "layer_norm", "relu6",
           "hardtanh", "selu", "celu", "mish", "softsign", "logsigmoid", "hardswish",
           "hardsigmoid", "hardshrink", "softshrink", "tanhshrink", "threshold", "rrelu",
           "glu", "softmin", "prelu"]

# ---------------------------------------------------------------------------------------
# Activations, normalisations and dropout, with torch's arguments. ``inplace=True`` is
# accepted and computes out of place: the result is the same, the input is kept (a
# recorded graph may need it).
# ---------------------------------------------------------------------------------------

def relu(x: ArrayLike, inplace: bool = False) -> Result:
    """max(x, 0).

    >>> cr.nn.functional.relu(cr.tensor([-1.0, 2.0])).data.tolist()
    [0.0, 2.0]
    """
    return ops.relu(x)


def leaky_relu(x: ArrayLike, negative_slope: float = 0.01, inplace: bool = False) -> Result:
    """x where x > 0, else ``negative_slope * x``.

    >>> cr.nn.functional.leaky_relu(cr.tensor([-1.0, 2.0]), 0.1).data.tolist()
    [-0.1, 2.0]
    """
    return ops.leaky_relu(x, negative_slope)


def elu(x: ArrayLike, alpha: float = 1.0, inplace: bool = False) -> Result:
    """x where x > 0, else alpha (e**x - 1).

    >>> round(cr.nn.functional.elu(cr.tensor([-1.0])).item(), 4)
    -0.6321
    """
    return ops.elu(x, alpha)


def gelu(x: ArrayLike, approximate: str = "none") -> Result:
    """x Phi(x) (``approximate="tanh"``: PyTorch's tanh formula).

    >>> round(cr.nn.functional.gelu(cr.tensor([1.0])).item(), 4)
    0.8413
    """
    return ops.gelu(x, approximate)


def silu(x: ArrayLike, inplace: bool = False) -> Result:
    """x sigmoid(x).

    >>> round(cr.nn.functional.silu(cr.tensor([1.0])).item(), 4)
    0.7311
    """
    return ops.silu(x)


def sigmoid(x: ArrayLike) -> Result:
    """1 / (1 + e**-x).

    >>> cr.nn.functional.sigmoid(cr.tensor([0.0])).item()
    0.5
    """
    return ops.sigmoid(x)


def tanh(x: ArrayLike) -> Result:
    """The hyperbolic tangent.

    >>> cr.nn.functional.tanh(cr.tensor([0.0])).item()
    0.0
    """
    return ops.tanh(x)


def softplus(x: ArrayLike, beta: float = 1.0, threshold: float = 20.0) -> Result:
    """log(1 + e**(beta x)) / beta, and x itself where beta x > threshold, as torch's.

    >>> round(cr.nn.functional.softplus(cr.tensor([0.0])).item(), 4)
    0.6931
    """
    scaled = beta * x
    return ops.where(_raw(scaled) > threshold, x, ops.softplus(scaled) / beta)


# torch's piecewise activations. Each branch is chosen by a mask of the raw numbers
# (piecewise constant: no derivative of its own), and where meets a Python number, so
# that the input's dtype stays. At a kink, the derivative is torch's: the masks are
# written with torch's inequalities (hardtanh's 0 at both ends, selu's negative side at
# 0), and tests/test_activations_against_torch.py checks each kink to second order.

def hardtanh(x: ArrayLike, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Result:
    """x clipped to [min_val, max_val]; its derivative is 1 strictly inside, 0 at the
    ends and beyond (torch's).

    >>> cr.nn.functional.hardtanh(cr.tensor([-3.0, 0.5, 3.0])).data.tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    r = _raw(x)
    return ops.where(r >= max_val, max_val, ops.where(r <= min_val, min_val, x))


def relu6(x: ArrayLike, inplace: bool = False) -> Result:
    """min(max(x, 0), 6): ``hardtanh(x, 0, 6)``.

    >>> cr.nn.functional.relu6(cr.tensor([-1.0, 3.0, 8.0])).data.tolist()
    [0.0, 3.0, 6.0]
    """
    return hardtanh(x, 0.0, 6.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def celu(x: ArrayLike, alpha: float = 1.0, inplace: bool = False) -> Result:
    """x where x > 0, else alpha (e**(x / alpha) - 1).

    >>> round(cr.nn.functional.celu(cr.tensor([-1.0]), alpha=2.0).item(), 4)
    -0.7869
    """
    if alpha == 0:
        raise ValueError("celu: alpha cannot be 0 (x / alpha is its exponent)")
    positive = _raw(x) > 0
    # (the exponential sees 0 where x > 0 is chosen: no overflow, no inf * 0)
    return ops.where(positive, x, alpha * ops.expm1(ops.where(positive, 0.0, x) / alpha))


def selu(x: ArrayLike, inplace: bool = False) -> Result:
    """scale (x where x > 0, else alpha (e**x - 1)), with the self-normalising constants
    of Klambauer et al. (alpha = 1.6733, scale = 1.0507).

    >>> round(cr.nn.functional.selu(cr.tensor([1.0])).item(), 4)
    1.0507
    """
    return _SELU_SCALE * ops.elu(x, _SELU_ALPHA)  # (elu's derivative at 0 is alpha's side's)


def mish(x: ArrayLike, inplace: bool = False) -> Result:
    """x tanh(softplus(x)) (Misra).

    >>> round(cr.nn.functional.mish(cr.tensor([1.0])).item(), 4)
    0.8651
    """
    return x * ops.tanh(ops.softplus(x))


def softsign(x: ArrayLike) -> Result:
    """x / (1 + |x|).

    >>> cr.nn.functional.softsign(cr.tensor([-3.0, 1.0])).data.tolist()
    [-0.75, 0.5]
    """
    return x / (1 + ops.absolute(x))


def logsigmoid(x: ArrayLike) -> Result:
    """log(sigmoid(x)) = -softplus(-x), finite for large |x|.

    >>> cr.nn.functional.logsigmoid(cr.tensor([-1000.0])).data.tolist()
    [-1000.0]
    """
    return -ops.softplus(-x)


def hardsigmoid(x: ArrayLike, inplace: bool = False) -> Result:
    """0 below -3, 1 above 3, x / 6 + 1/2 between (its derivative 0 at both ends).

    >>> cr.nn.functional.hardsigmoid(cr.tensor([-4.0, 0.0, 4.0])).data.tolist()
    [0.0, 0.5, 1.0]
    """
    r = _raw(x)
    return ops.where(r <= -3, 0.0, ops.where(r >= 3, 1.0, x / 6 + 0.5))


def hardswish(x: ArrayLike, inplace: bool = False) -> Result:
    """x hardsigmoid(x) (Howard et al.): 0 up to -3, x from 3 on, x (x + 3) / 6
    between; its derivative is 0 at -3 and 1 at 3, as torch's.

    >>> cr.nn.functional.hardswish(cr.tensor([-4.0, 0.0, 4.0])).data.tolist()
    [0.0, 0.0, 4.0]
    """
    r = _raw(x)
    return ops.where(r <= -3, 0.0, ops.where(r >= 3, x, x * (x + 3) / 6))


def _lambd(lambd, op):
    if lambd < 0:
        raise ValueError(f"{op}: lambd must be greater or equal to 0, got {lambd}")
    return lambd


def hardshrink(x: ArrayLike, lambd: float = 0.5) -> Result:
    """x where |x| > lambd, else 0.

    >>> cr.nn.functional.hardshrink(cr.tensor([-1.0, 0.2, 0.7])).data.tolist()
    [-1.0, 0.0, 0.7]
    """
    return ops.where(np.abs(_raw(x)) > _lambd(lambd, "hardshrink"), x, 0.0)


def softshrink(x: ArrayLike, lambd: float = 0.5) -> Result:
    """x moved towards 0 by lambd, and 0 within lambd of it.

    >>> cr.nn.functional.softshrink(cr.tensor([-1.0, 0.2, 0.75])).data.tolist()
    [-0.5, 0.0, 0.25]
    """
    r, lambd = _raw(x), _lambd(lambd, "softshrink")
    return ops.where(r > lambd, x - lambd, ops.where(r < -lambd, x + lambd, 0.0))


def tanhshrink(x: ArrayLike) -> Result:
    """x - tanh(x).

    >>> cr.nn.functional.tanhshrink(cr.tensor([0.0])).data.tolist()
    [0.0]
    """
    return x - ops.tanh(x)


def threshold(x: ArrayLike, threshold: float, value: float, inplace: bool = False) -> Result:
    """x where x > threshold, else ``value``.

    >>> cr.nn.functional.threshold(cr.tensor([0.5, 2.0]), 1.0, -1.0).data.tolist()
    [-1.0, 2.0]
    """
    return ops.where(_raw(x) > threshold, x, value)


def rrelu(x: ArrayLike, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False,
          rng: "np.random.Generator | int | None" = None) -> Result:
    """The randomized leaky ReLU (Xu et al.): x where x > 0, else a x, with a drawn
    from U(lower, upper) for each entry in training and (lower + upper) / 2 in
    evaluation. The draw is from ``rng`` (a seed or a Generator) or chainrule's
    default generator.

    >>> cr.nn.functional.rrelu(cr.tensor([-4.0, 2.0]), 0.125, 0.375).data.tolist()
    [-1.0, 2.0]
    """
    if not 0 <= lower <= upper:
        raise ValueError(f"rrelu: expected 0 <= lower <= upper, got lower={lower}, "
                         f"upper={upper}")
    if not training:
        return ops.leaky_relu(x, (lower + upper) / 2)
    generator = default_generator if rng is None else (
        rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng))
    slopes = xp.draw(generator.uniform, lower, upper, shape_of(x))
    return ops.where(_raw(x) > 0, x, x * slopes.astype(float_dtype(x)))


def glu(x: ArrayLike, dim: int = -1) -> Result:
    """The gated linear unit (Dauphin et al.): x's two halves a, b along ``dim``,
    a sigmoid(b).

    >>> cr.nn.functional.glu(cr.tensor([1.0, 2.0, 0.0, 0.0])).data.tolist()
    [0.5, 1.0]
    """
    shape = shape_of(x)
    if not shape or shape[dim] % 2:
        raise ValueError(f"glu: halving dimension must be even, but dimension {dim} of "
                         f"shape {tuple(shape)} is size {shape[dim] if shape else 0}")
    a, b = ops.split(x, 2, axis=dim)
    return a * ops.sigmoid(b)


def softmin(x: ArrayLike, dim: int | None = None) -> Result:
    """softmax(-x) along ``dim`` (torch's choice of axis when None).

    >>> cr.nn.functional.softmin(cr.tensor([0.0, np.log(3.0)]), dim=0).data.tolist()
    [0.75, 0.25]
    """
    return ops.softmax(-x, axis=_softmax_dim(x, dim))


def prelu(x: ArrayLike, weight: ArrayLike) -> Result:
    """x where x > 0, else weight x: one learned slope, or one per channel (the
    weight's length is axis 1's size, as torch's).

    >>> cr.nn.functional.prelu(cr.tensor([[-2.0, 3.0]]), cr.tensor([0.25])).data.tolist()
    [[-0.5, 3.0]]
    """
    shape, n = shape_of(x), int(np.prod(shape_of(weight)))
    if len(shape_of(weight)) > 1:
        raise ValueError(f"prelu: weight must be 1-d, got shape {tuple(shape_of(weight))}")
    if n != 1:
        channels = shape[1] if len(shape) >= 2 else (shape[0] if shape else 1)
        if n != channels:
            raise ValueError(f"prelu: {n} slopes for an input of shape {tuple(shape)}; "
                             f"expected 1 or one per channel (axis 1: {channels})")
        if len(shape) >= 2:  # one slope per channel, along axis 1
            weight = ops.reshape(weight, (n,) + (1,) * (len(shape) - 2))
    return ops.where(_raw(x) > 0, x, weight * x)


def _softmax_dim(x, dim):
    """torch's axis when none is given: 0 for 0-, 1- and 3-d input, else 1."""
    return dim if dim is not None else (0 if len(shape_of(x)) in (0, 1, 3) else 1)


def softmax(x: ArrayLike, dim: int | None = None) -> Result:
    """exp(x) / sum(exp(x)) along ``dim`` (torch's choice of axis when None).

    >>> cr.nn.functional.softmax(cr.tensor([[0.0, 0.0]]), dim=1).data.tolist()
    [[0.5, 0.5]]
    """
    return ops.softmax(x, axis=_softmax_dim(x, dim))


def log_softmax(x: ArrayLike, dim: int | None = None) -> Result:
    """The logarithm of ``softmax(x, dim)``, computed stably.

    >>> round(cr.nn.functional.log_softmax(cr.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    return ops.log_softmax(x, axis=_softmax_dim(x, dim))


def dropout(x: ArrayLike, p: float = 0.5, training: bool = True, inplace: bool = False,
            rng: "np.random.Generator | int | None" = None) -> Result:
    """In training, each entry zeroed with probability ``p`` and the rest scaled by
    1 / (1 - p); else x. ``rng`` (a seed or a Generator) fixes the draw.

    >>> cr.nn.functional.dropout(cr.ones(4), 0.5, rng=0).data.tolist()
    [2.0, 0.0, 0.0, 0.0]
    """
    if not 0 <= p < 1:
        raise ValueError(f"dropout: p must be in [0, 1), got {p!r}")
    if not training or p == 0:
        return x
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    keep = xp.draw(generator.random, shape_of(x)) >= p
    return x * (keep / (1 - p)).astype(float_dtype(x))


def gumbel_softmax(logits: ArrayLike, tau: float = 1.0, hard: bool = False,
                   eps: float = 1e-10, dim: int = -1,
                   rng: "np.random.Generator | int | None" = None) -> Result:
    """torch's ``gumbel_softmax``: a sample from the Gumbel-softmax (concrete)
    distribution, softmax((logits + g) / tau) along ``dim`` with g standard Gumbel
    noise, differentiable in the logits. ``hard=True`` returns the one-hot vector of
    its largest entry, whose gradient is the soft sample's (the straight-through
    estimator). The noise comes from ``rng`` (a seed or a Generator) or chainrule's
    default generator; ``eps`` is accepted and unused, as in torch.

    >>> y = cr.nn.functional.gumbel_softmax(cr.zeros(2, 3), hard=True, rng=0)
    >>> y.data.sum(axis=1).tolist(), sorted(set(y.data.ravel().tolist()))
    ([1.0, 1.0], [0.0, 1.0])
    """
    generator = default_generator if rng is None else (
        rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng))
    gumbels = -xp.log(xp.draw(generator.exponential, 1.0, shape_of(logits)))
    soft = ops.softmax((logits + gumbels.astype(float_dtype(logits))) / tau, axis=dim)
    if not hard:
        return soft
    chosen = _raw(soft) == xp.max(_raw(soft), axis=dim, keepdims=True)
    # (one winner along dim, as torch's argmax: the first of tied maxima)
    first = xp.cumsum(chosen.astype(np.int64), axis=dim) == 1
    one_hot = (chosen & first).astype(float_dtype(logits))
    return one_hot - ops.stop_gradient(soft) + soft


def layer_norm(x: ArrayLike, normalized_shape: int | tuple[int, ...],
               weight: ArrayLike | None = None, bias: ArrayLike | None = None,
               eps: float = 1e-5) -> Result:
    """(x - mean) / sqrt(var + eps) over the last ``normalized_shape`` axes (the biased
    variance), times ``weight`` plus ``bias`` where given.

    >>> y = cr.nn.functional.layer_norm(cr.tensor([[1.0, 3.0]]), 2)
    >>> np.round(y.data, 4).tolist()
    [[-1.0, 1.0]]
    """
    n = 1 if isinstance(normalized_shape, int) else len(tuple(normalized_shape))
    axes = tuple(range(-n, 0))
    centred = x - ops.mean(x, axis=axes, keepdims=True)
    y = centred / ops.sqrt(ops.mean(centred * centred, axis=axes, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias

"""Norms, similarities and distances of ``nn.functional``, as PyTorch's: ``normalize``,
``cosine_similarity``, ``pairwise_distance`` and ``pdist``.

Each is written with chainrule's operations, so every order of derivative, vmap and
cr.jit come with it; where PyTorch special-cases a point (a zero vector, two equal
points, tied largest entries), the formulation gives PyTorch's finite gradient there.

>>> import chainrule.nn.functional as F
>>> F.cosine_similarity(cr.tensor([[1.0, 0.0]]), cr.tensor([[1.0, 1.0]])).data.round(4)
array([0.7071])
"""

import math
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import raw as _raw, shape_of
from ..rules.common import Result, float_dtype

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "pdist", "vector_norm"]


def _axis(op, dim, ndim, shape):
    """``dim`` as an axis of an array of ``ndim`` axes, or a one-line error."""
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__} {dim!r}")
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise ValueError(f"{op}: dim={dim} is out of range for inputs of shape {shape}; "
                         f"expected a dim in [{-max(ndim, 1)}, {max(ndim, 1) - 1}]")
    return dim % max(ndim, 1)


def _order(op, p):
    """``p`` as a float norm order, or a one-line error."""
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, Real) or math.isnan(p):
        raise TypeError(f"{op}: p must be a real number, got {type(p).__name__} {p!r}")
    return float(p)


def _common_shape(op, x1, x2):
    try:
        return np.broadcast_shapes(shape_of(x1), shape_of(x2))
    except ValueError:
        raise ValueError(f"{op}: inputs of shapes {shape_of(x1)} and {shape_of(x2)} do not "
                         f"broadcast to a common shape") from None


def _safe_power(a, p):
    """a ** p for a >= 0, and 0 (with the derivative 0) where a = 0: the power is not
    taken at 0, where its derivative is infinite for p < 1 (PyTorch's norms give 0 there)."""
    zero = _raw(a) == 0
    return ops.where(zero, 0.0, ops.power(ops.where(zero, 1.0, a), p))


def _extreme(size, axis, keepdims, largest, split_ties):
    """max (or min) of ``size`` along ``axis``, its value exact; its gradient goes to the
    entries equal to it, shared among ties (``split_ties``, linalg.vector_norm's
    choice) or given in full to each (pdist's)."""
    pick = ops.max if largest else ops.min
    best = ops.stop_gradient(pick(size, axis=axis, keepdims=True))
    # (a comparison's .astype: under vmap and cr.jit the mask is batched or traced too)
    tied = (_raw(size) == _raw(best)).astype(float_dtype(_raw(size)))
    excess = (size - best) * tied
    if split_ties:
        excess = excess / ops.sum(tied, axis=axis, keepdims=True)
    out = best + ops.sum(excess, axis=axis, keepdims=True)
    return out if keepdims else ops.squeeze(out, axis=axis)


def vector_norm(x: ArrayLike, p: float = 2.0, axis: int = -1, keepdims: bool = False, *,
                split_ties: bool = True) -> Result:
    """The p-norm of ``x`` along ``axis``, as torch.linalg.vector_norm: p = 2 the
    Euclidean norm, 1 the sum of |x|, inf (-inf) the largest (smallest) |x|, 0 the count
    of entries not 0, any other p (sum |x|**p)**(1/p). Its gradient at a zero vector
    is 0, as PyTorch's; ``split_ties=False`` gives each tied extreme entry the whole
    gradient (torch.pdist's choice) where torch.linalg shares it.

    >>> from chainrule.nn.distances import vector_norm
    >>> vector_norm(cr.tensor([3.0, -4.0]), p=1).item()
    7.0
    """
    p = _order("vector_norm", p)
    if p == 2:
        return ops.norm(x, axis=axis, keepdims=keepdims)
    size = ops.absolute(x)
    if p == 1:
        return ops.sum(size, axis=axis, keepdims=keepdims)
    if math.isinf(p):
        return _extreme(size, axis, keepdims, p > 0, split_ties)
    if p == 0:
        counts = ops.sum((_raw(x) != 0).astype(float_dtype(_raw(size))), axis=axis,
                         keepdims=keepdims)
        return ops.stop_gradient(counts) + 0 * ops.sum(size, axis=axis, keepdims=keepdims)
    if p < 0:  # (a zero entry makes the norm 0, as torch's; its gradient is not finite)
        return ops.power(ops.sum(ops.power(size, p), axis=axis, keepdims=keepdims), 1 / p)
    return _safe_power(ops.sum(_safe_power(size, p), axis=axis, keepdims=keepdims), 1 / p)


def normalize(input: ArrayLike, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Result:
    """``input / max(norm, eps)``, the p-norm taken along ``dim``, as torch's: a zero
    vector stays zero, with the gradient 1 / eps (the clamp passes none below eps).

    >>> F = cr.nn.functional
    >>> F.normalize(cr.tensor([[3.0, 4.0], [0.0, 0.0]])).data.tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    >>> F.normalize(cr.tensor([3.0, -4.0]), p=1, dim=0).data.tolist()
    [0.42857142857142855, -0.5714285714285714]
    """
    shape = shape_of(input)
    axis = _axis("normalize", dim, len(shape), shape)
    norm = vector_norm(input, _order("normalize", p), axis=axis, keepdims=True)
    # torch's clamp_min: its gradient passes at and above eps, none below
    clamped = ops.where(_raw(norm) >= eps, norm, xp.asarray(eps, dtype=_raw(norm).dtype))
    return input / clamped


def cosine_similarity(x1: ArrayLike, x2: ArrayLike, dim: int = 1,
                      eps: float = 1e-8) -> Result:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (of their
    broadcast shape, which loses that axis), as torch 2's: sum((x1 / n1) * (x2 / n2))
    with each norm raised to at least ``eps``. As in PyTorch, that raise is made
    outside the derivative: the gradient treats each norm as unclamped, so a zero x1
    gets the gradient x2 / (|x2| eps).

    >>> F = cr.nn.functional
    >>> F.cosine_similarity(cr.tensor([[1.0, 0.0], [0.0, 0.0]]),
    ...                     cr.tensor([[2.0, 0.0], [1.0, 1.0]])).data.tolist()
    [1.0, 0.0]
    """
    shape = _common_shape("cosine_similarity", x1, x2)
    axis = _axis("cosine_similarity", dim, len(shape), shape)
    x1, x2 = ops.broadcast_to(x1, shape), ops.broadcast_to(x2, shape)
    return ops.sum((x1 / _at_least(ops.norm(x1, axis=axis, keepdims=True), eps))
                   * (x2 / _at_least(ops.norm(x2, axis=axis, keepdims=True), eps)),
                   axis=axis)


def _at_least(norm, eps):
    """max(norm, eps) in value, with the derivative of ``norm`` itself: torch clamps
    its norms in place under no_grad."""
    floor = xp.maximum(_raw(norm), xp.asarray(eps, dtype=_raw(norm).dtype))
    return ops.stop_gradient(floor) + (norm - ops.stop_gradient(norm))


def pairwise_distance(x1: ArrayLike, x2: ArrayLike, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Result:
    """The p-norm of ``x1 - x2 + eps`` along the last axis of their broadcast shape, as
    torch's (eps keeps two equal points' gradient defined; 0-d inputs give |x1 - x2 + eps|).

    >>> F = cr.nn.functional
    >>> F.pairwise_distance(cr.tensor([[0.0, 0.0]]), cr.tensor([[3.0, 4.0]]), eps=0.0).data
    array([5.])
    """
    shape = _common_shape("pairwise_distance", x1, x2)
    p = _order("pairwise_distance", p)
    diff = x1 - x2 + eps
    if not shape:  # (a scalar is a vector of one entry)
        distance = vector_norm(ops.reshape(diff, (1,)), p, axis=0, keepdims=keepdim)
        return ops.reshape(distance, ()) if keepdim else distance
    return vector_norm(diff, p, axis=len(shape) - 1, keepdims=keepdim)


def pdist(input: ArrayLike, p: float = 2.0) -> Result:
    """The p-norm distance between every pair of rows of ``input`` (N, M), i < j in
    row order: N (N - 1) / 2 distances, as torch's. Two equal rows are at distance 0
    with the gradient 0, as in PyTorch; with p = inf, rows whose largest differences tie
    give each the whole gradient (torch.pdist's choice).

    >>> F = cr.nn.functional
    >>> F.pdist(cr.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])).data.tolist()
    [5.0, 0.0, 5.0]
    """
    shape = shape_of(input)
    if len(shape) != 2:
        raise ValueError(f"pdist: input of shape {shape}; expected (N, M), a 2-D array")
    p = _order("pdist", p)
    if p < 0:
        raise ValueError(f"pdist: p must be >= 0, got {p}")
    first, second = np.triu_indices(shape[0], 1)
    diff = input[first] - input[second]
    return vector_norm(diff, p, axis=1, split_ties=False)

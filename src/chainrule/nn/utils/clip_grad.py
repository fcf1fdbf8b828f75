"""Gradient clipping, as PyTorch's ``torch.nn.utils.clip_grad``: the gradients of
Tensors (``.grad``, an array of the parameter's library and dtype) and of scalar
Values (``.grad``, a float), rescaled or limited before an optimizer's step.

A gradient is replaced by a new array rather than written into: backward may hand the
same array to two parameters (the two operands of a sum), and scaling it in place would
scale both twice.
"""

import functools
import math
from collections.abc import Iterable
from numbers import Real
from typing import Any

import numpy as np

from ...scalar.value import Value
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

Parameters = Tensor | Value | Iterable[Tensor | Value]


def _with_grads(parameters, op):
    """The parameters that have a gradient, from one parameter or an iterable of them."""
    if isinstance(parameters, (Tensor, Value)):
        parameters = [parameters]
    parameters = list(parameters)
    for p in parameters:
        if not isinstance(p, (Tensor, Value)):
            raise TypeError(f"{op}: expected Tensors or Values (a model's parameters()), "
                            f"got {type(p).__name__}")
    return [p for p in parameters if p.grad is not None]


def _norm_type(op, norm_type):
    if isinstance(norm_type, str) and norm_type.lower() == "inf":
        return math.inf
    if isinstance(norm_type, bool) or not isinstance(norm_type, Real) or math.isnan(norm_type):
        raise ValueError(f"{op}: norm_type must be a number or 'inf', got {norm_type!r}")
    return float(norm_type)


def _vector_norm(g, p):
    """The p-norm of the entries of one gradient (an array of any library, a traced
    array under cr.jit, or a float), as ``torch.linalg.vector_norm``: max |g| for inf,
    min |g| for -inf, the count of nonzero entries for 0. Computed with the array's own
    operations, never read back as a float, so a jitted step can clip."""
    a = abs(g)
    if isinstance(a, float):
        a = np.float64(a)
    if p == math.inf:
        return a.max()
    if p == -math.inf:
        return a.min()
    if p == 0:  # (counted in the gradient's own dtype: a * 0 + 1 is its 1)
        return ((a != 0) * (a * 0 + 1)).sum()
    if p == 2:
        return np.sqrt((a * a).sum())
    return (a ** p).sum() ** (1 / p)


def _norm_of_norms(norms, p):
    """The p-norm of the gradients' norms: the norm of all their entries as one vector."""
    if p == math.inf:
        return functools.reduce(np.maximum, norms)
    if p == -math.inf:
        return functools.reduce(np.minimum, norms)
    if p == 0:
        return sum((n != 0) * (n * 0 + 1) for n in norms)
    if p == 2:
        return np.sqrt(sum(n * n for n in norms))
    return sum(n ** p for n in norms) ** (1 / p)


def get_total_norm(tensors: Iterable[Any], norm_type: float | str = 2.0,
                   error_if_nonfinite: bool = False) -> Any:
    """The norm of the norms of ``tensors`` (gradients: arrays or floats), the norm of
    all their entries as one vector, as PyTorch's ``get_total_norm``: a 0-d array in
    the gradients' library and dtype (0.0 for none).

    >>> float(cr.nn.utils.get_total_norm([np.array([3.0]), np.array([4.0])]))
    5.0
    """
    p = _norm_type("get_total_norm", norm_type)
    norms = [_vector_norm(t.data if isinstance(t, Tensor) else t, p) for t in tensors]
    total = _norm_of_norms(norms, p) if norms else np.float64(0.0)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"get_total_norm: the total norm of order {norm_type!r} of the "
                           f"gradients is {float(total)}, which cannot be clipped; with "
                           f"error_if_nonfinite=False they are scaled by it anyway")
    return total


def clip_grads_with_norm_(parameters: Parameters, max_norm: float, total_norm: Any) -> None:
    """Scale every gradient by ``max_norm / (total_norm + 1e-6)`` if that is below 1
    (else leave them), as PyTorch's ``clip_grads_with_norm_``.

    >>> w = cr.tensor([3.0, 4.0], requires_grad=True); (w * w).sum().backward()
    >>> cr.nn.utils.clip_grads_with_norm_([w], 5.0, 10.0); np.round(w.grad, 4).tolist()
    [3.0, 4.0]
    """
    if isinstance(max_norm, bool) or not isinstance(max_norm, Real):
        raise TypeError(f"clip_grads_with_norm_: max_norm must be a number, got {max_norm!r}")
    if isinstance(total_norm, Tensor):
        total_norm = total_norm.data
    # (a NaN norm gives a NaN coefficient, which np.minimum keeps: the gradients become
    # NaN, as PyTorch's do)
    coefficient = np.minimum(float(max_norm) / (total_norm + 1e-6), 1.0)
    with np.errstate(invalid="ignore"):  # (an infinite entry times 0: NaN, as PyTorch)
        for p in _with_grads(parameters, "clip_grads_with_norm_"):
            g = p.grad * coefficient
            p.grad = float(g) if isinstance(p, Value) else g


def clip_grad_norm_(parameters: Parameters, max_norm: float, norm_type: float | str = 2.0,
                    error_if_nonfinite: bool = False) -> Any:
    """Rescale the gradients so that their total norm (all entries as one vector) is at
    most ``max_norm``, as PyTorch's: each is multiplied by ``max_norm / (norm + 1e-6)``
    when that is below 1. Returns the total norm before clipping: a 0-d Tensor for
    Tensors, a float for Values. ``norm_type`` is any p (``'inf'`` or ``math.inf`` for
    the largest entry); a NaN or infinite norm is an error with
    ``error_if_nonfinite=True``, else the gradients are scaled by it (NaN), as PyTorch's.

    >>> w = cr.tensor([3.0, 4.0], requires_grad=True); (w * w).sum().backward()
    >>> float(cr.nn.utils.clip_grad_norm_([w], 1.0, norm_type="inf"))   # max |2w|
    8.0
    >>> np.round(w.grad, 4).tolist()                                     # max |g| now 1
    [0.75, 1.0]
    """
    params = _with_grads(parameters, "clip_grad_norm_")
    try:
        total = get_total_norm([p.grad for p in params], norm_type, error_if_nonfinite)
    except (ValueError, RuntimeError) as error:
        raise type(error)(str(error).replace("get_total_norm", "clip_grad_norm_", 1)) from None
    clip_grads_with_norm_(params, max_norm, total)
    if params and all(isinstance(p, Value) for p in params):
        return float(total)
    return Tensor(total)


def clip_grad_value_(parameters: Parameters, clip_value: float) -> None:
    """Limit every gradient entry to [-clip_value, clip_value], as PyTorch's.

    >>> w = cr.tensor([3.0, 4.0], requires_grad=True); (w * w).sum().backward()
    >>> cr.nn.utils.clip_grad_value_([w], 7.0); w.grad.tolist()
    [6.0, 7.0]
    """
    if isinstance(clip_value, bool) or not isinstance(clip_value, Real):
        raise TypeError(f"clip_grad_value_: clip_value must be a number, got {clip_value!r}")
    c = float(clip_value)
    for p in _with_grads(parameters, "clip_grad_value_"):
        g = p.grad
        p.grad = min(max(g, -c), c) if isinstance(p, Value) else _clip(g, -c, c)


def _clip(g, low, high):
    """``g`` limited to [low, high], NaN kept, in ``g``'s own library and dtype."""
    if hasattr(g, "clip"):
        return g.clip(low, high)
    return g.clamp(low, high)  # (a torch tensor)

"""The losses of ``nn.functional`` that score a distribution, as PyTorch's: ``kl_div``
(the Kullback-Leibler divergence of log-probabilities), ``poisson_nll_loss`` and
``gaussian_nll_loss``. Each takes ``reduction=`` "mean" (the default), "sum" or "none";
``kl_div`` also "batchmean", the sum over the batch's first axis divided by its length.

As in the other losses here, ``reduction`` (and ``poisson_nll_loss``'s ``eps``) are
keyword-only where torch's signature puts its deprecated ``size_average`` and ``reduce``
before them, so a positional call cannot bind them to the wrong option.

Written with chainrule's operations, so every order of derivative, vmap and cr.jit
come with them. Where torch's gradient is NaN only because a masked branch is
evaluated at a point outside its domain (a target of 0 in ``kl_div``, or at most 1 in
``poisson_nll_loss(full=True)``), the masked branch here is taken at a safe point and
the gradient is finite.

>>> import chainrule.nn.functional as F
>>> round(F.kl_div(cr.log(cr.tensor([0.5, 0.5])), cr.tensor([0.5, 0.5]), reduction="sum").item(), 6)
0.0
"""

import math
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import raw as _raw, shape_of
from ..rules.common import Result, float_dtype
from .loss_functions import _check_reduction, _reduce

__all__ = ["kl_div", "poisson_nll_loss", "gaussian_nll_loss"]

KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")


def _flag(op, name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def _x_log_x(x):
    """x log x, 0 at x = 0 (torch's xlogy(x, x)), whose derivative there is 0 + log 1
    where torch's is NaN; NaN for x < 0, as torch's."""
    zero = _raw(x) == 0
    return ops.where(zero, 0.0, x * ops.log(ops.where(zero, 1.0, x)))


def _check_kl_reduction(op, reduction):
    """``reduction`` if it is one of kl_div's four; else a ValueError naming ``op``."""
    if not isinstance(reduction, str) or reduction not in KL_REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'batchmean', 'sum' or 'none', "
                         f"got {reduction!r}")
    return reduction


def kl_div(input: ArrayLike, target: ArrayLike, *, reduction: str = "mean",
           log_target: bool = False) -> Result:
    """The pointwise Kullback-Leibler divergence of ``target`` from ``input``, both
    broadcast, as torch's: ``input`` holds log-probabilities, ``target`` probabilities
    (or log-probabilities with ``log_target=True``); each entry is
    target (log target - input), 0 where target = 0. ``reduction="batchmean"`` divides
    the sum by the length of the first axis (the divergence per example), "mean" by the
    number of entries.

    >>> F = cr.nn.functional
    >>> log_q = cr.log(cr.tensor([[0.25, 0.75]]))
    >>> round(F.kl_div(log_q, cr.tensor([[0.5, 0.5]]), reduction="batchmean").item(), 4)
    0.1438
    """
    _check_kl_reduction("kl_div", reduction)
    if _flag("kl_div", "log_target", log_target):
        losses = ops.exp(target) * (target - input)
    else:
        losses = _x_log_x(target) - target * input
    if reduction == "batchmean":
        total = ops.sum(losses)
        return total / shape_of(input)[0] if shape_of(input) else total
    return _reduce(losses, reduction)


def poisson_nll_loss(input: ArrayLike, target: ArrayLike, log_input: bool = True,
                     full: bool = False, *, eps: float = 1e-8,
                     reduction: str = "mean") -> Result:
    """The negative log-likelihood of counts ``target`` under a Poisson of rate
    exp(input) (``log_input=True``: exp(input) - target input) or of rate ``input``
    (input - target log(input + eps)), as torch's; ``full=True`` adds Stirling's
    approximation of log(target!), target log target - target + log(2 pi target) / 2,
    where target > 1 (0 elsewhere).

    >>> F = cr.nn.functional
    >>> F.poisson_nll_loss(cr.tensor([0.0, 0.0]), cr.tensor([1.0, 3.0])).item()   # e**0
    1.0
    """
    _check_reduction("poisson_nll_loss", reduction)
    if _flag("poisson_nll_loss", "log_input", log_input):
        losses = ops.exp(input) - target * input
    else:
        losses = input - target * ops.log(input + eps)
    if _flag("poisson_nll_loss", "full", full):
        above = _raw(target) > 1
        counts = ops.where(above, target, 2.0)  # (a safe point for the masked entries)
        stirling = (counts * ops.log(counts) - counts
                    + 0.5 * ops.log(2 * math.pi * counts))
        losses = losses + ops.where(above, stirling, 0.0)
    return _reduce(losses, reduction)


def gaussian_nll_loss(input: ArrayLike, target: ArrayLike, var: ArrayLike | float,
                      full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Result:
    """The negative log-likelihood of ``target`` under Gaussians of mean ``input`` and
    variance ``var``, as torch's: (log var + (input - target)**2 / var) / 2, plus
    log(2 pi) / 2 with ``full=True``. ``var`` has the input's shape, or one axis fewer
    (the last), or one axis of length 1 where the input's is not (one variance shared
    along it), or is a float. Each variance is raised to at least ``eps`` outside the
    derivative, as in PyTorch: the gradient treats it as unclamped.

    >>> F = cr.nn.functional
    >>> round(F.gaussian_nll_loss(cr.tensor([1.0, 3.0]), cr.tensor([1.0, 1.0]), 2.0).item(), 4)
    0.8466
    """
    shape = shape_of(input)
    if isinstance(var, Real) and not isinstance(var, (bool, np.bool_)):
        if var < 0:
            raise ValueError(f"gaussian_nll_loss: var must be >= 0, got {var}")
        var = xp.full(shape, float(var), dtype=float_dtype(_raw(input)))
    if type(_raw(var)) is np.ndarray and bool(np.any(_raw(var) < 0)):
        raise ValueError("gaussian_nll_loss: var has negative entries; variances must be "
                         ">= 0")
    var_shape = shape_of(var)
    if var_shape != shape:
        if var_shape == shape[:-1]:  # one variance per row of the last axis
            var = ops.expand_dims(var, -1)
        elif not (len(var_shape) == len(shape) and sum(
                v for s, v in zip(shape, var_shape) if s != v) == 1):
            raise ValueError(f"gaussian_nll_loss: var of shape {var_shape} for an input of "
                             f"shape {shape}; expected {shape}, {shape[:-1]}, or the "
                             f"input's shape with one axis of length 1")
    _check_reduction("gaussian_nll_loss", reduction)
    floor = xp.maximum(_raw(var), xp.asarray(eps, dtype=_raw(var).dtype))
    var = ops.stop_gradient(floor) + (var - ops.stop_gradient(var))
    diff = input - target
    losses = 0.5 * (ops.log(var) + diff * diff / var)
    if _flag("gaussian_nll_loss", "full", full):
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction)

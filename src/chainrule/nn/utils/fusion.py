"""torch's ``nn.utils.fusion``: a convolution or a linear layer followed by batch
normalisation in eval folded into one layer, for inference.

In eval a batch norm is an affine map per channel, y -> (y - mean) * s + beta with
s = gamma / sqrt(var + eps), so after ``W x + b`` it is ``(s W) x + (b - mean) s +
beta``: the weight's rows (a transposed convolution's second axis) scaled by s.

>>> conv, bn = cr.nn.Conv2d(1, 2, 3, rng=0), cr.nn.BatchNorm2d(2)
>>> bn.running_var[:] = 4.0
>>> fused = cr.nn.utils.fuse_conv_bn_eval(conv.eval(), bn.eval())
>>> x = cr.ones(1, 1, 5, 5)
>>> bool(np.allclose(fused(x).data, bn(conv(x)).data))
True
"""

import copy
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...primitive import raw
from ..module import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _numbers(array):
    return None if array is None else np.asarray(raw(array))


def _scale_and_shift(name, channels, bn_rm, bn_rv, bn_eps, bn_w, bn_b, dtype):
    """(s, shift) of batch norm in eval: y -> y * s + shift - mean * s per channel."""
    mean, var = _numbers(bn_rm), _numbers(bn_rv)
    if mean is None or var is None:
        raise ValueError(f"{name}: the batch norm keeps no running statistics "
                         f"(track_running_stats=False); there is nothing to fold in")
    if mean.shape not in ((channels,), (1,)):
        raise ValueError(f"{name}: running statistics of shape {mean.shape}, expected "
                         f"({channels},) for a layer of {channels} output channels")
    gamma = np.ones_like(mean) if bn_w is None else _numbers(bn_w)
    beta = np.zeros_like(mean) if bn_b is None else _numbers(bn_b)
    scale = (gamma / np.sqrt(var + bn_eps)).astype(dtype)
    return scale, beta.astype(dtype), mean.astype(dtype)


def fuse_conv_bn_weights(conv_w: ArrayLike, conv_b: ArrayLike | None, bn_rm: ArrayLike,
                         bn_rv: ArrayLike, bn_eps: float, bn_w: ArrayLike | None,
                         bn_b: ArrayLike | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The weight and bias (Parameters) of the convolution (``transpose``: a transposed
    one, its output channels along axis 1) that computes ``conv_w``, ``conv_b`` and then
    batch norm in eval with running mean ``bn_rm``, variance ``bn_rv``, ``bn_eps`` and
    affine ``bn_w``, ``bn_b``.

    >>> w, b = fuse_conv_bn_weights(np.ones((2, 1, 1)), None, np.zeros(2), np.full(2, 4.0),
    ...                             0.0, np.array([1.0, 2.0]), np.array([0.5, 0.5]))
    >>> w.data.ravel().tolist(), b.data.tolist()
    ([0.5, 1.0], [0.5, 0.5])
    """
    weight = _numbers(conv_w)
    axis = 1 if transpose else 0
    channels = weight.shape[axis]
    scale, beta, mean = _scale_and_shift("fuse_conv_bn_weights", channels, bn_rm, bn_rv,
                                         bn_eps, bn_w, bn_b, weight.dtype)
    bias = np.zeros_like(mean) if conv_b is None else _numbers(conv_b)
    shape = [1] * weight.ndim
    shape[axis] = -1
    fused_w = weight * scale.reshape(shape)
    fused_b = (bias - mean) * scale + beta
    return Parameter(fused_w, dtype=weight.dtype), Parameter(fused_b, dtype=weight.dtype)


def fuse_linear_bn_weights(linear_w: ArrayLike, linear_b: ArrayLike | None,
                           bn_rm: ArrayLike, bn_rv: ArrayLike, bn_eps: float,
                           bn_w: ArrayLike | None,
                           bn_b: ArrayLike | None) -> tuple[Parameter, Parameter]:
    """The weight and bias (Parameters) of the linear layer that computes ``linear_w``,
    ``linear_b`` and then batch norm in eval (running statistics of one entry per output,
    or a single one for all).

    >>> w, b = fuse_linear_bn_weights(np.eye(2), np.ones(2), np.ones(2), np.ones(2), 0.0,
    ...                               None, None)
    >>> w.data.tolist(), b.data.tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [0.0, 0.0])
    """
    weight = _numbers(linear_w)
    scale, beta, mean = _scale_and_shift("fuse_linear_bn_weights", weight.shape[0], bn_rm,
                                         bn_rv, bn_eps, bn_w, bn_b, weight.dtype)
    bias = np.zeros(weight.shape[0], weight.dtype) if linear_b is None \
        else _numbers(linear_b)
    fused_w = weight * scale[:, None]
    fused_b = (bias - mean) * scale + beta
    return Parameter(fused_w, dtype=weight.dtype), Parameter(fused_b, dtype=weight.dtype)


def _check_eval(name, layer, bn):
    if layer.training or bn.training:
        raise ValueError(f"{name}: fusion is for eval; call .eval() on both "
                         f"{type(layer).__name__} and {type(bn).__name__} first")


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of ``conv`` (in eval) computing ``bn(conv(x))`` for ``bn`` in eval: its
    weight and bias folded together (``fuse_conv_bn_weights``); ``transpose=True`` for
    a transposed convolution.

    >>> conv = cr.nn.Conv1d(2, 3, 1, rng=0).eval()
    >>> fused = fuse_conv_bn_eval(conv, cr.nn.BatchNorm1d(3).eval())
    >>> fused is conv, type(fused).__name__
    (False, 'Conv1d')
    """
    _check_eval("fuse_conv_bn_eval", conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of ``linear`` (in eval) computing ``bn(linear(x))`` for ``bn`` in eval,
    its weight and bias folded together (``fuse_linear_bn_weights``).

    >>> linear = cr.nn.Linear(2, 3, rng=0).eval()
    >>> type(fuse_linear_bn_eval(linear, cr.nn.BatchNorm1d(3).eval())).__name__
    'Linear'
    """
    _check_eval("fuse_linear_bn_eval", linear, bn)
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias)
    return fused

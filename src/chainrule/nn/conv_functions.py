"""``nn.functional``'s convolutions, pooling and batch normalisation, with torch's
arguments and shapes (N, C, H, W); the operations and their derivatives are in
``chainrule.rules.convolution``. ``chainrule.nn.functional`` is where users find them.

>>> import chainrule.nn.functional as F
>>> F.max_pool2d(cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2).shape
(1, 1, 2, 2)
"""


import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Box, raw as _raw, shape_of
from ..rules import convolution as _conv
from ..rules.common import Result, float_dtype

__all__ = ["conv1d", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm"]

# A size per spatial axis, or one for all; padding may also be "same" or "valid".
Size = int | tuple[int, ...]
Padding = int | tuple[int, ...] | str

# ---------------------------------------------------------------------------------------
# Convolution, pooling, batch normalisation (the operations: chainrule.rules.convolution)
# ---------------------------------------------------------------------------------------

def _batched(function, x, d, name, /, *args, **kwargs):
    """``function`` on x (N, C, *spatial); an unbatched x (C, *spatial) is taken as a
    batch of one and returned without that axis, as PyTorch does."""
    shape = shape_of(x)
    if len(shape) == d + 1:
        out = function(ops.reshape(x, (1,) + shape), *args, **kwargs)
        return ops.reshape(out, shape_of(out)[1:])
    if len(shape) != d + 2:
        axes = "L" if d == 1 else "H, W"
        raise ValueError(f"{name}: input of shape {shape}, expected (N, C, {axes}) or "
                         f"(C, {axes})")
    return function(x, *args, **kwargs)


def _conv_bias(d, name):
    def convolve(x, weight, bias, stride, padding, dilation, groups):
        y = _conv.conv(x, weight, stride, padding, dilation, groups, name=name)
        if bias is None:
            return y
        channels = shape_of(y)[1]
        if shape_of(bias) != (channels,):
            raise ValueError(f"{name}: bias of shape {shape_of(bias)}, expected "
                             f"({channels},) for a weight of shape {shape_of(weight)}")
        return y + ops.reshape(bias, (channels,) + (1,) * d)
    return convolve


def conv1d(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None, stride: Size = 1,
           padding: Padding = 0, dilation: Size = 1, groups: int = 1) -> Result:
    """PyTorch's ``conv1d``: x (N, C_in, L) or (C_in, L), weight (C_out, C_in / groups,
    k), bias (C_out,) or None -> (N, C_out, L_out). A cross-correlation; ``padding`` is
    an int, ``"same"`` or ``"valid"``. Differentiable to any order in x, weight, bias.

    >>> x = cr.tensor([[[0.0, 1.0, 2.0, 3.0]]])
    >>> conv1d(x, cr.tensor([[[1.0, 1.0]]]), padding=1).data.tolist()   # pairwise sums
    [[[0.0, 1.0, 3.0, 5.0, 3.0]]]
    """
    return _batched(_conv_bias(1, "conv1d"), x, 1, "conv1d", weight, bias, stride,
                    padding, dilation, groups)


def conv2d(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None, stride: Size = 1,
           padding: Padding = 0, dilation: Size = 1, groups: int = 1) -> Result:
    """PyTorch's ``conv2d``: x (N, C_in, H, W) or (C_in, H, W), weight (C_out,
    C_in / groups, kh, kw), bias (C_out,) or None -> (N, C_out, H_out, W_out).

    A cross-correlation (the kernel is not flipped); ``stride``, ``padding`` (an int, a
    pair, ``"same"`` or ``"valid"``), ``dilation`` and ``groups`` as in PyTorch.
    Differentiable to any order, forward and reverse, in x, weight and bias.

    >>> x = cr.tensor(np.arange(9.0).reshape(1, 1, 3, 3))
    >>> w = cr.tensor(np.ones((1, 1, 2, 2)), requires_grad=True)
    >>> y = conv2d(x, w)                          # sums of the 2x2 windows
    >>> y.data.tolist()
    [[[[8.0, 12.0], [20.0, 24.0]]]]
    >>> y.sum().backward()
    >>> w.grad.tolist()                           # each tap sees four entries of x
    [[[[8.0, 12.0], [20.0, 24.0]]]]
    """
    return _batched(_conv_bias(2, "conv2d"), x, 2, "conv2d", weight, bias, stride,
                    padding, dilation, groups)


def max_pool2d(x: ArrayLike, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, dilation: Size = 1) -> Result:
    """PyTorch's ``max_pool2d``: the largest entry of each window of x (N, C, H, W) or
    (C, H, W); ``stride`` defaults to the kernel size, padding counts as -inf. Entries
    tied for a window's maximum share its gradient evenly (PyTorch picks one).

    >>> x = cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    >>> max_pool2d(x, 2).data.tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _batched(_conv.max_pool, x, 2, "max_pool2d", kernel_size, stride, padding,
                    dilation, d=2, name="max_pool2d")


def avg_pool2d(x: ArrayLike, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, *, count_include_pad: bool = True) -> Result:
    """PyTorch's ``avg_pool2d``: the mean of each window of x (N, C, H, W) or (C, H, W);
    ``stride`` defaults to the kernel size; the zeros of the padding count in the mean
    unless ``count_include_pad=False``.

    >>> x = cr.tensor(np.ones((1, 1, 2, 2)))
    >>> avg_pool2d(x, 2, padding=1).data.tolist()                   # 1 of 4 is x
    [[[[0.25, 0.25], [0.25, 0.25]]]]
    >>> avg_pool2d(x, 2, padding=1, count_include_pad=False).data.tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    return _batched(_conv.avg_pool, x, 2, "avg_pool2d", kernel_size, stride, padding,
                    count_include_pad, d=2, name="avg_pool2d")


def adaptive_avg_pool2d(x: ArrayLike, output_size: int | tuple[int | None, ...]) -> Result:
    """PyTorch's ``adaptive_avg_pool2d``: x (N, C, H, W) or (C, H, W) averaged into
    ``output_size`` bins (an int or a pair; None keeps that axis), bin i of n entries
    into m covering [floor(i n / m), ceil((i + 1) n / m)).

    >>> x = cr.tensor(np.arange(5.0).reshape(1, 1, 1, 5))
    >>> adaptive_avg_pool2d(x, (1, 2)).data.tolist()               # [0, 3) and [2, 5)
    [[[[1.0, 3.0]]]]
    """
    return _batched(_conv.adaptive_avg_pool, x, 2, "adaptive_avg_pool2d", output_size,
                    d=2, name="adaptive_avg_pool2d")


def batch_norm(x: ArrayLike, running_mean: np.ndarray | None,
               running_var: np.ndarray | None, weight: ArrayLike | None = None,
               bias: ArrayLike | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Result:
    """PyTorch's ``batch_norm``: x (N, C, *spatial) normalised per channel,
    (x - mean) / sqrt(var + eps) * weight + bias.

    ``training=True``: the batch's mean and biased variance normalise, and
    ``running_mean`` / ``running_var`` (arrays of C, or None) are updated in place,
    moving by ``momentum`` towards the batch's mean and unbiased variance.
    ``training=False``: the running statistics normalise.

    >>> x = cr.tensor([[0.0], [2.0]])
    >>> mean, var = np.zeros(1), np.ones(1)
    >>> np.round(batch_norm(x, mean, var, training=True).data, 4).tolist()
    [[-1.0], [1.0]]
    >>> mean.tolist(), var.tolist()               # 0.1 of the way to 1 and 2
    ([0.1], [1.1])
    """
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(f"batch_norm: input of shape {shape}, expected (N, C, ...)")
    channels = shape[1]
    for what, array in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        if array is not None and shape_of(array) != (channels,):
            raise ValueError(f"batch_norm: {what} of shape {shape_of(array)}, expected "
                             f"({channels},) for an input of shape {shape}")
    axes = (0,) + tuple(range(2, len(shape)))
    per_channel = (1, channels) + (1,) * (len(shape) - 2)
    if training:
        count = int(np.prod([shape[a] for a in axes]))
        if count < 2:
            raise ValueError(f"batch_norm: input of shape {shape} has one value per "
                             f"channel; training needs more than one to estimate a "
                             f"variance")
        mean = ops.mean(x, axis=axes, keepdims=True)
        centred = x - mean
        var = ops.mean(centred * centred, axis=axes, keepdims=True)
        if isinstance(_raw(mean), Box) and (running_mean is not None
                                            or running_var is not None):
            raise ValueError("batch_norm: training under cr.vmap would update "
                             "running_mean and running_var, one array for every example, "
                             "with each example's statistics; call .eval() to normalise "
                             "by them, or pass track_running_stats=False (or None for "
                             "both) to normalise each example by its own")
        for running, batch in ((running_mean, _raw(mean)),
                               (running_var, _raw(var) * (count / (count - 1)))):
            if running is not None:
                xp.copyto(running, (1 - momentum) * running
                          + momentum * batch.reshape(channels))
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: training=False normalises by the running "
                             "statistics; running_mean and running_var are None")
        dtype = float_dtype(x)
        mean = xp.as_array(running_mean, dtype).reshape(per_channel)
        var = xp.as_array(running_var, dtype).reshape(per_channel)
        centred = x - mean
    out = centred / ops.sqrt(var + eps)
    if weight is not None:
        out = out * ops.reshape(weight, per_channel)
    if bias is not None:
        out = out + ops.reshape(bias, per_channel)
    return out

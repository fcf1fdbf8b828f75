"""``nn.functional``'s convolutions, with torch's arguments and shapes (N, C, *spatial);
the operations and their derivatives are in ``chainrule.rules.convolution``.
``chainrule.nn.functional`` is where users find them.

>>> import chainrule.nn.functional as F
>>> F.conv1d(cr.ones(1, 2, 5), cr.ones(3, 2, 2)).shape
(1, 3, 4)
"""

from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules import convolution as _conv
from ..rules.common import Result

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]

# A size per spatial axis, or one for all; padding may also be "same" or "valid".
Size = int | tuple[int, ...]
Padding = int | tuple[int, ...] | str


def with_batch_axis(function, x, d, name, /, *args, **kwargs):
    """``function`` on x (N, C, *spatial); an unbatched x (C, *spatial) is taken as a
    batch of one and returned without that axis, as PyTorch does."""
    shape = shape_of(x)
    if len(shape) == d + 1:
        out = function(ops.reshape(x, (1,) + shape), *args, **kwargs)
        return ops.reshape(out, shape_of(out)[1:])
    if len(shape) != d + 2:
        axes = {1: "L", 2: "H, W", 3: "D, H, W"}.get(d, "*spatial")
        raise ValueError(f"{name}: input of shape {shape}, expected (N, C, {axes}) or "
                         f"(C, {axes})")
    return function(x, *args, **kwargs)


def _plus_bias(y, bias, weight, d, name):
    if bias is None:
        return y
    channels = shape_of(y)[1]
    if shape_of(bias) != (channels,):
        raise ValueError(f"{name}: bias of shape {shape_of(bias)}, expected "
                         f"({channels},) for a weight of shape {shape_of(weight)}")
    return y + ops.reshape(bias, (channels,) + (1,) * d)


def _conv_bias(d, name):
    def convolve(x, weight, bias, stride, padding, dilation, groups):
        y = _conv.conv(x, weight, stride, padding, dilation, groups, name=name)
        return _plus_bias(y, bias, weight, d, name)
    return convolve


def _conv_transpose_bias(d, name):
    def convolve(x, weight, bias, stride, padding, output_padding, groups, dilation):
        y = _conv.conv_transpose(x, weight, stride, padding, output_padding, groups,
                                 dilation, name=name)
        return _plus_bias(y, bias, weight, d, name)
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
    return with_batch_axis(_conv_bias(1, "conv1d"), x, 1, "conv1d", weight, bias, stride,
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
    return with_batch_axis(_conv_bias(2, "conv2d"), x, 2, "conv2d", weight, bias, stride,
                    padding, dilation, groups)


def conv3d(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None, stride: Size = 1,
           padding: Padding = 0, dilation: Size = 1, groups: int = 1) -> Result:
    """PyTorch's ``conv3d``: x (N, C_in, D, H, W) or (C_in, D, H, W), weight (C_out,
    C_in / groups, kd, kh, kw), bias (C_out,) or None -> (N, C_out, D_out, H_out, W_out).

    A cross-correlation; ``stride``, ``padding`` (an int, a triple, ``"same"`` or
    ``"valid"``), ``dilation`` and ``groups`` as in PyTorch. Differentiable to any
    order, forward and reverse, in x, weight and bias.

    >>> x = cr.tensor(np.arange(8.0).reshape(1, 1, 2, 2, 2))
    >>> conv3d(x, cr.ones(1, 1, 2, 2, 2)).data.tolist()      # the sum of the one window
    [[[[[28.0]]]]]
    """
    return with_batch_axis(_conv_bias(3, "conv3d"), x, 3, "conv3d", weight, bias, stride,
                           padding, dilation, groups)


def conv_transpose1d(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Result:
    """PyTorch's ``conv_transpose1d``: x (N, C_in, L) or (C_in, L), weight (C_in,
    C_out / groups, k), bias (C_out,) or None -> (N, C_out, L_out), with L_out =
    (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    The gradient of ``conv1d`` in its input (each input entry adds a scaled copy of the
    kernel, ``stride`` apart); ``output_padding`` must be below the stride or the
    dilation. Note torch's order: ``groups`` before ``dilation``. Differentiable to any
    order in x, weight and bias.

    >>> x = cr.tensor([[[1.0, 2.0]]])
    >>> conv_transpose1d(x, cr.tensor([[[1.0, 1.0, 1.0]]]), stride=2).data.tolist()
    [[[1.0, 1.0, 3.0, 2.0, 2.0]]]
    """
    return with_batch_axis(_conv_transpose_bias(1, "conv_transpose1d"), x, 1,
                           "conv_transpose1d", weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Result:
    """PyTorch's ``conv_transpose2d``: x (N, C_in, H, W) or (C_in, H, W), weight (C_in,
    C_out / groups, kh, kw), bias (C_out,) or None -> (N, C_out, H_out, W_out), each
    size (n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    The gradient of ``conv2d`` in its input: with the same settings it maps conv2d's
    output shape back to its input's (``output_padding`` picks among the sizes a stride
    that does not divide leaves open). Differentiable to any order in x, weight, bias.

    >>> x = cr.ones(1, 1, 2, 2)
    >>> y = conv_transpose2d(x, cr.ones(1, 1, 2, 2), stride=2)   # each entry a 2x2 block
    >>> y.shape, y.data.sum()
    ((1, 1, 4, 4), np.float64(16.0))
    """
    return with_batch_axis(_conv_transpose_bias(2, "conv_transpose2d"), x, 2,
                           "conv_transpose2d", weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Result:
    """PyTorch's ``conv_transpose3d``: x (N, C_in, D, H, W) or (C_in, D, H, W), weight
    (C_in, C_out / groups, kd, kh, kw), bias (C_out,) or None -> (N, C_out, D_out,
    H_out, W_out), each size as ``conv_transpose2d``'s.

    The gradient of ``conv3d`` in its input. Differentiable to any order in x, weight
    and bias.

    >>> x = cr.ones(1, 2, 2, 2, 2)
    >>> conv_transpose3d(x, cr.ones(2, 3, 3, 3, 3), stride=2, padding=1,
    ...                  output_padding=1).shape
    (1, 3, 4, 4, 4)
    """
    return with_batch_axis(_conv_transpose_bias(3, "conv_transpose3d"), x, 3,
                           "conv_transpose3d", weight, bias, stride, padding,
                           output_padding, groups, dilation)

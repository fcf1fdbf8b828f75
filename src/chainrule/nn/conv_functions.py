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

__all__ = ["conv1d", "conv2d"]

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

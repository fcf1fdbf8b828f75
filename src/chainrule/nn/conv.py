"""Convolution layers, shaped like PyTorch's: inputs
(N, C, *spatial), weights in PyTorch's layout (out_channels, in_channels / groups,
*kernel), so that a PyTorch model's ``state_dict`` loads as it is."""

import math
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..rules.common import Result
from . import functional as F
from .layers import RNG, initial_generator
from .module import Module, Parameter

# A size per spatial axis, or one for all; padding may also be "same" or "valid".
Size = int | tuple[int, ...]
Padding = int | tuple[int, ...] | str

__all__ = ["Conv1d", "Conv2d"]


def _sizes(value, d, what, name):
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
    if len(values) != d or not all(isinstance(v, Integral) and v >= 1 for v in values):
        raise ValueError(f"{name}: {what} must be a positive int or {d} of them, got "
                         f"{value!r}")
    return tuple(int(v) for v in values)


class _ConvNd(Module):
    d = 2
    _functional = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Padding = 0, dilation: Size = 1, groups: int = 1,
                 bias: bool = True, rng: RNG = None, dtype: DTypeLike = np.float64) -> None:
        name = type(self).__name__
        for what, n in (("in_channels", in_channels), ("out_channels", out_channels),
                        ("groups", groups)):
            if not isinstance(n, Integral) or n < 1:
                raise ValueError(f"{name}: {what} must be a positive int, got {n!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: groups={groups} must divide in_channels="
                             f"{in_channels} and out_channels={out_channels}")
        kernel = _sizes(kernel_size, self.d, "kernel_size", name)
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        rng = initial_generator(rng)
        fan_in = in_channels // groups * math.prod(kernel)
        # PyTorch's default, so that a ported model starts alike: kaiming-uniform with
        # a = sqrt(5) is U(-b, b) with b = 1 / sqrt(fan_in), and its bias draws the same
        bound = 1 / math.sqrt(fan_in)
        w = rng.uniform(-bound, bound, (out_channels, in_channels // groups) + kernel)
        self.weight = Parameter(w, dtype=dtype)
        self.bias = (Parameter(rng.uniform(-bound, bound, out_channels), dtype=dtype)
                     if bias else None)

    def forward(self, x: ArrayLike) -> Result:
        """The convolution of x (N, in_channels, *spatial), plus the bias."""
        return self._functional(x, self.weight, self.bias, self.stride, self.padding,
                                self.dilation, self.groups)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        for what, default in (("padding", 0), ("dilation", 1), ("groups", 1)):
            if getattr(self, what) != default:
                text += f", {what}={getattr(self, what)}"
        return text + ("" if self.bias is not None else ", bias=False")


class Conv1d(_ConvNd):
    """A 1-d convolution (PyTorch's ``nn.Conv1d``): input (N, in_channels, L), weight
    (out_channels, in_channels / groups, kernel_size), output (N, out_channels, L_out).

    Initialised as PyTorch does (weight and bias uniform in +-1/sqrt(fan_in)); ``rng``
    is a seed or a ``numpy.random.Generator``.

    >>> layer = cr.nn.Conv1d(2, 4, kernel_size=3, padding=1, rng=0)
    >>> layer.weight.shape, layer(cr.ones(5, 2, 10)).shape
    ((4, 2, 3), (5, 4, 10))
    """

    d = 1
    _functional = staticmethod(F.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Padding = 0, dilation: Size = 1, groups: int = 1,
                 bias: bool = True, rng: RNG = None, dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, rng, dtype)


class Conv2d(_ConvNd):
    """A 2-d convolution (PyTorch's ``nn.Conv2d``): input (N, in_channels, H, W), weight
    (out_channels, in_channels / groups, kh, kw), output (N, out_channels, H_out, W_out).

    ``stride``, ``padding`` (an int, a pair, ``"same"`` or ``"valid"``), ``dilation``
    and ``groups`` as in PyTorch; initialised as PyTorch does (weight and bias uniform
    in +-1/sqrt(fan_in)), so a PyTorch ``state_dict`` loads with its own layout.

    >>> layer = cr.nn.Conv2d(1, 8, kernel_size=3, rng=0)
    >>> layer.weight.shape
    (8, 1, 3, 3)
    >>> y = layer(cr.ones(2, 1, 28, 28))
    >>> y.shape
    (2, 8, 26, 26)
    >>> y.sum().backward()
    >>> layer.bias.grad.shape
    (8,)
    """

    d = 2
    _functional = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Padding = 0, dilation: Size = 1, groups: int = 1,
                 bias: bool = True, rng: RNG = None, dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, rng, dtype)

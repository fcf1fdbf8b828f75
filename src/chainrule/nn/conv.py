"""Convolution layers, shaped like PyTorch's: inputs (N, C, *spatial) or (C, *spatial),
weights in PyTorch's layouts (out_channels, in_channels / groups, *kernel) for a
convolution and (in_channels, out_channels / groups, *kernel) for a transposed one, so
that a PyTorch model's ``state_dict`` loads as it is; settings kept and printed as
PyTorch keeps and prints them (tuples, one entry per spatial axis)."""

import math
from collections.abc import Sequence
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..primitive import shape_of
from ..rules.common import Result
from . import conv_functions as F
from .layers import RNG, initial_generator
from .module import Module, Parameter
from .padding import pad

# A size per spatial axis, or one for all; padding may also be "same" or "valid".
Size = int | tuple[int, ...]
Padding = int | tuple[int, ...] | str

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _sizes(value, d, what, name, lowest=1):
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
    if len(values) != d or not all(isinstance(v, Integral) and not isinstance(v, bool)
                                   and v >= lowest for v in values):
        kind = "a positive int" if lowest == 1 else f"an int >= {lowest}"
        raise ValueError(f"{name}: {what} must be {kind} or {d} of them, got {value!r}")
    return tuple(int(v) for v in values)


class _ConvNd(Module):
    d = 2
    transposed = False
    _functional = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Padding = 0, dilation: Size = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64, output_padding: Size = 0) -> None:
        name = type(self).__name__
        for what, n in (("in_channels", in_channels), ("out_channels", out_channels),
                        ("groups", groups)):
            if not isinstance(n, Integral) or isinstance(n, bool) or n < 1:
                raise ValueError(f"{name}: {what} must be a positive int, got {n!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: groups={groups} must divide in_channels="
                             f"{in_channels} and out_channels={out_channels}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of "
                             f"{', '.join(map(repr, _PADDING_MODES))}, got {padding_mode!r}")
        if self.transposed and padding_mode != "zeros":
            raise ValueError(f"{name}: only padding_mode 'zeros' is supported, got "
                             f"{padding_mode!r}")
        d = self.d
        kernel = _sizes(kernel_size, d, "kernel_size", name)
        stride = _sizes(stride, d, "stride", name)
        dilation = _sizes(dilation, d, "dilation", name)
        if isinstance(padding, str) and not self.transposed:
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding must be an int, {d} of them, 'same' or "
                                 f"'valid', got {padding!r}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError(f"{name}: padding='same' needs stride 1, got stride "
                                 f"{stride}")
        else:
            padding = _sizes(padding, d, "padding", name, lowest=0)
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.output_padding = _sizes(output_padding, d, "output_padding", name, lowest=0)
        self.padding_mode = padding_mode
        rng = initial_generator(rng)
        shape = ((in_channels, out_channels // groups) if self.transposed else
                 (out_channels, in_channels // groups)) + kernel
        # PyTorch's default, so that a ported model starts alike: kaiming-uniform with
        # a = sqrt(5) is U(-b, b) with b = 1 / sqrt(fan_in), fan_in the weight's second
        # axis times the kernel's size, and its bias draws the same
        bound = 1 / math.sqrt(shape[1] * math.prod(kernel))
        self.weight = Parameter(rng.uniform(-bound, bound, shape), dtype=dtype)
        self.bias = (Parameter(rng.uniform(-bound, bound, out_channels), dtype=dtype)
                     if bias else None)

    def _edge_widths(self):
        """F.pad's widths (last axis first) for a padding_mode other than zeros."""
        if self.padding == "valid":
            return (0, 0) * self.d
        if self.padding == "same":
            totals = [dl * (k - 1) for k, dl in zip(self.kernel_size, self.dilation)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        else:
            pairs = [(p, p) for p in self.padding]
        return tuple(w for pair in reversed(pairs) for w in pair)

    def forward(self, x: ArrayLike) -> Result:
        """The convolution of x (N, in_channels, *spatial), plus the bias."""
        if self.padding_mode != "zeros":
            x = F.with_batch_axis(pad, x, self.d, type(self).__name__, self._edge_widths(),
                                  self.padding_mode)
            return self._functional(x, self.weight, self.bias, self.stride, 0,
                                    self.dilation, self.groups)
        return self._functional(x, self.weight, self.bias, self.stride, self.padding,
                                self.dilation, self.groups)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        d = self.d
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        for what, default in (("padding", (0,) * d), ("dilation", (1,) * d),
                              ("output_padding", (0,) * d), ("groups", 1)):
            if getattr(self, what) != default:
                text += f", {what}={getattr(self, what)}"
        text += "" if self.bias is not None else ", bias=False"
        return text + ("" if self.padding_mode == "zeros" else
                       f", padding_mode={self.padding_mode}")


class Conv1d(_ConvNd):
    """A 1-d convolution (PyTorch's ``nn.Conv1d``): input (N, in_channels, L), weight
    (out_channels, in_channels / groups, kernel_size), output (N, out_channels, L_out).

    ``padding_mode`` (``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``) as
    in PyTorch. Initialised as PyTorch does (weight and bias uniform in
    +-1/sqrt(fan_in)); ``rng`` is a seed or a ``numpy.random.Generator``.

    >>> layer = cr.nn.Conv1d(2, 4, kernel_size=3, padding=1, rng=0)
    >>> layer.weight.shape, layer(cr.ones(5, 2, 10)).shape
    ((4, 2, 3), (5, 4, 10))
    >>> layer
    Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,))
    """

    d = 1
    _functional = staticmethod(F.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Padding = 0, dilation: Size = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, rng, dtype)


class Conv2d(_ConvNd):
    """A 2-d convolution (PyTorch's ``nn.Conv2d``): input (N, in_channels, H, W), weight
    (out_channels, in_channels / groups, kh, kw), output (N, out_channels, H_out, W_out).

    ``stride``, ``padding`` (an int, a pair, ``"same"`` or ``"valid"``), ``dilation``,
    ``groups`` and ``padding_mode`` as in PyTorch; initialised as PyTorch does (weight
    and bias uniform in +-1/sqrt(fan_in)), so a PyTorch ``state_dict`` loads with its
    own layout.

    >>> layer = cr.nn.Conv2d(1, 8, kernel_size=3, rng=0)
    >>> layer
    Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1))
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
                 bias: bool = True, padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, rng, dtype)


class Conv3d(_ConvNd):
    """A 3-d convolution (PyTorch's ``nn.Conv3d``): input (N, in_channels, D, H, W),
    weight (out_channels, in_channels / groups, kd, kh, kw), output (N, out_channels,
    D_out, H_out, W_out).

    ``stride``, ``padding`` (an int, a triple, ``"same"`` or ``"valid"``), ``dilation``,
    ``groups`` and ``padding_mode`` as in PyTorch; initialised as PyTorch does.

    >>> layer = cr.nn.Conv3d(2, 4, kernel_size=3, padding=1, padding_mode="circular",
    ...                      rng=0)
    >>> layer(cr.ones(1, 2, 5, 6, 7)).shape
    (1, 4, 5, 6, 7)
    >>> layer
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), padding_mode=circular)
    """

    d = 3
    _functional = staticmethod(F.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Padding = 0, dilation: Size = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, rng, dtype)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                 groups: int = 1, bias: bool = True, dilation: Size = 1,
                 padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, rng, dtype, output_padding)

    def _output_padding(self, x, output_size):
        """output_padding, or the one that gives ``output_size`` (as PyTorch picks it)."""
        if output_size is None:
            return self.output_padding
        name, d = type(self).__name__, self.d
        shape = shape_of(x)
        leading = 2 if len(shape) == d + 2 else 1
        wanted = tuple(output_size)
        if len(wanted) == leading + d:
            wanted = wanted[leading:]
        if len(wanted) != d:
            raise ValueError(f"{name}: for an input of shape {shape}, output_size must have "
                             f"{d} or {leading + d} entries, got {tuple(output_size)}")
        smallest = tuple((n - 1) * s - 2 * p + dl * (k - 1) + 1 for n, s, p, dl, k in zip(
            shape[leading:], self.stride, self.padding, self.dilation, self.kernel_size))
        largest = tuple(n + s - 1 for n, s in zip(smallest, self.stride))
        if any(not lo <= n <= hi for n, lo, hi in zip(wanted, smallest, largest)):
            raise ValueError(f"{name}: requested an output size of {wanted}, but valid "
                             f"sizes range from {smallest} to {largest} (for an input of "
                             f"shape {shape})")
        return tuple(int(n) - lo for n, lo in zip(wanted, smallest))

    def forward(self, x: ArrayLike, output_size: Sequence[int] | None = None) -> Result:
        """The transposed convolution of x (N, in_channels, *spatial), plus the bias;
        ``output_size`` (the spatial sizes, or the whole shape) picks the output
        padding, as PyTorch's."""
        return self._functional(x, self.weight, self.bias, self.stride, self.padding,
                                self._output_padding(x, output_size), self.groups,
                                self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """A 1-d transposed convolution (PyTorch's ``nn.ConvTranspose1d``), the gradient of
    a Conv1d in its input: input (N, in_channels, L), weight (in_channels, out_channels
    / groups, kernel_size), output (N, out_channels, L_out) with L_out = (L - 1) *
    stride - 2 * padding + dilation * (kernel_size - 1) + output_padding + 1.

    Initialised as PyTorch does (uniform in +-1/sqrt(out_channels / groups *
    kernel_size)); ``forward(x, output_size)`` picks the output padding from a size.

    >>> layer = cr.nn.ConvTranspose1d(4, 2, kernel_size=4, stride=2, padding=1, rng=0)
    >>> layer.weight.shape, layer(cr.ones(3, 4, 10)).shape
    ((4, 2, 4), (3, 2, 20))
    >>> layer
    ConvTranspose1d(4, 2, kernel_size=(4,), stride=(2,), padding=(1,))
    """

    d = 1
    _functional = staticmethod(F.conv_transpose1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                 groups: int = 1, bias: bool = True, dilation: Size = 1,
                 padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, rng, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """A 2-d transposed convolution (PyTorch's ``nn.ConvTranspose2d``), the gradient of
    a Conv2d in its input: input (N, in_channels, H, W), weight (in_channels,
    out_channels / groups, kh, kw), output (N, out_channels, H_out, W_out), each size
    (n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    Initialised as PyTorch does; ``forward(x, output_size)`` picks the output padding
    that gives ``output_size`` (a strided Conv2d's input size, say).

    >>> down = cr.nn.Conv2d(4, 4, 3, stride=2, padding=1, rng=0)
    >>> up = cr.nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, rng=0)
    >>> x = cr.ones(1, 4, 12, 12)
    >>> up(down(x)).shape, up(down(x), output_size=x.shape).shape
    ((1, 4, 11, 11), (1, 4, 12, 12))
    """

    d = 2
    _functional = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                 groups: int = 1, bias: bool = True, dilation: Size = 1,
                 padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, rng, dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """A 3-d transposed convolution (PyTorch's ``nn.ConvTranspose3d``), the gradient of
    a Conv3d in its input: input (N, in_channels, D, H, W), weight (in_channels,
    out_channels / groups, kd, kh, kw), output (N, out_channels, D_out, H_out, W_out),
    each size as ConvTranspose2d's.

    >>> layer = cr.nn.ConvTranspose3d(2, 3, 2, stride=2, bias=False, rng=0)
    >>> layer(cr.ones(1, 2, 2, 3, 4)).shape
    (1, 3, 4, 6, 8)
    >>> layer
    ConvTranspose3d(2, 3, kernel_size=(2, 2, 2), stride=(2, 2, 2), bias=False)
    """

    d = 3
    _functional = staticmethod(F.conv_transpose3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size,
                 stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                 groups: int = 1, bias: bool = True, dilation: Size = 1,
                 padding_mode: str = "zeros", rng: RNG = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, rng, dtype)

"""Convolution, pooling and batch normalisation layers, shaped like PyTorch's: inputs
(N, C, *spatial), weights in PyTorch's layout (out_channels, in_channels / groups,
*kernel), so that a PyTorch model's ``state_dict`` loads as it is."""

import math
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import arrays as xp
from ..rules.common import Result
from ..primitive import shape_of
from . import functional as F
from .layers import RNG, initial_generator
from .module import Module, Parameter

# A size per spatial axis, or one for all; padding may also be "same" or "valid".
Size = int | tuple[int, ...]
Padding = int | tuple[int, ...] | str

__all__ = ["Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
           "BatchNorm1d", "BatchNorm2d"]


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


class MaxPool2d(Module):
    """The largest entry of each window (PyTorch's ``nn.MaxPool2d``): input
    (N, C, H, W); ``stride`` defaults to the kernel size; padding counts as -inf.
    Entries tied for a window's maximum share its gradient.

    >>> pool = cr.nn.MaxPool2d(2)
    >>> pool(cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))).data.tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 dilation: Size = 1) -> None:
        self.kernel_size, self.stride = kernel_size, stride
        self.padding, self.dilation = padding, dilation

    def forward(self, x: ArrayLike) -> Result:
        """The max of each window."""
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}")


class AvgPool2d(Module):
    """The mean of each window (PyTorch's ``nn.AvgPool2d``): input (N, C, H, W);
    ``stride`` defaults to the kernel size; padding adds zeros, counted in the mean
    unless ``count_include_pad=False``.

    >>> pool = cr.nn.AvgPool2d(2)
    >>> pool(cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))).data.tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 count_include_pad: bool = True) -> None:
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad = count_include_pad

    def forward(self, x: ArrayLike) -> Result:
        """The mean of each window."""
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                            count_include_pad=self.count_include_pad)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Averages into a fixed ``output_size`` (an int, or (H_out, W_out), None keeping
    that axis), whatever the input's size (PyTorch's ``nn.AdaptiveAvgPool2d``).

    >>> pool = cr.nn.AdaptiveAvgPool2d(1)                     # global average pooling
    >>> pool(cr.ones(2, 3, 7, 5)).shape
    (2, 3, 1, 1)
    """

    def __init__(self, output_size: int | tuple[int | None, ...]) -> None:
        self.output_size = output_size

    def forward(self, x: ArrayLike) -> Result:
        """The mean of each bin."""
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"output_size={self.output_size}"


class _BatchNorm(Module):
    _ndims = (4,)
    _buffer_names = ("running_mean", "running_var", "num_batches_tracked")

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64) -> None:
        name = type(self).__name__
        if not isinstance(num_features, Integral) or num_features < 1:
            raise ValueError(f"{name}: num_features must be a positive int, got "
                             f"{num_features!r}")
        if momentum is not None and not 0 <= momentum <= 1:
            raise ValueError(f"{name}: momentum must be in [0, 1] or None, got {momentum!r}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features), dtype=dtype) if affine else None
        self.bias = Parameter(np.zeros(num_features), dtype=dtype) if affine else None
        if track_running_stats:
            self.running_mean = np.zeros(num_features, dtype)
            self.running_var = np.ones(num_features, dtype)
            self.num_batches_tracked = np.zeros((), np.int64)
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, x: ArrayLike) -> Result:
        """Normalised by the batch's statistics in training (which also update the
        running ones), by the running statistics in eval."""
        shape = shape_of(x)
        if len(shape) not in self._ndims or shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}: input of shape {shape}, expected "
                             f"{self._expected} with C = {self.num_features}")
        use_batch = self.training or not self.track_running_stats
        factor = 0.0 if self.momentum is None else self.momentum
        tracking = self.training and self.track_running_stats
        if tracking and self.momentum is None:  # a cumulative average, as PyTorch's
            factor = 1 / (self.num_batches_tracked + 1)  # momentum=None, this batch counted
        out = F.batch_norm(x, self.running_mean if self.track_running_stats else None,
                           self.running_var if self.track_running_stats else None,
                           self.weight, self.bias, use_batch, factor, self.eps)
        if tracking:  # (counted once the running statistics took it: a refused call, as
            # under cr.vmap, counts nothing)
            xp.add(self.num_batches_tracked, 1, out=self.num_batches_tracked)
        return out

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs over all but the channel axis
    (PyTorch's ``nn.BatchNorm1d``): (x - mean) / sqrt(var + eps) * weight + bias.

    In training the batch's mean and (biased) variance normalise, and the running ones
    move towards them by ``momentum`` (the running variance towards the unbiased one);
    in eval the running ones normalise. ``momentum=None`` keeps a cumulative average.
    ``state_dict()`` holds ``running_mean``, ``running_var`` and
    ``num_batches_tracked``, as PyTorch's does.

    >>> bn = cr.nn.BatchNorm1d(2)
    >>> y = bn(cr.tensor([[1.0, 10.0], [3.0, 30.0]]))
    >>> np.round(y.data, 3).tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    >>> bn.running_mean.tolist()                  # 0.9 * 0 + 0.1 * the batch's mean
    [0.2, 2.0]
    """

    _ndims = (2, 3)
    _expected = "(N, C) or (N, C, L)"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs per channel (PyTorch's
    ``nn.BatchNorm2d``); see ``BatchNorm1d`` for the statistics, train and eval.

    >>> bn = cr.nn.BatchNorm2d(3)
    >>> y = bn(cr.tensor(np.random.default_rng(0).normal(5.0, 2.0, (4, 3, 6, 6))))
    >>> np.allclose(y.data.mean(axis=(0, 2, 3)), 0.0)     # each channel centred
    True
    >>> bn.eval()(cr.ones(1, 3, 2, 2)).shape      # the running statistics now
    (1, 3, 2, 2)
    """

    _ndims = (4,)
    _expected = "(N, C, H, W)"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)

"""Pooling layers, shaped like PyTorch's: inputs (N, C, *spatial) or (C, *spatial), the
settings as PyTorch names and shows them."""

import numpy as np
from numpy.typing import ArrayLike

from ..rules.common import Result
from . import pooling_functions as F
from .conv_functions import Size
from .module import Module
from .pooling_functions import OutputSize

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d",
           "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "FractionalMaxPool2d", "FractionalMaxPool3d"]


def _n_tuple(value, d):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * d


class _MaxPool(Module):
    d = 2

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 dilation: Size = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x: ArrayLike) -> Result | tuple[Result, np.ndarray]:
        """The max of each window (and with return_indices, where it is)."""
        return getattr(F, f"max_pool{self.d}d")(
            x, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, "
                f"ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPool):
    """The largest entry of each window (PyTorch's ``nn.MaxPool1d``): input (N, C, L) or
    (C, L); ``stride`` defaults to the kernel size; padding counts as -inf.

    >>> cr.nn.MaxPool1d(2)(cr.tensor([[[1.0, 3.0, 2.0, 0.0]]])).data.tolist()
    [[[3.0, 2.0]]]
    """
    d = 1


class MaxPool2d(_MaxPool):
    """The largest entry of each window (PyTorch's ``nn.MaxPool2d``): input
    (N, C, H, W); ``stride`` defaults to the kernel size; padding counts as -inf;
    ``return_indices=True`` returns (y, indices) too, for ``MaxUnpool2d``. Entries tied
    for a window's maximum share its gradient.

    >>> pool = cr.nn.MaxPool2d(2)
    >>> pool(cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))).data.tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    d = 2


class MaxPool3d(_MaxPool):
    """The largest entry of each window (PyTorch's ``nn.MaxPool3d``): input
    (N, C, D, H, W) or (C, D, H, W).

    >>> cr.nn.MaxPool3d(2, ceil_mode=True)(cr.ones(1, 2, 3, 3, 3)).shape
    (1, 2, 2, 2, 2)
    """
    d = 3


class _AvgPool(Module):
    d = 2

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, x: ArrayLike) -> Result:
        """The mean of each window."""
        return getattr(F, f"avg_pool{self.d}d")(
            x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(Module):
    """The mean of each window (PyTorch's ``nn.AvgPool1d``, which has no
    divisor_override): input (N, C, L) or (C, L); padding adds zeros, counted in the
    mean unless ``count_include_pad=False``.

    >>> cr.nn.AvgPool1d(2)(cr.tensor([[[1.0, 3.0, 2.0, 0.0]]])).data.tolist()
    [[[2.0, 1.0]]]
    """

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        self.kernel_size = _n_tuple(kernel_size, 1)
        self.stride = _n_tuple(kernel_size if stride is None else stride, 1)
        self.padding = _n_tuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, x: ArrayLike) -> Result:
        """The mean of each window."""
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPool):
    """The mean of each window (PyTorch's ``nn.AvgPool2d``): input (N, C, H, W);
    ``stride`` defaults to the kernel size; padding adds zeros, counted in the mean
    unless ``count_include_pad=False``; ``divisor_override`` divides each sum instead.

    >>> pool = cr.nn.AvgPool2d(2)
    >>> pool(cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))).data.tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    d = 2


class AvgPool3d(_AvgPool):
    """The mean of each window (PyTorch's ``nn.AvgPool3d``): input (N, C, D, H, W) or
    (C, D, H, W).

    >>> cr.nn.AvgPool3d(2)(cr.ones(1, 2, 4, 4, 4)).shape
    (1, 2, 2, 2, 2)
    """
    d = 3


class _Adaptive(Module):
    d, kind = 2, "avg"

    def __init__(self, output_size: OutputSize) -> None:
        self.output_size = output_size

    def forward(self, x: ArrayLike) -> Result:
        """The mean of each bin."""
        return getattr(F, f"adaptive_avg_pool{self.d}d")(x, self.output_size)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """Averages into a fixed ``output_size`` of bins, whatever the input's length
    (PyTorch's ``nn.AdaptiveAvgPool1d``): input (N, C, L) or (C, L).

    >>> cr.nn.AdaptiveAvgPool1d(2)(cr.tensor([[[0.0, 1.0, 2.0, 3.0]]])).data.tolist()
    [[[0.5, 2.5]]]
    """
    d = 1


class AdaptiveAvgPool2d(_Adaptive):
    """Averages into a fixed ``output_size`` (an int, or (H_out, W_out), None keeping
    that axis), whatever the input's size (PyTorch's ``nn.AdaptiveAvgPool2d``).

    >>> pool = cr.nn.AdaptiveAvgPool2d(1)                     # global average pooling
    >>> pool(cr.ones(2, 3, 7, 5)).shape
    (2, 3, 1, 1)
    """
    d = 2


class AdaptiveAvgPool3d(_Adaptive):
    """Averages into a fixed ``output_size`` per axis (PyTorch's
    ``nn.AdaptiveAvgPool3d``): input (N, C, D, H, W) or (C, D, H, W).

    >>> cr.nn.AdaptiveAvgPool3d((1, 2, None))(cr.ones(2, 3, 4, 5, 6)).shape
    (2, 3, 1, 2, 6)
    """
    d = 3


class _AdaptiveMax(Module):
    d = 2

    def __init__(self, output_size: OutputSize, return_indices: bool = False) -> None:
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, x: ArrayLike) -> Result | tuple[Result, np.ndarray]:
        """The max of each bin (and with return_indices, where it is)."""
        return getattr(F, f"adaptive_max_pool{self.d}d")(x, self.output_size,
                                                         self.return_indices)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMax):
    """The largest entry of each of ``output_size`` bins (PyTorch's
    ``nn.AdaptiveMaxPool1d``): input (N, C, L) or (C, L).

    >>> cr.nn.AdaptiveMaxPool1d(2)(cr.tensor([[[3.0, 1.0, 4.0, 1.0]]])).data.tolist()
    [[[3.0, 4.0]]]
    """
    d = 1


class AdaptiveMaxPool2d(_AdaptiveMax):
    """The largest entry of each bin (PyTorch's ``nn.AdaptiveMaxPool2d``): input
    (N, C, H, W) or (C, H, W); ``output_size`` an int or a pair, None keeping an axis.

    >>> cr.nn.AdaptiveMaxPool2d((2, None))(cr.ones(1, 3, 5, 4)).shape
    (1, 3, 2, 4)
    """
    d = 2


class AdaptiveMaxPool3d(_AdaptiveMax):
    """The largest entry of each bin (PyTorch's ``nn.AdaptiveMaxPool3d``): input
    (N, C, D, H, W) or (C, D, H, W).

    >>> cr.nn.AdaptiveMaxPool3d(1)(cr.ones(1, 3, 2, 3, 4)).shape
    (1, 3, 1, 1, 1)
    """
    d = 3


class _LPPool(Module):
    d = 2

    def __init__(self, norm_type: float, kernel_size: Size, stride: Size | None = None,
                 ceil_mode: bool = False) -> None:
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, x: ArrayLike) -> Result:
        """The p-norm of each window."""
        return getattr(F, f"lp_pool{self.d}d")(x, self.norm_type, self.kernel_size,
                                               self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """Power-average pooling (PyTorch's ``nn.LPPool1d``): (sum of x**p over each window)
    ** (1/p), input (N, C, L) or (C, L).

    >>> cr.nn.LPPool1d(2, 2)(cr.tensor([[[3.0, 4.0]]])).data.tolist()
    [[[5.0]]]
    """
    d = 1


class LPPool2d(_LPPool):
    """Power-average pooling (PyTorch's ``nn.LPPool2d``): (sum of x**p over each window)
    ** (1/p), input (N, C, H, W) or (C, H, W).

    >>> cr.nn.LPPool2d(1, 2)(cr.ones(1, 1, 2, 2)).data.tolist()
    [[[[4.0]]]]
    """
    d = 2


class LPPool3d(_LPPool):
    """Power-average pooling (PyTorch's ``nn.LPPool3d``): input (N, C, D, H, W) or
    (C, D, H, W).

    >>> cr.nn.LPPool3d(2, 2)(cr.ones(1, 1, 2, 2, 4)).shape
    (1, 1, 1, 1, 2)
    """
    d = 3


class _MaxUnpool(Module):
    d = 2

    def __init__(self, kernel_size: Size, stride: Size | None = None,
                 padding: Size = 0) -> None:
        self.kernel_size = _n_tuple(kernel_size, self.d)
        self.stride = _n_tuple(kernel_size if stride is None else stride, self.d)
        self.padding = _n_tuple(padding, self.d)

    def forward(self, x: ArrayLike, indices: ArrayLike,
                output_size: tuple[int, ...] | None = None) -> Result:
        """Zeros with x's entries put back at their indices."""
        return getattr(F, f"max_unpool{self.d}d")(x, indices, self.kernel_size,
                                                  self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """Max pooling's partial inverse (PyTorch's ``nn.MaxUnpool1d``): zeros with each
    entry put back at the index ``MaxPool1d(return_indices=True)`` gave it.

    >>> y, i = cr.nn.MaxPool1d(2, return_indices=True)(cr.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
    >>> cr.nn.MaxUnpool1d(2)(y, i).data.tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """
    d = 1


class MaxUnpool2d(_MaxUnpool):
    """Max pooling's partial inverse (PyTorch's ``nn.MaxUnpool2d``): zeros with each
    entry put back at its flat index in its plane; ``output_size`` picks among the
    sizes that pool to the input's.

    >>> x = cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    >>> y, i = cr.nn.MaxPool2d(2, return_indices=True)(x)
    >>> cr.nn.MaxUnpool2d(2)(y, i).data[0, 0, 1].tolist()
    [0.0, 5.0, 0.0, 7.0]
    """
    d = 2


class MaxUnpool3d(_MaxUnpool):
    """Max pooling's partial inverse (PyTorch's ``nn.MaxUnpool3d``), for (N, C, D, H, W)
    or (C, D, H, W).

    >>> y, i = cr.nn.MaxPool3d(2, return_indices=True)(cr.ones(1, 1, 2, 2, 2))
    >>> cr.nn.MaxUnpool3d(2)(y, i, output_size=(3, 3, 3)).shape
    (1, 1, 3, 3, 3)
    """
    d = 3


class _FractionalMaxPool(Module):
    d = 2

    def __init__(self, kernel_size: Size, output_size: OutputSize | None = None,
                 output_ratio: float | tuple[float, ...] | None = None,
                 return_indices: bool = False, _random_samples: ArrayLike | None = None,
                 ) -> None:
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name}: requires an output_size or an output_ratio, got "
                             f"neither")
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: takes one of output_size and output_ratio, got "
                             f"output_size={output_size!r} and output_ratio={output_ratio!r}")
        self.kernel_size = _n_tuple(kernel_size, self.d)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _n_tuple(output_size, self.d)
        self.output_ratio = None if output_ratio is None else _n_tuple(output_ratio, self.d)
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1, got "
                             f"{output_ratio!r}")

    def forward(self, x: ArrayLike) -> Result | tuple[Result, np.ndarray]:
        """The max of each pseudo-random window (and with return_indices, where it is)."""
        return getattr(F, f"fractional_max_pool{self.d}d")(
            x, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPool):
    """The largest entry of each of ``output_size`` overlapping windows of
    ``kernel_size`` at pseudo-random places (PyTorch's ``nn.FractionalMaxPool2d``): input
    (N, C, H, W) or (C, H, W); ``output_ratio`` instead gives the output as a fraction
    of the input. ``_random_samples`` (N, C, 2) fixes the windows, as in torch; else
    each call draws them from chainrule's default generator.

    >>> FractionalMaxPool2d(3, output_ratio=0.5)(cr.ones(1, 2, 8, 10)).shape
    (1, 2, 4, 5)
    """
    d = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    """The largest entry of each of ``output_size`` overlapping windows of
    ``kernel_size`` at pseudo-random places (PyTorch's ``nn.FractionalMaxPool3d``): input
    (N, C, D, H, W) or (C, D, H, W); ``_random_samples`` (N, C, 3) fixes the windows.

    >>> FractionalMaxPool3d(2, output_size=3)(cr.ones(1, 2, 5, 6, 7)).shape
    (1, 2, 3, 3, 3)
    """
    d = 3

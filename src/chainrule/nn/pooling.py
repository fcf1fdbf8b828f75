"""Pooling layers, shaped like PyTorch's: inputs (N, C, *spatial) or (C, *spatial), the
settings as PyTorch names and shows them."""

from numpy.typing import ArrayLike

from ..rules.common import Result
from . import functional as F
from .conv_functions import Size
from .module import Module

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


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

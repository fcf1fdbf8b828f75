"""im2col and col2im, as PyTorch's ``unfold`` and ``fold`` (and the ``Unfold`` and
``Fold`` modules): each sliding block of a (N, C, H, W) image as a column of
(N, C * kh * kw, L), and back, blocks that overlap adding up. Built on pooling's
``_unfold`` and ``_fold``, each the other's adjoint, so every derivative is theirs.

>>> x = cr.tensor(np.arange(9.0).reshape(1, 1, 3, 3))
>>> cr.nn.functional.unfold(x, 2).shape                     # 4 taps, 4 blocks
(1, 4, 4)
"""

import math

from numpy.typing import ArrayLike

from ..primitive import shape_of
from ..rules import moveaxis, reshape
from ..rules.common import Result
from ..rules.convolution import _tuple
from ..rules.pooling import _fold, _unfold
from .conv_functions import Size
from .module import Module

__all__ = ["unfold", "fold", "Unfold", "Fold"]


def _settings(name, kernel_size, dilation, padding, stride):
    return dict(kernel=_tuple(kernel_size, 2, "kernel_size", name, 1),
                dilation=_tuple(dilation, 2, "dilation", name, 1),
                pads=tuple((p, p) for p in _tuple(padding, 2, "padding", name, 0)),
                stride=_tuple(stride, 2, "stride", name, 1))


def _blocks(name, size, s):
    """The number of blocks along each axis of an image of ``size``."""
    counts = tuple((n + lo + hi - dl * (k - 1) - 1) // st + 1 for n, (lo, hi), k, dl, st
                   in zip(size, s["pads"], s["kernel"], s["dilation"], s["stride"]))
    if any(c < 1 for c in counts):
        raise ValueError(f"{name}: kernel {s['kernel']} (dilation {s['dilation']}) does "
                         f"not fit the image of size {tuple(size)} padded by "
                         f"{tuple(lo for lo, _ in s['pads'])}; expected at least one block")
    return counts


def unfold(x: ArrayLike, kernel_size: Size, dilation: Size = 1, padding: Size = 0,
           stride: Size = 1) -> Result:
    """PyTorch's ``unfold`` (im2col): x (N, C, H, W) or (C, H, W) to (N, C * kh * kw, L)
    or (C * kh * kw, L), column l holding block l's entries (channel slowest, then the
    kernel's rows), the blocks in row-major order; padding adds zeros.

    >>> x = cr.tensor(np.arange(6.0).reshape(1, 1, 2, 3))
    >>> unfold(x, (2, 2)).data.tolist()
    [[[0.0, 1.0], [1.0, 2.0], [3.0, 4.0], [4.0, 5.0]]]
    """
    shape = shape_of(x)
    if len(shape) == 3:
        cols = unfold(reshape(x, (1,) + shape), kernel_size, dilation, padding, stride)
        return reshape(cols, shape_of(cols)[1:])
    if len(shape) != 4:
        raise ValueError(f"unfold: input of shape {shape}, expected (N, C, H, W) or "
                         f"(C, H, W)")
    s = _settings("unfold", kernel_size, dilation, padding, stride)
    counts = _blocks("unfold", shape[2:], s)
    cols = _unfold(x, s["kernel"], s["stride"], s["pads"], s["dilation"])  # (K, N, C, *out)
    n, c = shape[:2]
    return reshape(moveaxis(cols, -5, -3), (n, c * math.prod(s["kernel"]),
                                            math.prod(counts)))


def fold(x: ArrayLike, output_size: Size, kernel_size: Size, dilation: Size = 1,
         padding: Size = 0, stride: Size = 1) -> Result:
    """PyTorch's ``fold`` (col2im), unfold's adjoint: columns (N, C * kh * kw, L) or
    (C * kh * kw, L) added back into an image (N, C, *output_size) or (C, *output_size),
    entries of overlapping blocks summed; L must be the number of blocks.

    >>> cols = cr.ones(1, 4, 4)                       # 2x2 blocks of a 3x3 image
    >>> fold(cols, 3, 2).data.tolist()                # how many blocks cover each entry
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    shape = shape_of(x)
    if len(shape) == 2:
        image = fold(reshape(x, (1,) + shape), output_size, kernel_size, dilation, padding,
                     stride)
        return reshape(image, shape_of(image)[1:])
    if len(shape) != 3:
        raise ValueError(f"fold: input of shape {shape}, expected (N, C * kh * kw, L) or "
                         f"(C * kh * kw, L)")
    size = _tuple(output_size, 2, "output_size", "fold", 1)
    s = _settings("fold", kernel_size, dilation, padding, stride)
    counts = _blocks("fold", size, s)
    taps = math.prod(s["kernel"])
    n, rows, length = shape
    if rows % taps or length != math.prod(counts):
        raise ValueError(f"fold: input of shape {shape}, expected (N, C * {taps}, "
                         f"{math.prod(counts)}) for kernel {s['kernel']} and output_size "
                         f"{size} ({counts[0]} x {counts[1]} blocks)")
    cols = moveaxis(reshape(x, (n, rows // taps, taps) + counts), -3, -5)
    return _fold(cols, size, s["kernel"], s["stride"], s["pads"], s["dilation"])


class Unfold(Module):
    """im2col as a module (PyTorch's ``nn.Unfold``): (N, C, H, W) to
    (N, C * kh * kw, L), one column per sliding block.

    >>> cr.nn.Unfold(kernel_size=(2, 3))(cr.ones(2, 5, 3, 4)).shape
    (2, 30, 4)
    """

    def __init__(self, kernel_size: Size, dilation: Size = 1, padding: Size = 0,
                 stride: Size = 1) -> None:
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: ArrayLike) -> Result:
        """The columns of x's blocks."""
        return unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """col2im as a module (PyTorch's ``nn.Fold``): columns (N, C * kh * kw, L) summed
    back into images (N, C, *output_size).

    >>> cr.nn.Fold(output_size=(4, 5), kernel_size=2)(cr.ones(1, 12, 12)).shape
    (1, 3, 4, 5)
    """

    def __init__(self, output_size: Size, kernel_size: Size, dilation: Size = 1,
                 padding: Size = 0, stride: Size = 1) -> None:
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, x: ArrayLike) -> Result:
        """The image the columns add up to."""
        return fold(x, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")

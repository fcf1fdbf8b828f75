"""``nn.functional``'s pooling, with torch's arguments and shapes (N, C, *spatial); the
operations and their derivatives are in ``chainrule.rules.pooling``.

>>> import chainrule.nn.functional as F
>>> F.max_pool2d(cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2).shape
(1, 1, 2, 2)
"""

from numpy.typing import ArrayLike

from ..rules import pooling as _pool
from ..rules.common import Result
from .conv_functions import Size, with_batch_axis

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]


def max_pool2d(x: ArrayLike, kernel_size: Size, stride: Size | None = None,
               padding: Size = 0, dilation: Size = 1) -> Result:
    """PyTorch's ``max_pool2d``: the largest entry of each window of x (N, C, H, W) or
    (C, H, W); ``stride`` defaults to the kernel size, padding counts as -inf. Entries
    tied for a window's maximum share its gradient evenly (PyTorch picks one).

    >>> x = cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    >>> max_pool2d(x, 2).data.tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return with_batch_axis(_pool.max_pool, x, 2, "max_pool2d", kernel_size, stride, padding,
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
    return with_batch_axis(_pool.avg_pool, x, 2, "avg_pool2d", kernel_size, stride, padding,
                    count_include_pad, d=2, name="avg_pool2d")


def adaptive_avg_pool2d(x: ArrayLike, output_size: int | tuple[int | None, ...]) -> Result:
    """PyTorch's ``adaptive_avg_pool2d``: x (N, C, H, W) or (C, H, W) averaged into
    ``output_size`` bins (an int or a pair; None keeps that axis), bin i of n entries
    into m covering [floor(i n / m), ceil((i + 1) n / m)).

    >>> x = cr.tensor(np.arange(5.0).reshape(1, 1, 1, 5))
    >>> adaptive_avg_pool2d(x, (1, 2)).data.tolist()               # [0, 3) and [2, 5)
    [[[[1.0, 3.0]]]]
    """
    return with_batch_axis(_pool.adaptive_avg_pool, x, 2, "adaptive_avg_pool2d", output_size,
                    d=2, name="adaptive_avg_pool2d")

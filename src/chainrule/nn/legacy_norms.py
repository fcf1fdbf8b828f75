"""torch's legacy ``nn.CrossMapLRN2d``: local response normalization across channels of
a 4-D input, with the channel windows of torch's (Lua Torch's) running-sum kernel,
which are not ``F.local_response_norm``'s.

>>> CrossMapLRN2d(3)(cr.ones(1, 4, 2, 2)).shape
(1, 4, 2, 2)
"""

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules.common import Result, float_dtype
from .module import Module

__all__ = ["CrossMapLRN2d", "cross_map_lrn2d"]


def _channel_windows(channels, size, dtype):
    """(C, C): row c is 1 over the channels whose squares torch adds up for channel c.
    torch keeps a running sum that adds the channel ``pre`` ahead and drops the one
    ``pre`` behind, but drops nothing until past channel ``pre``: so channels up to
    ``pre`` count every channel from 0 on (one more at channel ``pre`` itself), an odd
    ``size`` is centred and an even one covers size - 1 channels."""
    pre = int((size - 1) / 2 + 1)
    windows = np.zeros((channels, channels), dtype=dtype)
    for c in range(channels):
        windows[c, max(c - pre + 1, 0):min(c + pre, channels)] = 1
        windows[c, 0] = 1
    return windows


def cross_map_lrn2d(x: ArrayLike, size: int, alpha: float = 1e-4, beta: float = 0.75,
                    k: float = 1.0) -> Result:
    """torch's CrossMapLRN2d as a function: x (N, C, H, W) times
    (k + alpha / size * s) ** -beta, s the sum of the squares over torch's window of
    channels about each channel (see ``CrossMapLRN2d``).

    >>> x = cr.tensor(np.ones((1, 3, 1, 1)))
    >>> np.round(cross_map_lrn2d(x, 3, alpha=3.0, beta=1.0).data.ravel(), 4).tolist()
    [0.3333, 0.25, 0.25]
    """
    shape = shape_of(x)
    if len(shape) != 4:
        raise ValueError(f"CrossMapLRN2d: input of shape {shape}, expected 4-D (N, C, H, W)")
    if not isinstance(size, Integral) or isinstance(size, bool) or size < 1:
        raise ValueError(f"CrossMapLRN2d: size must be a positive int, got {size!r}")
    windows = _channel_windows(shape[1], size, float_dtype(x))
    sums = ops.einsum("ij,njhw->nihw", windows, x * x)
    return x * ops.power(sums * (alpha / size) + k, -beta)


class CrossMapLRN2d(Module):
    """Local response normalization across channels (torch's legacy
    ``nn.CrossMapLRN2d``), for 4-D input (N, C, H, W): each entry times
    (k + alpha / size * s) ** -beta, s the sum of squares over a window of channels.
    The windows are torch's: centred for an odd ``size``, size - 1 wide for an even
    one, and reaching back to channel 0 for the first channels.

    >>> CrossMapLRN2d(3, alpha=1e-3)
    CrossMapLRN2d(3, alpha=0.001, beta=0.75, k=1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: ArrayLike) -> Result:
        """x normalized across its channels."""
        return cross_map_lrn2d(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The settings, as PyTorch shows them."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

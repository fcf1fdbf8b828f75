"""Layers that only move entries, as torch's: ``Unflatten``, ``PixelShuffle`` and
``PixelUnshuffle`` (channels to and from space), ``ChannelShuffle``, with the functions
behind them. Each is a reshape and a transpose: derivatives of any order, cr.vmap and
cr.jit follow.

>>> import chainrule.nn.functional as F
>>> F.pixel_shuffle(cr.ones(1, 8, 3, 3), 2).shape           # (N, C r^2, H, W)
(1, 2, 6, 6)
"""

import math
from numbers import Integral

from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules.common import Result
from .module import Module

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "Unflatten",
           "PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


def _factor(value, what, name):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name}: {what} must be a positive int, got {value!r}")
    return int(value)


def pixel_shuffle(input: ArrayLike, upscale_factor: int) -> Result:
    """torch's ``pixel_shuffle``: (*, C r^2, H, W) -> (*, C, H r, W r), the r^2
    channels of each output channel spread over r x r blocks of space.

    >>> x = cr.tensor([[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]])  # (1, 4, 1, 1)
    >>> pixel_shuffle(x, 2).data.tolist()
    [[[[1.0, 2.0], [3.0, 4.0]]]]
    """
    r, shape = _factor(upscale_factor, "upscale_factor", "pixel_shuffle"), shape_of(input)
    if len(shape) < 3 or shape[-3] % (r * r):
        raise ValueError(f"pixel_shuffle: input of shape {shape}, expected (*, C, H, W) "
                         f"with C divisible by upscale_factor**2 = {r * r}")
    *batch, c, h, w = shape
    k = len(batch)
    x = ops.reshape(input, (*batch, c // (r * r), r, r, h, w))
    x = ops.transpose(x, tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return ops.reshape(x, (*batch, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: ArrayLike, downscale_factor: int) -> Result:
    """torch's ``pixel_unshuffle``, the inverse of ``pixel_shuffle``:
    (*, C, H r, W r) -> (*, C r^2, H, W).

    >>> pixel_unshuffle(cr.tensor([[[[1.0, 2.0], [3.0, 4.0]]]]), 2).data.ravel().tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    r = _factor(downscale_factor, "downscale_factor", "pixel_unshuffle")
    shape = shape_of(input)
    if len(shape) < 3 or shape[-2] % r or shape[-1] % r:
        raise ValueError(f"pixel_unshuffle: input of shape {shape}, expected (*, C, H, W) "
                         f"with H and W divisible by downscale_factor = {r}")
    *batch, c, h, w = shape
    k = len(batch)
    x = ops.reshape(input, (*batch, c, h // r, r, w // r, r))
    x = ops.transpose(x, tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return ops.reshape(x, (*batch, c * r * r, h // r, w // r))


def channel_shuffle(input: ArrayLike, groups: int) -> Result:
    """torch's ``channel_shuffle``: the C channels of x (N, C, *) in ``groups`` groups,
    interleaved: channel g * (C / groups) + i goes to i * groups + g.

    >>> x = cr.tensor([[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]]])   # (1, 6, 1)
    >>> channel_shuffle(x, 2).data.ravel().tolist()
    [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    g, shape = _factor(groups, "groups", "channel_shuffle"), shape_of(input)
    if len(shape) < 3 or shape[1] % g:
        raise ValueError(f"channel_shuffle: input of shape {shape}, expected (N, C, *) "
                         f"with at least 3 dimensions and C divisible by groups = {g}")
    n, c, *rest = shape
    x = ops.reshape(input, (n, g, c // g, *rest))
    return ops.reshape(ops.swapaxes(x, 1, 2), shape)


class Unflatten(Module):
    """Splits axis ``dim`` into ``unflattened_size`` (one entry may be -1), torch's
    ``nn.Unflatten``, the inverse of ``Flatten``.

    >>> layer = cr.nn.Unflatten(1, (2, 5))
    >>> layer
    Unflatten(dim=1, unflattened_size=(2, 5))
    >>> layer(cr.ones(3, 10)).shape
    (3, 2, 5)
    """

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int]) -> None:
        if not isinstance(dim, Integral):
            raise ValueError(f"Unflatten: dim must be an int, got {dim!r}")
        if (not isinstance(unflattened_size, (tuple, list))
                or not all(isinstance(n, Integral) and (n >= 0 or n == -1)
                           for n in unflattened_size)
                or sum(n == -1 for n in unflattened_size) > 1):
            raise ValueError(f"Unflatten: unflattened_size must be a tuple or list of "
                             f"sizes (at most one -1), got {unflattened_size!r}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, x: ArrayLike) -> Result:
        """x with axis ``dim`` split."""
        shape = shape_of(x)
        if not -len(shape) <= self.dim < len(shape):
            raise ValueError(f"Unflatten: dim {self.dim} out of range for an input of "
                             f"shape {shape}")
        dim, sizes = self.dim % len(shape), tuple(self.unflattened_size)
        known = math.prod(n for n in sizes if n != -1)
        if (-1 in sizes and (known == 0 or shape[dim] % known)) or \
                (-1 not in sizes and known != shape[dim]):
            raise ValueError(f"Unflatten: sizes {list(sizes)} don't multiply up to the "
                             f"size {shape[dim]} of axis {dim} of an input of shape {shape}")
        return ops.reshape(x, shape[:dim] + sizes + shape[dim + 1:])

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r), torch's ``nn.PixelShuffle``.

    >>> cr.nn.PixelShuffle(3)(cr.ones(2, 9, 4, 4)).shape
    (2, 1, 12, 12)
    """

    def __init__(self, upscale_factor: int) -> None:
        self.upscale_factor = _factor(upscale_factor, "upscale_factor", "PixelShuffle")

    def forward(self, x: ArrayLike) -> Result:
        """The channels spread over space."""
        return pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        """The factor, as torch shows it."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W), torch's ``nn.PixelUnshuffle``.

    >>> cr.nn.PixelUnshuffle(2)(cr.ones(2, 1, 4, 6)).shape
    (2, 4, 2, 3)
    """

    def __init__(self, downscale_factor: int) -> None:
        self.downscale_factor = _factor(downscale_factor, "downscale_factor",
                                        "PixelUnshuffle")

    def forward(self, x: ArrayLike) -> Result:
        """Blocks of space gathered into channels."""
        return pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        """The factor, as torch shows it."""
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """The channels of (N, C, *) interleaved across ``groups``, torch's
    ``nn.ChannelShuffle``.

    >>> cr.nn.ChannelShuffle(2)
    ChannelShuffle(groups=2)
    """

    def __init__(self, groups: int) -> None:
        self.groups = _factor(groups, "groups", "ChannelShuffle")

    def forward(self, x: ArrayLike) -> Result:
        """x with its channels interleaved."""
        return channel_shuffle(x, self.groups)

    def extra_repr(self) -> str:
        """The groups, as torch shows them."""
        return f"groups={self.groups}"

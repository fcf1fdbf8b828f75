"""torch's ``F.interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear, area, and antialiased bilinear and bicubic), the deprecated
``F.upsample``, ``F.upsample_bilinear`` and ``F.upsample_nearest``, and the modules
``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``. Each spatial axis
in turn is a gather of input entries at positions computed as torch's kernels compute
them (the same float32 nearest index, the same half-pixel and align_corners source
positions), mixed with weights that are constants, or (area, antialias) a constant
matrix applied along the axis: derivatives of any order, cr.vmap and cr.jit follow.

>>> import chainrule.nn.functional as F
>>> x = cr.tensor([[[1.0, 2.0, 4.0]]])
>>> F.interpolate(x, scale_factor=2).data.tolist()
[[[1.0, 1.0, 2.0, 2.0, 4.0, 4.0]]]
>>> F.interpolate(x, size=5, mode="linear", align_corners=True).data.tolist()
[[[1.0, 1.5, 2.0, 3.0, 4.0]]]
"""

import math
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules.common import Result, float_dtype
from ..rules.pooling import adaptive_avg_pool
from .module import Module

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest", "Upsample",
           "UpsamplingNearest2d", "UpsamplingBilinear2d"]

# the interpolating modes and the spatial rank each takes
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
# the modes that take any of 1 to 3 spatial axes
_ANY_RANK = ("nearest", "nearest-exact", "area")
_MODES = _ANY_RANK[:2] + ("linear", "bilinear", "bicubic", "trilinear", "area")
# torch's cubic convolution constant, and that of its antialiased bicubic filter
_A, _A_ANTIALIAS = -0.75, -0.5


def _nearest_positions(n_in, n_out, scale):
    """torch's nearest index: floor(dst * scale) in float32, scale 1 / scale_factor
    when one was given, else n_in / n_out; the last entry at most."""
    if n_out == n_in:
        return np.arange(n_out)
    if n_out == 2 * n_in:
        return np.arange(n_out) >> 1
    scale = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    index = np.floor(np.arange(n_out, dtype=np.float32) * scale).astype(np.int64)
    return np.minimum(index, n_in - 1)


def _nearest_exact_positions(n_in, n_out, scale):
    """torch's nearest-exact index: floor((dst + 0.5) * scale) in float32, the pixel
    whose centre is nearest; the last entry at most."""
    scale = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    centres = np.arange(n_out, dtype=np.float32) + np.float32(0.5)
    index = np.floor(centres * scale).astype(np.int64)
    return np.minimum(index, n_in - 1)


def _source_step(n_in, n_out, scale, align_corners):
    """torch's step between source positions: (n_in - 1) / (n_out - 1) with the corners
    matched (0 for one output), else 1 / scale_factor when given, else n_in / n_out."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale else n_in / n_out


def _cubic_coefficients(t, a=_A):
    """The four cubic-convolution weights (constant ``a``) of the neighbours at -1, 0,
    1 and 2 from a position ``t`` past the second."""
    near = lambda s: ((a + 2) * s - (a + 3)) * s * s + 1  # noqa: E731
    far = lambda s: ((a * s - 5 * a) * s + 8 * a) * s - 4 * a  # noqa: E731
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_positions(n_in, n_out, scale, align_corners):
    """torch's bicubic neighbours (four index arrays, clamped into the input) and their
    weights: the source position as linear's but not clamped at 0, its float32 floor
    at most n_in - 1, and the fraction past it clamped to [0, 1]."""
    dst = np.arange(n_out, dtype=np.float64)
    step = _source_step(n_in, n_out, scale, align_corners)
    src = dst * step if align_corners else step * (dst + 0.5) - 0.5
    first = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    t = np.clip(src - first, 0.0, 1.0)
    neighbours = [np.clip(first - 1 + k, 0, n_in - 1) for k in range(4)]
    return neighbours, _cubic_coefficients(t)


def _antialias_matrix(n_in, n_out, scale, align_corners, cubic):
    """torch's antialiased resampling of an axis as an (n_out, n_in) matrix: each output
    averages the inputs under a triangle (bilinear) or cubic (a = -0.5) filter centred
    on its source position and stretched by the step when downsampling, the weights
    normalised to sum to 1."""
    step = _source_step(n_in, n_out, scale, align_corners)
    stretch = max(step, 1.0)
    support = (2.0 if cubic else 1.0) * stretch
    matrix = np.zeros((n_out, n_in))
    for i in range(n_out):
        centre = step * (i + 0.5)
        low = max(int(centre - support + 0.5), 0)
        high = min(int(centre + support + 0.5), n_in)
        s = (np.arange(low, high) - centre + 0.5) / stretch
        if cubic:
            a, s = _A_ANTIALIAS, np.abs(s)
            w = np.where(s < 1, ((a + 2) * s - (a + 3)) * s * s + 1,
                         np.where(s < 2, ((a * s - 5 * a) * s + 8 * a) * s - 4 * a, 0.0))
        else:
            w = np.maximum(1 - np.abs(s), 0.0)
        total = w.sum()
        matrix[i, low:high] = w / total if total != 0 else 0.0
    return matrix


def _linear_positions(n_in, n_out, scale, align_corners):
    """torch's two neighbours and the weight of the second: the source position
    dst * (n_in - 1) / (n_out - 1) with align_corners, else the half-pixel
    (dst + 0.5) * scale - 0.5, at least 0."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        step = 1.0 / scale if scale else n_in / n_out
        src = np.maximum(step * (dst + 0.5) - 0.5, 0.0)
    # (torch floors a float32 copy of the position, and clamps its fraction to [0, 1])
    first = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    weight = np.clip(src - first, 0.0, 1.0)
    second = first + (first < n_in - 1)
    return first, second, weight


def _along(x, axis, ndim, positions):
    """x's entries at ``positions`` along ``axis`` (of ``ndim``, counted from the end
    so that a cr.vmap batch in front does not move it)."""
    return ops.take(x, positions, axis - ndim)


def _matrix_along(x, axis, ndim, matrix):
    """``matrix`` (out, in) applied along ``axis`` of x (of ``ndim``, from the end)."""
    letters = "abcdefghijklmnopqrstuvwxyz"[:ndim - axis]
    out = "z" + letters[1:]
    return ops.einsum(f"...{letters},z{letters[0]}->...{out}", x, matrix)


def _sizes(shape, spatial, size, scale_factor, recompute_scale_factor):
    """The output sizes and the scale factors torch's kernels are given (None where
    they use in / out)."""
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give one of size and scale_factor, got "
                         + ("both" if size is not None else "neither"))
    if size is not None:
        sizes = (size,) * spatial if isinstance(size, Integral) else tuple(size)
        if len(sizes) != spatial:
            raise ValueError(f"interpolate: size {size!r} for an input of shape {shape}; "
                             f"expected {spatial} spatial sizes")
        if not all(isinstance(n, Integral) and n > 0 for n in sizes):
            raise ValueError(f"interpolate: size must be positive ints, got {size!r}")
        return sizes, (None,) * spatial
    factors = ((scale_factor,) * spatial if isinstance(scale_factor, Real)
               else tuple(scale_factor))
    if len(factors) != spatial:
        raise ValueError(f"interpolate: scale_factor {scale_factor!r} for an input of "
                         f"shape {shape}; expected {spatial} factors")
    if not all(isinstance(f, Real) and f > 0 for f in factors):
        raise ValueError(f"interpolate: scale_factor must be positive, got "
                         f"{scale_factor!r}")
    sizes = tuple(math.floor(n * float(f)) for n, f in zip(shape[2:], factors))
    if not all(n > 0 for n in sizes):
        raise ValueError(f"interpolate: scale_factor {scale_factor!r} gives an empty "
                         f"output {sizes} for an input of shape {shape}")
    return sizes, ((None,) * spatial if recompute_scale_factor
                   else tuple(map(float, factors)))


def interpolate(input: ArrayLike, size: int | tuple[int, ...] | None = None,
                scale_factor: float | tuple[float, ...] | None = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Result:
    """torch's ``F.interpolate`` of x (N, C, *spatial) to ``size`` or by
    ``scale_factor`` (an entry or one per spatial axis; the output size is
    floor(in * factor)). ``mode`` "nearest" (1 to 3 spatial axes) takes entry
    floor(dst * in / out) (with a given factor, floor(dst / factor), as torch's);
    "nearest-exact" the entry whose centre is nearest, floor((dst + 0.5) * in / out);
    "linear", "bilinear" and "trilinear" (1, 2, 3 spatial axes) mix two neighbours per
    axis, at half-pixel centres or, with ``align_corners=True``, with the corners
    matched; "bicubic" (2 spatial axes) mixes four per axis with torch's cubic
    convolution (A = -0.75), the neighbours past an edge taken from the edge; "area"
    averages as adaptive average pooling does. ``antialias=True`` (bilinear and
    bicubic) widens the filter by the step when downsampling, as torch's (and PIL's)
    antialiased resizing. ``recompute_scale_factor=True`` uses in / out instead of the
    factor.

    >>> x = cr.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    >>> interpolate(x, scale_factor=2, mode="bilinear").data[0, 0, 0].tolist()
    [1.0, 1.25, 1.75, 2.0]
    >>> interpolate(x, size=1, mode="area").data.tolist()
    [[[[2.5]]]]
    """
    shape = shape_of(input)
    spatial = len(shape) - 2
    if mode not in _MODES:
        raise ValueError(f"interpolate: mode {mode!r} is not one of "
                         f"{', '.join(map(repr, _MODES))}")
    if spatial < 1 or spatial > 3 or (mode in _LINEAR and _LINEAR[mode] != spatial):
        wanted = ("3-d to 5-d (N, C, *spatial)" if mode in _ANY_RANK
                  else f"{_LINEAR[mode] + 2}-d")
        raise ValueError(f"interpolate: mode {mode!r} of an input of shape {shape}; "
                         f"expected a {wanted} input")
    if mode in _ANY_RANK and align_corners is not None:
        raise ValueError("interpolate: align_corners can only be set with the "
                         "interpolating modes linear, bilinear, bicubic and trilinear")
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"interpolate: antialias=True with mode {mode!r} of an input of "
                         f"shape {shape}; expected mode 'bilinear' or 'bicubic' and a 4-d "
                         f"input")
    sizes, scales = _sizes(shape, spatial, size, scale_factor, recompute_scale_factor)
    if mode == "area":
        return adaptive_avg_pool(input, sizes, d=spatial, name="interpolate")
    ndim, dtype = len(shape), float_dtype(input)
    corners = bool(align_corners)
    x = input
    for k, (n_in, n_out, scale) in enumerate(zip(shape[2:], sizes, scales)):
        axis = 2 + k
        if mode in ("nearest", "nearest-exact"):
            where = _nearest_positions if mode == "nearest" else _nearest_exact_positions
            x = _along(x, axis, ndim, where(n_in, n_out, scale))
            continue
        trailing = (1,) * (ndim - 1 - axis)
        if antialias:
            matrix = _antialias_matrix(n_in, n_out, scale, corners, mode == "bicubic")
            x = _matrix_along(x, axis, ndim, matrix.astype(dtype))
        elif mode == "bicubic":
            neighbours, weights = _cubic_positions(n_in, n_out, scale, corners)
            x = sum(_along(x, axis, ndim, p) * w.reshape((n_out,) + trailing).astype(dtype)
                    for p, w in zip(neighbours, weights))
        else:
            first, second, weight = _linear_positions(n_in, n_out, scale, corners)
            weight = weight.reshape((n_out,) + trailing).astype(dtype)
            x = (_along(x, axis, ndim, first) * (1 - weight)
                 + _along(x, axis, ndim, second) * weight)
    return x


def upsample(input: ArrayLike, size: int | tuple[int, ...] | None = None,
             scale_factor: float | tuple[float, ...] | None = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Result:
    """torch's ``F.upsample``, the old name of ``interpolate``.

    >>> upsample(cr.ones(1, 1, 2), 3).shape
    (1, 1, 3)
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: ArrayLike, size: int | tuple[int, ...] | None = None,
                     scale_factor: float | tuple[float, ...] | None = None) -> Result:
    """torch's deprecated ``F.upsample_nearest``: ``interpolate`` in mode "nearest".

    >>> upsample_nearest(cr.tensor([[[1.0, 2.0]]]), scale_factor=2).data.tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: ArrayLike, size: int | tuple[int, int] | None = None,
                      scale_factor: float | tuple[float, float] | None = None) -> Result:
    """torch's deprecated ``F.upsample_bilinear``: ``interpolate`` of (N, C, H, W) in
    mode "bilinear" with the corners matched (``align_corners=True``).

    >>> upsample_bilinear(cr.tensor([[[[0.0, 2.0]]]]), size=(1, 3)).data.tolist()
    [[[[0.0, 1.0, 2.0]]]]
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


class Upsample(Module):
    """Resizes (N, C, *spatial) to ``size`` or by ``scale_factor`` (torch's
    ``nn.Upsample``); ``mode`` and ``align_corners`` as ``F.interpolate``'s.

    >>> up = cr.nn.Upsample(scale_factor=2, mode="bilinear")
    >>> up
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> up(cr.ones(1, 3, 4, 5)).shape
    (1, 3, 8, 10)
    """

    def __init__(self, size: int | tuple[int, ...] | None = None,
                 scale_factor: float | tuple[float, ...] | None = None,
                 mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        self.size = size
        # (torch keeps the factors as floats)
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: ArrayLike) -> Result:
        """x resized."""
        return interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        """The settings, as torch shows them."""
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour resizing of (N, C, H, W) (torch's ``nn.UpsamplingNearest2d``).

    >>> cr.nn.UpsamplingNearest2d(scale_factor=2)(cr.ones(1, 1, 2, 3)).shape
    (1, 1, 4, 6)
    """

    def __init__(self, size: int | tuple[int, int] | None = None,
                 scale_factor: float | tuple[float, float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear resizing of (N, C, H, W) with the corners matched (torch's
    ``nn.UpsamplingBilinear2d``, ``align_corners=True``).

    >>> cr.nn.UpsamplingBilinear2d(size=3)(cr.tensor([[[[0.0, 2.0]]]])).data.tolist()
    [[[[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]]]
    """

    def __init__(self, size: int | tuple[int, int] | None = None,
                 scale_factor: float | tuple[float, float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)

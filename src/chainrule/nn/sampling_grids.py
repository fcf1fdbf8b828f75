"""torch's ``F.affine_grid`` and ``F.grid_sample``: sampling an image (N, C, H, W) or a
volume (N, C, D, H, W) at the points of a grid in normalised coordinates, [-1, 1] from
one edge to the other. A sample is a weighted sum of input entries gathered at integer
positions; the positions come from the grid through floor and rounding (whose
derivative is 0) and the weights through arithmetic, clip, abs and fmod, so the
derivatives in the input and in the grid, of every order, forward mode, cr.vmap and
cr.jit all follow from chainrule's operations.

>>> import chainrule.nn.functional as F
>>> theta = cr.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> grid = F.affine_grid(theta, (1, 1, 2, 2), align_corners=True)
>>> grid.data[0, :, :, 0].tolist()
[[-1.0, 1.0], [-1.0, 1.0]]
>>> image = cr.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
>>> F.grid_sample(image, grid, align_corners=True).data.tolist()
[[[[1.0, 2.0], [3.0, 4.0]]]]
"""

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..primitive import raw, shape_of
from ..rules.common import Result, float_dtype

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
# torch's cubic convolution constant
_A = -0.75


def _base_coordinates(n, align_corners, dtype):
    """The normalised centres of n pixels: from -1 to 1 (the corners' centres) with
    align_corners, else scaled by (n - 1) / n (the edges at -1 and 1); 0 for one pixel."""
    if n <= 1:
        return np.zeros(n, dtype=dtype)
    points = np.linspace(-1.0, 1.0, n)
    return (points if align_corners else points * ((n - 1) / n)).astype(dtype)


def affine_grid(theta: ArrayLike, size: tuple[int, ...] | list[int],
                align_corners: bool | None = None) -> Result:
    """torch's ``F.affine_grid``: the sampling grid of the affine maps ``theta``, (N, 2, 3)
    for ``size`` (N, C, H, W) giving (N, H, W, 2), or (N, 3, 4) for (N, C, D, H, W) giving
    (N, D, H, W, 3); each point is theta @ (x, y[, z], 1) with (x, y[, z]) the output
    pixel's normalised centre (``align_corners`` as ``grid_sample``'s; None is False).

    >>> theta = cr.tensor([[[2.0, 0.0, 0.0], [0.0, 1.0, 0.5]]])
    >>> affine_grid(theta, (1, 3, 1, 2), align_corners=False).data.tolist()
    [[[[-1.0, 0.5], [1.0, 0.5]]]]
    """
    shape, size = shape_of(theta), tuple(size)
    if len(size) not in (4, 5):
        raise ValueError(f"affine_grid: size {size}; expected (N, C, H, W) or "
                         f"(N, C, D, H, W), the 2-d and 3-d transforms")
    if min(size) <= 0:
        raise ValueError(f"affine_grid: size {size}; expected every size positive")
    d = len(size) - 2
    if xp.result_type(raw(theta)).kind not in "fc":
        raise ValueError("affine_grid: theta must be floating point")
    if shape != (size[0], d, d + 1):
        raise ValueError(f"affine_grid: theta of shape {shape} for size {size}; expected "
                         f"({size[0]}, {d}, {d + 1})")
    dtype = float_dtype(theta)
    # (x, y[, z], 1) per output point; x runs along the last axis
    axes = [_base_coordinates(n, bool(align_corners), dtype) for n in size[2:]]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack(list(mesh[::-1]) + [np.ones(size[2:], dtype=dtype)], axis=-1)
    letters = "dhw"[-d:]
    return ops.einsum(f"{letters}k,nik->n{letters}i", base, theta)


def _unnormalize(coord, n, align_corners):
    """Pixel position of a normalised coordinate: -1 and 1 the centres of the first and
    last pixels with align_corners, else their outer edges."""
    if align_corners:
        return (coord + 1) * ((n - 1) / 2)
    return ((coord + 1) * n - 1) / 2


def _reflect(coord, low2, high2):
    """coord reflected into [low2 / 2, high2 / 2] (torch's bounds, given doubled), as
    often as it takes: an odd number of folds runs backwards."""
    if low2 == high2:
        return coord * 0
    low, span = low2 / 2, (high2 - low2) / 2
    distance = ops.absolute(coord - low)
    extra = ops.fmod(distance, span)
    folds = ops.floor(ops.stop_gradient(distance) / span)
    even = ops.fmod(folds, 2) == 0
    return ops.where(even, extra + low, span - extra + low)


def _padded(coord, n, padding_mode, align_corners):
    """Where padding_mode moves a pixel position: nowhere for zeros (what lies outside
    reads 0), clipped into the image for border, reflected at the edges for reflection."""
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        coord = (_reflect(coord, 0, 2 * (n - 1)) if align_corners
                 else _reflect(coord, -1, 2 * n - 1))
    return ops.clip(coord, 0, n - 1)


def _gather(flat, positions, sizes):
    """flat (N, C, prod(sizes)) at integer ``positions`` (one (N, P) array per spatial
    axis): (N, C, P), and (N, 1, P) whether each position lies inside."""
    outside, index = 0, 0
    for p, n in zip(positions, sizes):
        clipped = ops.clip(p, 0, n - 1)
        # (how far outside, summed over the axes: 0 only inside)
        outside = outside + ops.absolute(p - clipped)
        index = index * n + clipped
    values = ops.take_along_axis(flat, ops.expand_dims(index, 1), axis=2)
    return values, ops.expand_dims(outside == 0, 1)


def _cubic_weights(t):
    """torch's four cubic-convolution weights (A = -0.75) of the neighbours at -1, 0, 1
    and 2 from the floor of a position that lies ``t`` past it."""
    near = lambda s: ((_A + 2) * s - (_A + 3)) * s * s + 1  # noqa: E731
    far = lambda s: ((_A * s - 5 * _A) * s + 8 * _A) * s - 4 * _A  # noqa: E731
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _integer(x):
    return ops.astype(ops.stop_gradient(x), np.int64)


def _sample(flat, coords, sizes, mode, padding_mode, align_corners):
    """The samples (N, C, P) of flat (N, C, prod(sizes)) at pixel positions ``coords``
    (one (N, P) per spatial axis)."""
    if mode == "bicubic":
        floors = [ops.floor(ops.stop_gradient(c)) for c in coords]
        weights = [_cubic_weights(c - f) for c, f in zip(coords, floors)]
        out = 0
        for offsets in itertools.product(range(4), repeat=len(coords)):
            # the neighbour's position is moved by the padding as a sample's would be
            positions = [_integer(_padded(f + (k - 1), n, padding_mode, align_corners))
                         for f, k, n in zip(floors, offsets, sizes)]
            values, inside = _gather(flat, positions, sizes)
            weight = math.prod(w[k] for w, k in zip(weights, offsets))
            out = out + ops.where(inside, values * ops.expand_dims(weight, 1), 0)
        return out
    coords = [_padded(c, n, padding_mode, align_corners) for c, n in zip(coords, sizes)]
    if mode == "nearest":
        # (round half to even, as torch's nearbyint)
        values, inside = _gather(flat, [_integer(ops.rint(c)) for c in coords], sizes)
        return ops.where(inside, values, 0)
    floors = [ops.floor(ops.stop_gradient(c)) for c in coords]
    fractions = [c - f for c, f in zip(coords, floors)]
    out = 0
    for corner in itertools.product((0, 1), repeat=len(coords)):
        positions = [_integer(f + k) for f, k in zip(floors, corner)]
        values, inside = _gather(flat, positions, sizes)
        weight = math.prod(t if k else 1 - t for t, k in zip(fractions, corner))
        out = out + ops.where(inside, values * ops.expand_dims(weight, 1), 0)
    return out


def grid_sample(input: ArrayLike, grid: ArrayLike, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Result:
    """torch's ``F.grid_sample``: input (N, C, H, W) sampled at grid (N, H', W', 2)
    giving (N, C, H', W'), or (N, C, D, H, W) at (N, D', H', W', 3) giving
    (N, C, D', H', W'). A grid point (x, y[, z]) is normalised: -1 and 1 are the
    centres of the edge pixels with ``align_corners=True``, their outer edges with
    False (torch's default, taken for None). ``mode`` "bilinear" (trilinear on
    volumes) mixes the 2 or 8 neighbours, "nearest" takes the closest, "bicubic" (images
    only) mixes 4 x 4 with torch's cubic convolution (A = -0.75). ``padding_mode``
    "zeros" reads 0 outside, "border" clips the position into the input, "reflection"
    mirrors it at the edges.

    >>> image = cr.tensor([[[[0.0, 10.0]]]])
    >>> grid = cr.tensor([[[[0.0, 0.0], [3.0, 0.0]]]])
    >>> grid_sample(image, grid, align_corners=True).data.tolist()
    [[[[5.0, 0.0]]]]
    >>> grid_sample(image, grid, padding_mode="border", align_corners=True).data.tolist()
    [[[[5.0, 10.0]]]]
    """
    shape, grid_shape = shape_of(input), shape_of(grid)
    if mode not in _MODES:
        raise ValueError(f"grid_sample: mode {mode!r}; expected one of "
                         f"{', '.join(map(repr, _MODES))}")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"grid_sample: padding_mode {padding_mode!r}; expected one of "
                         f"{', '.join(map(repr, _PADDINGS))}")
    d = len(shape) - 2
    if d not in (2, 3) or len(grid_shape) != d + 2 or grid_shape[-1] != d:
        raise ValueError(f"grid_sample: input of shape {shape} and grid of shape "
                         f"{grid_shape}; expected (N, C, H, W) with (N, H', W', 2) or "
                         f"(N, C, D, H, W) with (N, D', H', W', 3)")
    if grid_shape[0] != shape[0]:
        raise ValueError(f"grid_sample: input of shape {shape} and grid of shape "
                         f"{grid_shape}; expected the same batch size N")
    dtypes = (xp.result_type(raw(input)), xp.result_type(raw(grid)))
    if dtypes[0] != dtypes[1] or dtypes[0].kind != "f":
        raise ValueError(f"grid_sample: input of dtype {dtypes[0]} and grid of dtype "
                         f"{dtypes[1]}; expected the same floating dtype")
    if mode == "bicubic" and d != 2:
        raise ValueError(f"grid_sample: mode 'bicubic' of an input of shape {shape}; "
                         f"expected a 4-d input (N, C, H, W)")
    if min(shape[2:], default=1) <= 0:
        raise ValueError(f"grid_sample: input of shape {shape}; expected non-empty "
                         f"spatial sizes")
    n, c, sizes = shape[0], shape[1], shape[2:]
    out_sizes = grid_shape[1:-1]
    points = math.prod(out_sizes)
    flat = ops.reshape(input, (n, c, math.prod(sizes)))
    g = ops.reshape(grid, (n, points, d))
    # grid's last axis runs x, y[, z]: the spatial axes from the last backwards
    coords = [_unnormalize(g[:, :, d - 1 - k], sizes[k], bool(align_corners))
              for k in range(d)]
    out = _sample(flat, coords, sizes, mode, padding_mode, bool(align_corners))
    return ops.reshape(out, (n, c) + tuple(out_sizes))

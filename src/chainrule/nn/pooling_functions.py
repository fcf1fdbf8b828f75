"""``nn.functional``'s pooling, with torch's arguments and shapes (N, C, *spatial) or
(C, *spatial); the operations and their derivatives are in ``chainrule.rules.pooling``.
Indices (``return_indices=True``) are int64 NumPy arrays: they have no derivative.

>>> import chainrule.nn.functional as F
>>> F.max_pool2d(cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2).shape
(1, 1, 2, 2)
"""

import math

import numpy as np
from numpy.typing import ArrayLike

from .. import arrays as xp
from .. import rules as ops
from ..api.torch_random import default_generator
from ..primitive import raw, shape_of
from ..rules import pooling as _pool
from ..rules.common import Result, float_dtype
from .conv_functions import Size

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d"]

OutputSize = int | tuple[int | None, ...]
_AXES = {1: "L", 2: "H, W", 3: "D, H, W"}


def _unbatched(function, x, dims, name, /, *args, **kwargs):
    """``function`` on x (N, C, *spatial); an unbatched x (C, *spatial) is taken as a
    batch of one and returned without that axis (and so are its indices), as PyTorch
    does."""
    shape = shape_of(x)
    if len(shape) == dims + 1:
        out = function(ops.reshape(x, (1,) + shape), *args, **kwargs)
        if isinstance(out, tuple):
            y, indices = out
            return ops.reshape(y, shape_of(y)[1:]), np.squeeze(indices, axis=-dims - 2)
        return ops.reshape(out, shape_of(out)[1:])
    if len(shape) != dims + 2:
        raise ValueError(f"{name}: input of shape {shape}, expected (N, C, {_AXES[dims]}) or "
                         f"(C, {_AXES[dims]})")
    return function(x, *args, **kwargs)


def _max_pool(d):
    name = f"max_pool{d}d"

    def max_pool(x: ArrayLike, kernel_size: Size, stride: Size | None = None,
                 padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                 return_indices: bool = False) -> Result | tuple[Result, np.ndarray]:
        return _unbatched(_pool.max_pool, x, d, name, kernel_size, stride, padding,
                          dilation, d=d, ceil_mode=ceil_mode, return_indices=return_indices,
                          name=name)
    max_pool.__name__ = max_pool.__qualname__ = name
    return max_pool


def _avg_pool(d):
    name = f"avg_pool{d}d"
    if d == 1:  # (PyTorch's avg_pool1d has no divisor_override)
        def avg_pool(x: ArrayLike, kernel_size: Size, stride: Size | None = None,
                     padding: Size = 0, ceil_mode: bool = False,
                     count_include_pad: bool = True) -> Result:
            return _unbatched(_pool.avg_pool, x, d, name, kernel_size, stride, padding,
                              count_include_pad, d=d, ceil_mode=ceil_mode, name=name)
    else:
        def avg_pool(x: ArrayLike, kernel_size: Size, stride: Size | None = None,
                     padding: Size = 0, ceil_mode: bool = False,
                     count_include_pad: bool = True,
                     divisor_override: int | None = None) -> Result:
            return _unbatched(_pool.avg_pool, x, d, name, kernel_size, stride, padding,
                              count_include_pad, d=d, ceil_mode=ceil_mode,
                              divisor_override=divisor_override, name=name)
    avg_pool.__name__ = avg_pool.__qualname__ = name
    return avg_pool


def _adaptive_avg_pool(d):
    name = f"adaptive_avg_pool{d}d"

    def adaptive_avg_pool(x: ArrayLike, output_size: OutputSize) -> Result:
        return _unbatched(_pool.adaptive_avg_pool, x, d, name, output_size, d=d, name=name)
    adaptive_avg_pool.__name__ = adaptive_avg_pool.__qualname__ = name
    return adaptive_avg_pool


def _adaptive_max_pool(d):
    name = f"adaptive_max_pool{d}d"

    def adaptive_max_pool(x: ArrayLike, output_size: OutputSize,
                          return_indices: bool = False) -> Result | tuple[Result, np.ndarray]:
        return _unbatched(_pool.adaptive_max_pool, x, d, name, output_size, d=d,
                          return_indices=return_indices, name=name)
    adaptive_max_pool.__name__ = adaptive_max_pool.__qualname__ = name
    return adaptive_max_pool


def _lp_pool(d):
    name = f"lp_pool{d}d"

    def lp_pool(x: ArrayLike, norm_type: float, kernel_size: Size,
                stride: Size | None = None, ceil_mode: bool = False) -> Result:
        return _unbatched(_pool.lp_pool, x, d, name, norm_type, kernel_size, stride,
                          ceil_mode, d=d, name=name)
    lp_pool.__name__ = lp_pool.__qualname__ = name
    return lp_pool


def _max_unpool(d):
    name = f"max_unpool{d}d"

    def max_unpool(x: ArrayLike, indices: ArrayLike, kernel_size: Size,
                   stride: Size | None = None, padding: Size = 0,
                   output_size: tuple[int, ...] | None = None) -> Result:
        shape = shape_of(x)
        if len(shape) == d + 1:
            indices = raw(indices)
            y = _pool.max_unpool(ops.reshape(x, (1,) + shape),
                                 ops.reshape(indices, (1,) + shape_of(indices)), kernel_size,
                                 stride, padding, output_size, d=d, name=name)
            return ops.reshape(y, shape_of(y)[1:])
        if len(shape) != d + 2:
            raise ValueError(f"{name}: input of shape {shape}, expected "
                             f"(N, C, {_AXES[d]}) or (C, {_AXES[d]})")
        return _pool.max_unpool(x, indices, kernel_size, stride, padding, output_size, d=d,
                                name=name)
    max_unpool.__name__ = max_unpool.__qualname__ = name
    return max_unpool


max_pool1d, max_pool2d, max_pool3d = (_max_pool(d) for d in (1, 2, 3))
avg_pool1d, avg_pool2d, avg_pool3d = (_avg_pool(d) for d in (1, 2, 3))
adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (
    _adaptive_avg_pool(d) for d in (1, 2, 3))
adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (
    _adaptive_max_pool(d) for d in (1, 2, 3))
lp_pool1d, lp_pool2d, lp_pool3d = (_lp_pool(d) for d in (1, 2, 3))
max_unpool1d, max_unpool2d, max_unpool3d = (_max_unpool(d) for d in (1, 2, 3))

max_pool1d.__doc__ = """PyTorch's ``max_pool1d``: the largest entry of each window of x
    (N, C, L) or (C, L); ``stride`` defaults to the kernel size, padding counts as -inf;
    ``return_indices=True`` gives (y, indices) too. Entries tied for a window's maximum
    share its gradient evenly (PyTorch picks one).

    >>> max_pool1d(cr.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]]), 2, ceil_mode=True).data.tolist()
    [[[3.0, 5.0, 4.0]]]
    """
max_pool2d.__doc__ = """PyTorch's ``max_pool2d``: the largest entry of each window of x
    (N, C, H, W) or (C, H, W); ``stride`` defaults to the kernel size, padding counts as
    -inf; ``return_indices=True`` gives (y, indices) too, each maximum's flat index in
    its H*W plane. Entries tied for a window's maximum share its gradient evenly
    (PyTorch picks one).

    >>> x = cr.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    >>> max_pool2d(x, 2).data.tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    >>> max_pool2d(x, 2, return_indices=True)[1].tolist()
    [[[[5, 7], [13, 15]]]]
    """
max_pool3d.__doc__ = """PyTorch's ``max_pool3d``: the largest entry of each window of x
    (N, C, D, H, W) or (C, D, H, W), as ``max_pool2d`` over three axes.

    >>> max_pool3d(cr.tensor(np.arange(8.0).reshape(1, 2, 2, 2)), 2).data.tolist()
    [[[[7.0]]]]
    """
avg_pool1d.__doc__ = """PyTorch's ``avg_pool1d``: the mean of each window of x (N, C, L) or
    (C, L); the zeros of the padding count unless ``count_include_pad=False``.

    >>> avg_pool1d(cr.tensor([[[1.0, 3.0, 2.0]]]), 2, ceil_mode=True).data.tolist()
    [[[2.0, 2.0]]]
    """
avg_pool2d.__doc__ = """PyTorch's ``avg_pool2d``: the mean of each window of x (N, C, H, W)
    or (C, H, W); ``stride`` defaults to the kernel size; the zeros of the padding count
    in the mean unless ``count_include_pad=False``; ``divisor_override`` divides each
    window's sum by that number instead.

    >>> x = cr.tensor(np.ones((1, 1, 2, 2)))
    >>> avg_pool2d(x, 2, padding=1).data.tolist()                   # 1 of 4 is x
    [[[[0.25, 0.25], [0.25, 0.25]]]]
    >>> avg_pool2d(x, 2, padding=1, count_include_pad=False).data.tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
avg_pool3d.__doc__ = """PyTorch's ``avg_pool3d``: the mean of each window of x
    (N, C, D, H, W) or (C, D, H, W), as ``avg_pool2d`` over three axes.

    >>> avg_pool3d(cr.tensor(np.arange(8.0).reshape(1, 2, 2, 2)), 2).data.tolist()
    [[[[3.5]]]]
    """
adaptive_avg_pool1d.__doc__ = """PyTorch's ``adaptive_avg_pool1d``: x (N, C, L) or (C, L)
    averaged into ``output_size`` bins, bin i of n entries into m covering
    [floor(i n / m), ceil((i + 1) n / m)).

    >>> adaptive_avg_pool1d(cr.tensor([[[0.0, 1.0, 2.0, 3.0]]]), 2).data.tolist()
    [[[0.5, 2.5]]]
    """
adaptive_avg_pool2d.__doc__ = """PyTorch's ``adaptive_avg_pool2d``: x (N, C, H, W) or
    (C, H, W) averaged into ``output_size`` bins (an int or a pair; None keeps that
    axis), bin i of n entries into m covering [floor(i n / m), ceil((i + 1) n / m)).

    >>> x = cr.tensor(np.arange(5.0).reshape(1, 1, 1, 5))
    >>> adaptive_avg_pool2d(x, (1, 2)).data.tolist()               # [0, 3) and [2, 5)
    [[[[1.0, 3.0]]]]
    """
adaptive_avg_pool3d.__doc__ = """PyTorch's ``adaptive_avg_pool3d``: x (N, C, D, H, W) or
    (C, D, H, W) averaged into ``output_size`` bins per axis.

    >>> adaptive_avg_pool3d(cr.ones(2, 3, 4, 5, 6), (1, 2, None)).shape
    (2, 3, 1, 2, 6)
    """
adaptive_max_pool1d.__doc__ = """PyTorch's ``adaptive_max_pool1d``: the largest entry of
    each of ``output_size`` bins of x (N, C, L) or (C, L), the bins of
    ``adaptive_avg_pool1d``; ``return_indices=True`` gives (y, indices) too.

    >>> adaptive_max_pool1d(cr.tensor([[[3.0, 1.0, 4.0, 1.0, 5.0]]]), 2).data.tolist()
    [[[4.0, 5.0]]]
    """
adaptive_max_pool2d.__doc__ = """PyTorch's ``adaptive_max_pool2d``: the largest entry of
    each bin of x (N, C, H, W) or (C, H, W), the bins of ``adaptive_avg_pool2d``;
    ``return_indices=True`` gives (y, indices) too, flat indices in each H*W plane.

    >>> x = cr.tensor(np.arange(6.0).reshape(1, 2, 3))
    >>> adaptive_max_pool2d(x, 1, return_indices=True)[1].tolist()
    [[[5]]]
    """
adaptive_max_pool3d.__doc__ = """PyTorch's ``adaptive_max_pool3d``: the largest entry of
    each bin of x (N, C, D, H, W) or (C, D, H, W).

    >>> adaptive_max_pool3d(cr.ones(1, 2, 3, 4, 5), (2, 2, 2)).shape
    (1, 2, 2, 2, 2)
    """
lp_pool1d.__doc__ = """PyTorch's ``lp_pool1d``: (sum of x**p over each window) ** (1/p) for
    x (N, C, L) or (C, L), computed as PyTorch does (from the window's mean; a negative
    sum gives 0 ** (1/p) or nan, as there).

    >>> lp_pool1d(cr.tensor([[[3.0, 4.0]]]), 2, 2).data.tolist()
    [[[5.0]]]
    """
lp_pool2d.__doc__ = """PyTorch's ``lp_pool2d``: (sum of x**p over each window) ** (1/p) for
    x (N, C, H, W) or (C, H, W); p = inf is max pooling of |x|.

    >>> lp_pool2d(cr.tensor([[[[3.0, 4.0]]]]), 1, (1, 2)).data.tolist()
    [[[[7.0]]]]
    """
lp_pool3d.__doc__ = """PyTorch's ``lp_pool3d``: (sum of x**p over each window) ** (1/p) for
    x (N, C, D, H, W) or (C, D, H, W).

    >>> lp_pool3d(cr.ones(1, 1, 2, 2, 2), 2, 2).data.tolist()
    [[[[[2.8284271247461903]]]]]
    """
max_unpool1d.__doc__ = """PyTorch's ``max_unpool1d``: max_pool1d's partial inverse, zeros
    with each entry of x (N, C, L) or (C, L) put back at its index.

    >>> y, i = max_pool1d(cr.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> max_unpool1d(y, i, 2).data.tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """
max_unpool2d.__doc__ = """PyTorch's ``max_unpool2d``: max_pool2d's partial inverse, zeros of
    ``output_size`` (by default (n - 1) stride - 2 padding + kernel per axis) with each
    entry of x (N, C, H, W) or (C, H, W) put at its flat index in its plane; the
    gradient reads back at the indices.

    >>> x = cr.tensor(np.arange(4.0).reshape(1, 1, 2, 2))
    >>> y, i = max_pool2d(x, 2, return_indices=True)
    >>> max_unpool2d(y, i, 2).data.tolist()
    [[[[0.0, 0.0], [0.0, 3.0]]]]
    """
max_unpool3d.__doc__ = """PyTorch's ``max_unpool3d``: max_pool3d's partial inverse, for x
    (N, C, D, H, W) or (C, D, H, W).

    >>> y, i = max_pool3d(cr.ones(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> max_unpool3d(y, i, 2).shape
    (1, 1, 2, 2, 2)
    """


def _max_pool_with_indices(d):
    name = f"max_pool{d}d_with_indices"
    pool = globals()[f"max_pool{d}d"]

    def with_indices(x: ArrayLike, kernel_size: Size, stride: Size | None = None,
                     padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                     return_indices: bool = True) -> Result | tuple[Result, np.ndarray]:
        return pool(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    with_indices.__name__ = with_indices.__qualname__ = name
    with_indices.__doc__ = f"""torch's ``{name}``: ``max_pool{d}d`` with
    ``return_indices=True`` by default, (y, indices).

    >>> y, i = {name}(cr.ones({", ".join(["1", "1"] + ["2"] * d)}), 2)
    >>> i.ravel().tolist()
    [0]
    """
    return with_indices


def _adaptive_max_pool_with_indices(d):
    name = f"adaptive_max_pool{d}d_with_indices"
    pool = globals()[f"adaptive_max_pool{d}d"]

    def with_indices(x: ArrayLike, output_size: OutputSize,
                     return_indices: bool = True) -> Result | tuple[Result, np.ndarray]:
        return pool(x, output_size, return_indices)
    with_indices.__name__ = with_indices.__qualname__ = name
    with_indices.__doc__ = f"""torch's ``{name}``: ``adaptive_max_pool{d}d`` with
    ``return_indices=True`` by default, (y, indices).

    >>> y, i = {name}(cr.ones({", ".join(["1", "1"] + ["2"] * d)}), 1)
    >>> i.ravel().tolist()
    [0]
    """
    return with_indices


max_pool1d_with_indices = _max_pool_with_indices(1)
max_pool2d_with_indices = _max_pool_with_indices(2)
max_pool3d_with_indices = _max_pool_with_indices(3)
adaptive_max_pool1d_with_indices = _adaptive_max_pool_with_indices(1)
adaptive_max_pool2d_with_indices = _adaptive_max_pool_with_indices(2)
adaptive_max_pool3d_with_indices = _adaptive_max_pool_with_indices(3)
__all__ += ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
            "adaptive_max_pool3d_with_indices"]


def _fractional_starts(u, n, m, k):
    """(..., m): the first entry of each of m regions of k along an axis of n, for
    samples u (...) in [0, 1), by torch's pseudo-random sequence: the gaps between
    starts are floor or ceil of alpha = (n - k) / (m - 1), and the last region ends at
    the axis' end. Computed in u's dtype, as torch does (so float32 picks float32's
    regions)."""
    last = xp.full(u.shape + (1,), n - k, dtype=np.int64)
    if m == 1:
        return last
    alpha = u.dtype.type(n - k) / u.dtype.type(m - 1)
    i = xp.arange(m - 1, dtype=u.dtype)
    # Both products are >= 0, so floor is C's truncation to int.
    starts = xp.floor((i + u[..., None]) * alpha) - xp.floor(u[..., None] * alpha)
    return xp.concat([starts.astype(np.int64), last], axis=-1)


def _fractional_max_pool(x, kernel_size, output_size, output_ratio, return_indices,
                         samples, rng, d):
    name = f"fractional_max_pool{d}d"
    shape = shape_of(x)
    if len(shape) not in (d + 1, d + 2):
        raise ValueError(f"{name}: input of shape {shape}, expected (N, C, {_AXES[d]}) or "
                         f"(C, {_AXES[d]})")
    batch, channels, spatial = (shape[0] if len(shape) == d + 2 else 1), shape[-d - 1], \
        shape[-d:]
    kernel = _tuple_of(name, "kernel_size", kernel_size, d, int)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name}: requires an output_size or an output_ratio, got "
                             f"neither")
        ratio = _tuple_of(name, "output_ratio", output_ratio, d, float)
        sizes = tuple(int(n * r) for n, r in zip(spatial, ratio))
    else:
        sizes = _tuple_of(name, "output_size", output_size, d, int)
    # torch lets the last 2-d window end at the input's end, but not a 3-d one.
    room, bound = (0, "<=") if d == 2 else (1, "<")
    for axis, (n, m, k) in enumerate(zip(spatial, sizes, kernel)):
        if k < 1 or m < 1 or m + k - 1 + room > n:
            raise ValueError(f"{name}: kernel_size {kernel} and output_size {sizes} do not "
                             f"fit input of spatial shape {spatial} (axis {axis}: expected "
                             f"output + kernel - 1 {bound} input, both >= 1)")
    dtype = float_dtype(x)
    if samples is None:
        generator = default_generator if rng is None else (
            rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng))
        samples = xp.draw(generator.random, (batch, channels, d)).astype(dtype)
    else:
        samples = np.asarray(raw(samples))
        if samples.shape != (batch, channels, d):
            raise ValueError(f"{name}: _random_samples of shape {samples.shape} for input "
                             f"of shape {shape}, expected {(batch, channels, d)}")
        samples = samples.astype(dtype, copy=False)
    # torch reads the samples of a plane as (W, H) in 2-d and as (T, H, W) in 3-d.
    order = (1, 0) if d == 2 else tuple(range(d))
    plane = math.prod(spatial)
    window = math.prod(kernel)
    flat_index = 0  # (N, C, *sizes, *kernel): each window entry's flat index in its plane
    for axis in range(d):
        starts = _fractional_starts(samples[..., order[axis]], spatial[axis], sizes[axis],
                                    kernel[axis])
        at = [1] * (2 * d)
        at[axis] = sizes[axis]
        taps = [1] * (2 * d)
        taps[d + axis] = kernel[axis]
        position = starts.reshape((batch, channels) + tuple(at)) + \
            xp.arange(kernel[axis]).reshape(taps)
        flat_index = flat_index * spatial[axis] + position
    flat_index = flat_index.reshape((batch, channels) + sizes + (window,))
    planes = ops.reshape(x, (batch, channels, plane))
    gathered = ops.take_along_axis(planes, flat_index.reshape(batch, channels, -1), axis=-1)
    gathered = ops.reshape(gathered, (batch, channels) + sizes + (window,))
    y = ops.max(gathered, axis=-1)
    if len(shape) == d + 1:
        y = ops.reshape(y, shape_of(y)[1:])
    if not return_indices:
        return y
    first = xp.argmax(raw(gathered), axis=-1)
    indices = xp.take_along_axis(xp.broadcast_to(flat_index, first.shape + (window,)),
                                 first[..., None], axis=-1)[..., 0]
    if len(shape) == d + 1:
        indices = np.squeeze(indices, axis=-d - 2)
    return y, indices


def _tuple_of(name, what, value, d, kind):
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
    if len(values) != d or not all(
            isinstance(v, (int, np.integer) if kind is int else (int, float, np.number))
            and not isinstance(v, bool) for v in values):
        raise ValueError(f"{name}: {what} must be {'an int' if kind is int else 'a number'}"
                         f" or {d} of them, got {value!r}")
    return tuple(kind(v) for v in values)


Samples = ArrayLike | None
Rng = "np.random.Generator | int | None"


def _fractional(d, with_indices):
    name = f"fractional_max_pool{d}d" + ("_with_indices" if with_indices else "")

    def fractional_max_pool(x: ArrayLike, kernel_size: Size,
                            output_size: OutputSize | None = None,
                            output_ratio: float | tuple[float, ...] | None = None,
                            return_indices: bool = with_indices,
                            _random_samples: Samples = None, *,
                            rng: Rng = None) -> Result | tuple[Result, np.ndarray]:
        return _fractional_max_pool(x, kernel_size, output_size, output_ratio,
                                    return_indices, _random_samples, rng, d)
    fractional_max_pool.__name__ = fractional_max_pool.__qualname__ = name
    shape = ", ".join(["1", "1"] + ["5"] * d)
    fractional_max_pool.__doc__ = f"""torch's ``{name}``: the largest entry of each of
    ``output_size`` (or input size times ``output_ratio``, rounded down) overlapping
    windows of ``kernel_size``, for x (N, C, {_AXES[d]}) or (C, {_AXES[d]}). The windows
    start at torch's pseudo-random sequence for one sample in [0, 1) per plane and axis:
    ``_random_samples`` (N, C, {d}), given as torch takes them, gives torch's numbers
    exactly; else they are drawn from ``rng`` (a seed or a Generator) or chainrule's
    default generator.{" Indices are returned by default." if with_indices else ""}

    >>> y, i = {name}(cr.ones({shape}), 2, output_size=3, return_indices=True,
    ...                   _random_samples=np.full((1, 1, {d}), 0.5))
    >>> y.shape, i.shape
    ({(1, 1) + (3,) * d}, {(1, 1) + (3,) * d})
    """
    return fractional_max_pool


fractional_max_pool2d = _fractional(2, False)
fractional_max_pool3d = _fractional(3, False)
fractional_max_pool2d_with_indices = _fractional(2, True)
fractional_max_pool3d_with_indices = _fractional(3, True)
__all__ += ["fractional_max_pool2d", "fractional_max_pool3d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

"""Pooling over the trailing spatial axes of (N, C, *spatial) arrays, with PyTorch's
meaning: windows with strides, padding and dilation, read through the strided view of
``convolution``'s im2col.

``unfold`` lays each window's taps along an axis, and ``fold`` (its adjoint) adds each
window back where it came from: two linear operations, each the other's VJP. Max
pooling's gradient is folded back to each window's maximum (tied entries share it,
chainrule's convention for max); average pooling is the mean of the unfolded windows;
adaptive average pooling is a linear map, one matrix per axis.
"""

import itertools
import math

from .. import arrays as xp
from ..primitive import raw, shape_of
from .common import float_dtype, op
from .contractions import einsum
from .convolution import _check_fits, _check_input, _pad_or_crop, _spatial, _tuple, _windows
from .reductions import sum as _sum
from .shapes import reshape

__all__ = ["max_pool", "avg_pool", "adaptive_avg_pool", "pool_arguments"]


def pool_arguments(name, x_shape, kernel_size, stride=None, padding=0, dilation=1, d=2):
    """Pooling's settings checked against the input's shape: ``dict(kernel, stride, pads,
    dilation)``; ``stride`` None is the kernel size, as in PyTorch. Padding may be at most
    half the kernel (PyTorch's rule: a window of padding alone has no entry to pool).

    >>> cr.rules.pooling.pool_arguments("max_pool2d", (1, 1, 4, 4), 2)["stride"]
    (2, 2)
    """
    _check_input(name, x_shape, d)
    kernel = _tuple(kernel_size, d, "kernel_size", name, 1)
    stride = kernel if stride is None else _tuple(stride, d, "stride", name, 1)
    dilation = _tuple(dilation, d, "dilation", name, 1)
    padding = _tuple(padding, d, "padding", name, 0)
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise ValueError(f"{name}: padding {padding} must be at most half the kernel "
                         f"size {kernel}")
    pads = tuple((p, p) for p in padding)
    _check_fits(name, x_shape, kernel, dilation, pads)
    return dict(kernel=kernel, stride=stride, pads=pads, dilation=dilation)


# ---------------------------------------------------------------------------------------
# Pooling: windows as columns, and their adjoint
# ---------------------------------------------------------------------------------------

@op("unfold")
def _unfold(x, kernel, stride, pads, dilation, fill=0.0):
    # (..., K, N, C, *out): the K taps of each window in front, so that a reduction over
    # them runs over long contiguous rows (over a short last axis NumPy is slow)
    view = _windows(xp.as_array(x), kernel, stride, pads, dilation, fill)
    d = len(kernel)
    n_lead = view.ndim - 2 * d - 2
    order = (tuple(range(n_lead)) + tuple(range(view.ndim - d, view.ndim))
             + tuple(range(n_lead, view.ndim - d)))
    taps = xp.permute_dims(view, order)
    return taps.reshape(taps.shape[:n_lead] + (math.prod(kernel),) + taps.shape[n_lead + d:])


@op("fold")
def _fold(cols, size, kernel, stride, pads, dilation):
    # every window added back where it was read: one strided slice per kernel tap
    cols = xp.as_array(cols)
    d = len(kernel)
    out = cols.shape[-d:]
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(size, pads))
    lead = cols.shape[:-d - 3]
    cols = cols.reshape(lead + tuple(kernel) + cols.shape[-d - 2:])
    total = xp.owned_by(xp.zeros(lead + cols.shape[-d - 2:-d] + padded, cols.dtype), cols)
    for tap in itertools.product(*(range(k) for k in kernel)):
        where = tuple(slice(i * dl, i * dl + s * (o - 1) + 1, s)
                      for i, dl, s, o in zip(tap, dilation, stride, out))
        total[(Ellipsis,) + where] += cols[(Ellipsis,) + tap + (slice(None),) * (d + 2)]
    return _pad_or_crop(total, tuple((-lo, -hi) for lo, hi in pads))


# Both linear, each the other's adjoint; the padding's fill is a constant.
_unfold.defvjp(lambda g, ans, x, kernel, stride, pads, dilation, fill=0.0:
               _fold(g, _spatial(x, len(kernel)), kernel, stride, pads, dilation))
_unfold.defjvp(lambda t, ans, x, kernel, stride, pads, dilation, fill=0.0:
               _unfold(t, kernel, stride, pads, dilation))
_fold.defvjp(lambda g, ans, cols, size, kernel, stride, pads, dilation:
             _unfold(g, kernel, stride, pads, dilation))
_fold.defjvp(lambda t, ans, cols, size, kernel, stride, pads, dilation:
             _fold(t, size, kernel, stride, pads, dilation))


@op("max_pool")
def _max_pool(x, kernel, stride, pads, dilation):
    # the max of the K strided views of the taps, one elementwise maximum each: no copy
    # of the windows, and no reduction over a short axis
    view = _windows(xp.as_array(x), kernel, stride, pads, dilation, -xp.inf)
    taps = [view[(Ellipsis,) + tap] for tap in itertools.product(*(range(k) for k in kernel))]
    out = taps[0] if len(taps) == 1 else xp.maximum(taps[0], taps[1])
    for tap in taps[2:]:
        out = xp.maximum(out, tap)
    return out


def _winners(x, ans, kernel, stride, pads, dilation):
    """(..., K, N, C, *out): each window's share of its gradient, 1 / (the number of tied
    maxima) at each maximum and 0 elsewhere; in x's float dtype. Piecewise constant."""
    taps = _unfold(raw(x), kernel, stride, pads, dilation, -xp.inf)  # (under vmap, a batch)
    axis = -len(kernel) - 3
    hit = taps == xp.expand_dims(raw(ans), axis)
    return hit / xp.sum(hit, axis=axis, keepdims=True, dtype=float_dtype(ans))


def _tap_axis(g, d):
    """g (..., N, C, *out) with an axis of 1 for the taps, as unfold's layout has it."""
    shape = shape_of(g)
    return reshape(g, shape[:len(shape) - d - 2] + (1,) + shape[len(shape) - d - 2:])


_max_pool.defvjp(lambda g, ans, x, kernel, stride, pads, dilation: _fold(
    _tap_axis(g, len(kernel)) * _winners(x, ans, kernel, stride, pads, dilation),
    _spatial(x, len(kernel)), kernel, stride, pads, dilation))
_max_pool.defjvp(lambda t, ans, x, kernel, stride, pads, dilation: _sum(
    _unfold(t, kernel, stride, pads, dilation)
    * _winners(x, ans, kernel, stride, pads, dilation), axis=-len(kernel) - 3))


def max_pool(x, kernel_size, stride=None, padding=0, dilation=1, d=2, name="max_pool"):
    """The largest entry of each window over x's last ``d`` axes (x: (N, C, *spatial)),
    PyTorch's max_pool1d/2d: padding counts as -inf, ``stride`` defaults to the kernel.

    Entries tied for a window's maximum share its gradient evenly (chainrule's
    convention for max; PyTorch gives it all to one).

    >>> x = cr.tensor([[[[1.0, 2.0], [2.0, 0.0]]]], requires_grad=True)
    >>> y = cr.rules.pooling.max_pool(x, 2)
    >>> y.data.tolist()
    [[[[2.0]]]]
    >>> y.sum().backward()
    >>> x.grad.tolist()                                       # a tie: half each
    [[[[0.0, 0.5], [0.5, 0.0]]]]
    """
    s = pool_arguments(name, shape_of(x), kernel_size, stride, padding, dilation, d)
    return _max_pool(x, **s)


def avg_pool(x, kernel_size, stride=None, padding=0, count_include_pad=True, d=2,
             name="avg_pool"):
    """The mean of each window over x's last ``d`` axes (x: (N, C, *spatial)), PyTorch's
    avg_pool1d/2d: padding adds zeros, which count in the mean unless
    ``count_include_pad=False``; ``stride`` defaults to the kernel.

    >>> x = cr.tensor(np.arange(4.0).reshape(1, 1, 2, 2))
    >>> cr.rules.pooling.avg_pool(x, 2).data.tolist()
    [[[[1.5]]]]
    """
    s = pool_arguments(name, shape_of(x), kernel_size, stride, padding, 1, d)
    total = _sum(_unfold(x, **s), axis=-d - 3)
    if count_include_pad or not any(lo or hi for lo, hi in s["pads"]):
        return total / math.prod(s["kernel"])
    ones = xp.ones((1,) * (len(shape_of(x)) - d) + _spatial(x, d), float_dtype(x))
    return total / xp.sum(_unfold.forward(ones, **s), axis=-d - 3)


def _bins(n, m, dtype):
    """The (m, n) matrix that averages n entries into m bins as PyTorch's adaptive pools
    do: bin i covers [floor(i n / m), ceil((i + 1) n / m))."""
    matrix = xp.zeros((m, n), dtype)
    for i in range(m):
        start, stop = (i * n) // m, -((-(i + 1) * n) // m)
        matrix[i, start:stop] = 1 / (stop - start)
    return matrix


def adaptive_avg_pool(x, output_size, d=2, name="adaptive_avg_pool"):
    """Averages over x's last ``d`` axes into ``output_size`` bins per axis (an int, or
    one per axis, None keeping the input's size), PyTorch's adaptive_avg_pool1d/2d. A
    linear map, one matrix per axis, so its derivatives are einsum's.

    >>> x = cr.tensor(np.arange(4.0).reshape(1, 1, 1, 4))
    >>> cr.rules.pooling.adaptive_avg_pool(x, (1, 2)).data.tolist()
    [[[[0.5, 2.5]]]]
    """
    _check_input(name, shape_of(x), d)
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * d
    spatial = _spatial(x, d)
    sizes = tuple(n if m is None else m for m, n in zip(sizes, spatial))
    if len(sizes) != d or not all(isinstance(m, int) and m >= 1 for m in sizes):
        raise ValueError(f"{name}: output_size must be a positive int or {d} of them, got "
                         f"{output_size!r}")
    letters = "abcdefghijklmnopqrstuvwxyz"
    ins, outs = letters[:d], letters[d:2 * d]
    matrices = [_bins(n, m, float_dtype(x)) for n, m in zip(spatial, sizes)]
    spec = ("..." + ins + "," + ",".join(o + i for i, o in zip(ins, outs))
            + "->..." + outs)
    return einsum(spec, x, *matrices)

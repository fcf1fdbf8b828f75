"""Pooling over the trailing spatial axes of (N, C, *spatial) arrays, with PyTorch's
meaning: windows with strides, padding and dilation, read through the strided view of
``convolution``'s im2col.

``unfold`` lays each window's taps along an axis, and ``fold`` (its adjoint) adds each
window back where it came from: two linear operations, each the other's VJP. Max
pooling's gradient is folded back to each window's maximum (tied entries share it,
chainrule's convention for max); average pooling is the mean of the unfolded windows;
adaptive average pooling is a linear map, one matrix per axis. The rest are made of
these and of the table's operations, so every derivative, of any order, vmap and jit
come with them: ``ceil_mode`` is more padding at the far end, adaptive max pooling a
max over each bin's entries gathered, power-average pooling PyTorch's formula over
average pooling, and unpooling a write at the indices. Indices are read from the
numbers (int64 arrays, no derivative).
"""

import itertools
import math

from .. import arrays as xp
from ..primitive import Box, raw, shape_of
from .common import float_dtype, op
from .contractions import einsum
from .convolution import _check_fits, _check_input, _pad_or_crop, _spatial, _tuple, _windows
from .elementwise import absolute, relu, sign
from .elementary import stop_gradient
from .indexing import getitem, index_add, index_set
from .predicates import all as _all, logical_and
from .reductions import max as _max, sum as _sum
from .shapes import reshape

__all__ = ["max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool", "lp_pool",
           "max_unpool", "pool_arguments"]


def pool_arguments(name, x_shape, kernel_size, stride=None, padding=0, dilation=1, d=2,
                   ceil_mode=False):
    """Pooling's settings checked against the input's shape: ``dict(kernel, stride, pads,
    dilation)``; ``stride`` None is the kernel size, as in PyTorch. Padding may be at most
    half the kernel (PyTorch's rule: a window of padding alone has no entry to pool).
    ``ceil_mode`` pads the far end further, so that a last partial window counts when
    it starts inside the input or its near padding (PyTorch's rule).

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
    if ceil_mode:
        pads = tuple((p, p + _ceil_extra(n, k, s, dl, p)) for n, k, s, dl, p in
                     zip(x_shape[2:], kernel, stride, dilation, padding))
    return dict(kernel=kernel, stride=stride, pads=pads, dilation=dilation)


def _ceil_extra(n, k, s, dl, p):
    """The padding past the far end that ceil_mode's last window needs."""
    span = dl * (k - 1) + 1
    out = -(-(n + 2 * p - span) // s) + 1
    if (out - 1) * s >= n + p:  # a window starting in the far padding is dropped
        out -= 1
    return max(0, (out - 1) * s + span - (n + 2 * p))


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


def max_pool(x, kernel_size, stride=None, padding=0, dilation=1, d=2, ceil_mode=False,
             return_indices=False, name="max_pool"):
    """The largest entry of each window over x's last ``d`` axes (x: (N, C, *spatial)),
    PyTorch's max_pool1d/2d/3d: padding counts as -inf, ``stride`` defaults to the kernel.
    ``return_indices=True`` gives ``(y, indices)`` too, each maximum's flat index (int64)
    in its (prod spatial) plane, as PyTorch's; a tie gives the first of the window.

    Entries tied for a window's maximum share its gradient evenly (chainrule's
    convention for max; PyTorch gives it all to one).

    >>> x = cr.tensor([[[[1.0, 2.0], [2.0, 0.0]]]], requires_grad=True)
    >>> y = cr.rules.pooling.max_pool(x, 2)
    >>> y.data.tolist()
    [[[[2.0]]]]
    >>> y.sum().backward()
    >>> x.grad.tolist()                                       # a tie: half each
    [[[[0.0, 0.5], [0.5, 0.0]]]]
    >>> cr.rules.pooling.max_pool(x, 2, return_indices=True)[1].tolist()
    [[[[1]]]]
    """
    s = pool_arguments(name, shape_of(x), kernel_size, stride, padding, dilation, d,
                       ceil_mode)
    y = _max_pool(x, **s)
    if not return_indices:
        return y
    return y, _first_maxima(raw(x), s, d)


def _first_maxima(x, s, d):
    """The flat index in its plane of each window's first maximum (int64, no derivative:
    read from the numbers, with any batch axes in front)."""
    spatial = shape_of(x)[-d:]
    plane = xp.arange(math.prod(spatial)).reshape((1, 1) + spatial)
    where = _unfold.forward(plane, **s, fill=-1)                 # (K, 1, 1, *out)
    first = xp.argmax(_unfold(x, **s, fill=-xp.inf), axis=-d - 3)  # (batched, under vmap)
    first = xp.expand_dims(first, -d - 3)                        # (..., 1, N, C, *out)
    where = xp.broadcast_to(where, first.shape[:-d - 3] + where.shape[:1]
                            + first.shape[-d - 2:])
    return xp.squeeze(xp.take_along_axis(where, first, axis=-d - 3), axis=-d - 3)


def avg_pool(x, kernel_size, stride=None, padding=0, count_include_pad=True, d=2,
             ceil_mode=False, divisor_override=None, name="avg_pool"):
    """The mean of each window over x's last ``d`` axes (x: (N, C, *spatial)), PyTorch's
    avg_pool1d/2d/3d: padding adds zeros, which count in the mean unless
    ``count_include_pad=False``; ``stride`` defaults to the kernel. With ``ceil_mode`` a
    last partial window divides by its entries within the padded input (PyTorch's
    rule); ``divisor_override`` divides every window's sum by that number instead.

    >>> x = cr.tensor(np.arange(4.0).reshape(1, 1, 2, 2))
    >>> cr.rules.pooling.avg_pool(x, 2).data.tolist()
    [[[[1.5]]]]
    >>> cr.rules.pooling.avg_pool(x, 2, divisor_override=1).data.tolist()
    [[[[6.0]]]]
    """
    if divisor_override is not None and (
            not isinstance(divisor_override, int) or isinstance(divisor_override, bool)
            or divisor_override == 0):
        raise ValueError(f"{name}: divisor_override must be a nonzero int or None, got "
                         f"{divisor_override!r}")
    s = pool_arguments(name, shape_of(x), kernel_size, stride, padding, 1, d, ceil_mode)
    total = _sum(_unfold(x, **s), axis=-d - 3)
    if divisor_override is not None:
        return total / divisor_override
    extra = tuple(hi - lo for lo, hi in s["pads"])
    if not any(extra) and (count_include_pad or not any(lo for lo, _ in s["pads"])):
        return total / math.prod(s["kernel"])
    # each window's count: the entries it covers of the input, and of the padding
    # unless count_include_pad=False, never of ceil_mode's extra
    ones = xp.ones((1, 1) + _spatial(x, d), float_dtype(x))
    near = tuple((lo, lo) for lo, _ in s["pads"])
    ones = _pad_or_crop(ones, near, 1.0 if count_include_pad else 0.0)
    counts = xp.sum(_unfold.forward(ones, s["kernel"], s["stride"],
                                    tuple((0, e) for e in extra), s["dilation"]),
                    axis=-d - 3)
    return total / counts


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
    spatial, sizes = _output_sizes(name, x, output_size, d)
    letters = "abcdefghijklmnopqrstuvwxyz"
    ins, outs = letters[:d], letters[d:2 * d]
    matrices = [_bins(n, m, float_dtype(x)) for n, m in zip(spatial, sizes)]
    spec = ("..." + ins + "," + ",".join(o + i for i, o in zip(ins, outs))
            + "->..." + outs)
    return einsum(spec, x, *matrices)


def _output_sizes(name, x, output_size, d):
    _check_input(name, shape_of(x), d)
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * d
    spatial = _spatial(x, d)
    sizes = tuple(sizes)
    if len(sizes) == d:
        sizes = tuple(n if m is None else m for m, n in zip(sizes, spatial))
    if len(sizes) != d or not all(isinstance(m, int) and not isinstance(m, bool)
                                  and m >= 1 for m in sizes):
        raise ValueError(f"{name}: output_size must be a positive int or {d} of them, got "
                         f"{output_size!r}")
    return spatial, sizes


def _bin_members(spatial, sizes):
    """(*sizes, L): the flat plane index of each entry of each adaptive bin, a bin
    shorter than L repeating its first entry (a repeat changes no maximum, and the
    gradient its copies share goes back to the one entry)."""
    per_axis = []
    for n, m in zip(spatial, sizes):
        bounds = [((i * n) // m, -((-(i + 1) * n) // m)) for i in range(m)]
        width = max(stop - start for start, stop in bounds)
        rows = [[start + min(j, stop - start - 1) for j in range(width)]
                for start, stop in bounds]
        per_axis.append(xp.asarray(rows))
    members = xp.zeros((1,) * len(spatial) * 2, dtype=xp.int64)
    for axis, rows in enumerate(per_axis):
        d = len(spatial)
        shape = [1] * (2 * d)
        shape[axis], shape[d + axis] = rows.shape
        members = members * spatial[axis] + rows.reshape(shape)
    return members.reshape(sizes + (-1,))


def adaptive_max_pool(x, output_size, d=2, return_indices=False, name="adaptive_max_pool"):
    """The largest entry of each adaptive bin over x's last ``d`` axes (bins as
    ``adaptive_avg_pool``'s), PyTorch's adaptive_max_pool1d/2d/3d; ``return_indices=True``
    gives ``(y, indices)`` too, each maximum's flat index (int64) in its plane. Entries
    tied for a bin's maximum share its gradient evenly.

    >>> x = cr.tensor(np.array([[[3.0, 1.0, 4.0, 1.0, 5.0]]]))
    >>> y, i = cr.rules.pooling.adaptive_max_pool(x, 2, d=1, return_indices=True)
    >>> y.data.tolist(), i.tolist()                            # [0, 3) and [2, 5)
    ([[[4.0, 5.0]]], [[[2, 4]]])
    """
    spatial, sizes = _output_sizes(name, x, output_size, d)
    members = _bin_members(spatial, sizes)
    shape = shape_of(x)
    flat = reshape(x, shape[:len(shape) - d] + (math.prod(spatial),))
    gathered = getitem(flat, index=(Ellipsis, members))
    y = _max(gathered, axis=-1)
    if not return_indices:
        return y
    first = xp.argmax(raw(gathered), axis=-1)
    return y, xp.take_along_axis(xp.broadcast_to(members, first.shape + members.shape[-1:]),
                                 first[..., None], axis=-1)[..., 0]


def lp_pool(x, norm_type, kernel_size, stride=None, ceil_mode=False, d=2, name="lp_pool"):
    """PyTorch's power-average pooling lp_pool1d/2d/3d: (sum of x**p over each window)
    ** (1/p), computed as PyTorch does, from the window's mean (with ``ceil_mode``'s
    divisor) times the kernel's size, a negative mean taken as 0; p = ±inf is the
    max (min) of |x|.

    >>> x = cr.tensor(np.array([[[3.0, 4.0]]]))
    >>> cr.rules.pooling.lp_pool(x, 2, 2, d=1).data.tolist()
    [[[5.0]]]
    """
    if norm_type == math.inf:
        return max_pool(absolute(x), kernel_size, stride, 0, 1, d, ceil_mode, name=name)
    if norm_type == -math.inf:
        return -max_pool(-absolute(x), kernel_size, stride, 0, 1, d, ceil_mode, name=name)
    kernel = _tuple(kernel_size, d, "kernel_size", name, 1)
    out = avg_pool(x ** norm_type, kernel, stride, 0, True, d, ceil_mode, name=name)
    return (sign(out) * relu(absolute(out)) * math.prod(kernel)) ** (1.0 / norm_type)


def max_unpool(y, indices, kernel_size, stride=None, padding=0, output_size=None, d=2,
               name="max_unpool"):
    """PyTorch's max_unpool1d/2d/3d, max pooling's partial inverse: zeros of the
    ``output_size`` (by default (n - 1) stride - 2 padding + kernel per axis), with
    each entry of y (N, C, *spatial) written at its flat ``indices`` in its plane;
    the gradient reads back at the indices (each entry that of its place, as PyTorch's,
    also where overlapping windows repeat an index).

    >>> y, i = cr.rules.pooling.max_pool(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2, d=1,
    ...                                  return_indices=True)
    >>> cr.rules.pooling.max_unpool(y, i, 2, d=1).tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """
    shape = shape_of(y)
    _check_input(name, shape, d)
    kernel = _tuple(kernel_size, d, "kernel_size", name, 1)
    stride = kernel if stride is None else _tuple(stride, d, "stride", name, 1)
    padding = _tuple(padding, d, "padding", name, 0)
    default = tuple((n - 1) * s - 2 * p + k
                    for n, s, p, k in zip(shape[2:], stride, padding, kernel))
    if output_size is None:
        size = default
    else:
        size = tuple(output_size)[-d:] if len(output_size) == d + 2 else tuple(output_size)
        if len(size) != d:
            raise ValueError(f"{name}: output_size {tuple(output_size)} has "
                             f"{len(output_size)} entries, expected {d} or {d + 2}")
        for n, low, s in zip(size, default, stride):
            if not low - s < n < low + s:
                raise ValueError(f"{name}: output_size {tuple(output_size)} is not within "
                                 f"the stride of the default {default}")
    if any(n <= 0 for n in size):
        raise ValueError(f"{name}: output size {size} from input {shape}, expected "
                         f"positive sizes")
    indices = raw(indices)
    if not isinstance(indices, Box):  # (a list; cr.jit's traced array stays one)
        indices = xp.as_array(indices)
    if shape_of(indices) != shape or indices.dtype.kind not in "iu":
        raise ValueError(f"{name}: indices of shape {shape_of(indices)} and dtype "
                         f"{indices.dtype}, expected integers of the input's shape {shape}")
    plane = math.prod(size)
    if type(indices) is xp.ndarray:  # numbers known now
        if indices.size and (indices.min() < 0 or indices.max() >= plane):
            raise ValueError(f"{name}: indices run from {indices.min()} to "
                             f"{indices.max()}, expected them within the output plane of "
                             f"{plane} entries")
    else:  # numbers a transform traces (vmap, cr.jit): checked when they exist (an index
        # outside the plane would wrap round to another place)
        xp.require(_all(logical_and(indices >= 0, indices < plane)), _outside_plane,
                   name, plane)
    n, c = shape[:2]
    lead = shape[:2] + (-1,)
    at = (Ellipsis, xp.arange(n).reshape(n, 1, 1), xp.arange(c).reshape(1, c, 1),
          reshape(indices, lead))
    zeros = xp.zeros(shape[:2] + (plane,), float_dtype(y))
    flat = reshape(y, lead)
    # PyTorch's derivatives: each entry reads the gradient of its place, even where
    # overlapping windows repeat an index (their entries are equal: the value is one of
    # them, the adjoint that of adding them)
    added = index_add(zeros, flat, index=at)
    out = added - stop_gradient(added - index_set(zeros, flat, index=at))
    return reshape(out, shape[:2] + size)


def _outside_plane(name, plane):
    return ValueError(f"{name}: an index lies outside the output plane of {plane} entries")

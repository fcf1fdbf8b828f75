"""Convolution over the trailing spatial axes of (N, C, *spatial) arrays,
with PyTorch's meaning: a cross-correlation, zero padding, strides, dilation, groups.

The convolution is bilinear, and so are its two adjoints; three operations close the
table under differentiation, each one's rules written with the other two:

    conv(x, w)                y, the correlation of x with w
    conv_input_grad(g, w)     dx: g correlated back through w (a transposed convolution)
    conv_weight_grad(x, g)    dw: x correlated with g

All three are one trilinear form <g, conv(x, w)> read three ways, so the VJP of each in
each argument is one of the three, and the JVP of each is itself with the tangent in
that argument's place: derivatives of any order, forward and reverse.

Every operand may carry extra leading axes (a batch of tangents or cotangents, as
jacfwd and jacrev push through the rules), which broadcast like NumPy's: the forward
passes keep them in front, and the engine sums a VJP back to its input's shape.

PyTorch's transposed convolution is conv_input_grad as an operation of its own
(``conv_transpose``): its settings name the convolution it transposes, and its output
size is that convolution's input size, so it inherits the three rules as they are.

The columns of im2col are a strided view of the padded input (``xp.sliding_window_view``,
then a step of ``stride`` and ``dilation``); one copy puts them in matmul's order, and one
batched matmul does the arithmetic. Pooling (``pooling.py``) reads the same windows.
"""

import math

from .. import arrays as xp
from ..primitive import shape_of
from .common import op

__all__ = ["conv", "conv_arguments", "conv_transpose", "conv_transpose_arguments"]


# ---------------------------------------------------------------------------------------
# Arguments: ints or tuples, "same"/"valid", checked once with the shapes
# ---------------------------------------------------------------------------------------

def _tuple(value, d, what, name, lowest):
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
    if len(values) != d or not all(isinstance(v, int) and not isinstance(v, bool)
                                   and v >= lowest for v in values):
        raise ValueError(f"{name}: {what} must be an int >= {lowest} or {d} of them, "
                         f"got {value!r}")
    return values


def _check_input(name, x_shape, d):
    if len(x_shape) != d + 2:
        spatial = ", ".join("HW"[-d:] if d <= 2 else [f"S{i}" for i in range(d)])
        raise ValueError(f"{name}: input of shape {x_shape}, expected (N, C, {spatial})")


def conv_arguments(name, x_shape, w_shape, stride=1, padding=0, dilation=1, groups=1):
    """The convolution's settings checked against the shapes, as the operation takes them:
    ``dict(stride, pads, dilation, groups)``, ``pads`` a (before, after) pair per spatial
    axis. A ValueError (one line, naming ``name`` and the shapes) where they do not fit.

    >>> cr.rules.convolution.conv_arguments("conv2d", (1, 3, 8, 8), (4, 3, 3, 3),
    ...                                     padding="same")["pads"]
    ((1, 1), (1, 1))
    """
    d = len(w_shape) - 2
    if d < 1:
        raise ValueError(f"{name}: weight of shape {w_shape}, expected (out_channels, "
                         f"in_channels / groups, *kernel)")
    _check_input(name, x_shape, d)
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    channels, out_channels = x_shape[1], w_shape[0]
    if channels % groups or out_channels % groups:
        raise ValueError(f"{name}: groups={groups} must divide the input's {channels} "
                         f"channels and the weight's {out_channels} output channels "
                         f"(input {x_shape}, weight {w_shape})")
    if w_shape[1] * groups != channels:
        raise ValueError(f"{name}: input of shape {x_shape} has {channels} channels, but "
                         f"the weight of shape {w_shape} with groups={groups} expects "
                         f"{w_shape[1] * groups}")
    stride = _tuple(stride, d, "stride", name, 1)
    dilation = _tuple(dilation, d, "dilation", name, 1)
    kernel = tuple(w_shape[2:])
    pads = _pads(name, padding, d, kernel, stride, dilation)
    _check_fits(name, x_shape, kernel, dilation, pads)
    return dict(stride=stride, pads=pads, dilation=dilation, groups=groups)


def _pads(name, padding, d, kernel, stride, dilation):
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * d
        if padding != "same":
            raise ValueError(f"{name}: padding must be an int, a tuple, 'same' or "
                             f"'valid', got {padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{name}: padding='same' needs stride 1, got stride {stride}")
        # an even extent cannot be centred: the extra row goes after, as PyTorch does
        totals = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in _tuple(padding, d, "padding", name, 0))


def _check_fits(name, x_shape, kernel, dilation, pads):
    for axis, (n, k, dl, (lo, hi)) in enumerate(zip(x_shape[2:], kernel, dilation, pads)):
        extent = dl * (k - 1) + 1
        if extent > n + lo + hi:
            raise ValueError(f"{name}: kernel of size {tuple(kernel)} (dilation "
                             f"{tuple(dilation)}) spans {extent} along spatial axis {axis}, "
                             f"more than the padded input's {n + lo + hi} (input "
                             f"{tuple(x_shape)}, padding {tuple(pads)}); expected a kernel "
                             f"no larger than the padded input")


# ---------------------------------------------------------------------------------------
# Windows: the strided view behind im2col
# ---------------------------------------------------------------------------------------

def _pad_or_crop(x, pads, fill=0):
    """x padded with ``fill`` over its last len(pads) axes; a negative pad crops."""
    d = len(pads)
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        index = (Ellipsis,) + tuple(slice(max(-lo, 0), n - max(-hi, 0))
                                    for (lo, hi), n in zip(pads, shape_of(x)[-d:]))
        x = x[index]
        pads = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    if any(lo or hi for lo, hi in pads):
        x = xp.pad(x, [(0, 0)] * (x.ndim - d) + list(pads), constant_values=fill)
    return x


def _windows(x, kernel, stride, pads, dilation, fill=0):
    """The view (..., *out, *kernel) of x's windows over its last len(kernel) axes."""
    d = len(kernel)
    x = _pad_or_crop(x, pads, fill)
    extent = tuple(dl * (k - 1) + 1 for k, dl in zip(kernel, dilation))
    view = xp.sliding_window_view(x, extent, axis=tuple(range(x.ndim - d, x.ndim)))
    steps = tuple(slice(None, None, s) for s in stride)
    taps = tuple(slice(None, None, dl) for dl in dilation)
    if any(s > 1 for s in stride) or any(dl > 1 for dl in dilation):
        view = view[(Ellipsis,) + steps + taps]
    return view


def _columns(x, kernel, stride, pads, dilation, groups, order):
    """im2col: x's windows grouped, (..., N, G, Cg, *out, *kernel) permuted by ``order``
    (a function of the axis numbers of those groups) and copied."""
    d = len(kernel)
    view = _windows(x, kernel, stride, pads, dilation)
    shape = view.shape
    n_lead = len(shape) - 2 * d - 1
    channels = shape[n_lead]
    view = view.reshape(shape[:n_lead] + (groups, channels // groups) + shape[n_lead + 1:])
    lead = tuple(range(n_lead - 1))
    axes = dict(n=n_lead - 1, g=n_lead, c=n_lead + 1,
                out=tuple(range(n_lead + 2, n_lead + 2 + d)),
                kernel=tuple(range(n_lead + 2 + d, n_lead + 2 + 2 * d)))
    return xp.permute_dims(view, lead + order(axes)), shape[n_lead + 1:n_lead + 1 + d]


# ---------------------------------------------------------------------------------------
# The three operations
# ---------------------------------------------------------------------------------------

def _conv_forward(x, w, stride, pads, dilation, groups):
    x, w = xp.as_array(x), xp.as_array(w)
    d = len(stride)
    kernel = tuple(w.shape[-d:])
    cols, out = _columns(x, kernel, stride, pads, dilation, groups,
                         lambda a: (a["n"], a["g"], a["c"]) + a["kernel"] + a["out"])
    size_k, size_out = math.prod(kernel) * cols.shape[-2 * d - 1], math.prod(out)
    cols = cols.reshape(cols.shape[:-2 * d - 1] + (size_k, size_out))  # the im2col copy
    out_channels = w.shape[-d - 2]
    w = w.reshape(w.shape[:-d - 2] + (1, groups, out_channels // groups, size_k))
    y = xp.matmul(w, cols)  # (..., N, G, Cout/G, out)
    return y.reshape(y.shape[:-3] + (out_channels,) + out)


def _conv_weight_grad(x, g, kernel, stride, pads, dilation, groups):
    x, g = xp.as_array(x), xp.as_array(g)
    d = len(stride)
    # the forward's columns (..., N, G, Cin/G * kernel, out), against g (..., N, G,
    # Cout/G, out) as it is: a matmul per image (reading the columns transposed, without
    # a copy), then the sum over the images
    cols, out = _columns(x, kernel, stride, pads, dilation, groups,
                         lambda a: (a["n"], a["g"], a["c"]) + a["kernel"] + a["out"])
    per_group = cols.shape[-2 * d - 1]
    cols = cols.reshape(cols.shape[:-2 * d - 1] + (per_group * math.prod(kernel),
                                                   math.prod(out)))
    out_channels = g.shape[-d - 1]
    g = g.reshape(g.shape[:-d - 1] + (groups, out_channels // groups, math.prod(out)))
    dw = xp.sum(xp.matmul(g, xp.swapaxes(cols, -1, -2)), axis=-4)  # (..., G, Cout/G, .)
    return dw.reshape(dw.shape[:-3] + (out_channels, per_group) + tuple(kernel))


def _dilate(g, axis, step):
    """g with step - 1 zeros between its entries along ``axis`` (counted from the end)."""
    n = g.shape[axis]
    g = xp.expand_dims(g, axis)  # a new axis after the old one: (..., n, 1, ...)
    widths = [(0, 0)] * g.ndim
    widths[axis] = (0, step - 1)
    g = xp.pad(g, widths)
    shape = list(g.shape)
    shape[axis - 1:axis + 1 or None] = [n * step]
    g = g.reshape(tuple(shape))
    index = [slice(None)] * g.ndim
    index[axis] = slice(0, (n - 1) * step + 1)
    return g[tuple(index)]


def _conv_input_grad(g, w, size, stride, pads, dilation, groups):
    # dx is the full correlation of g (zeros between its entries, one gap per stride)
    # with w flipped and its channel axes swapped within each group; the rows the
    # forward never reached (a stride that does not divide) get padding of their own.
    g, w = xp.as_array(g), xp.as_array(w)
    d = len(stride)
    kernel = tuple(w.shape[-d:])
    out = g.shape[-d:]
    for i, step in enumerate(stride):
        if step > 1:
            g = _dilate(g, i - d, step)
    new_pads = []
    for n, k, s, dl, (lo, hi), o in zip(size, kernel, stride, dilation, pads, out):
        extent = dl * (k - 1) + 1
        unreached = n + lo + hi - (s * (o - 1) + extent)
        new_pads.append((extent - 1 - lo, extent - 1 - hi + unreached))
    out_channels, per_group = w.shape[-d - 2], w.shape[-d - 1]
    w = w.reshape(w.shape[:-d - 2] + (groups, out_channels // groups, per_group) + kernel)
    n = w.ndim - d - 3
    w = xp.permute_dims(w, tuple(range(n)) + (n, n + 2, n + 1) +
                        tuple(range(n + 3, w.ndim)))
    w = w.reshape(w.shape[:n] + (groups * per_group, out_channels // groups) + kernel)
    w = w[(Ellipsis,) + (slice(None, None, -1),) * d]
    return _conv_forward(g, w, (1,) * d, tuple(new_pads), dilation, groups)


@op("conv")
def _conv(x, w, stride, pads, dilation, groups):
    return _conv_forward(x, w, stride, pads, dilation, groups)


@op("conv_input_grad")
def _conv_input(g, w, size, stride, pads, dilation, groups):
    return _conv_input_grad(g, w, size, stride, pads, dilation, groups)


@op("conv_weight_grad")
def _conv_weight(x, g, kernel, stride, pads, dilation, groups):
    return _conv_weight_grad(x, g, kernel, stride, pads, dilation, groups)


def _spatial(x, d):
    return tuple(shape_of(x)[-d:])


# <h, conv(x, w)>: x's gradient is h correlated back through w, w's is x against h.
_conv.defvjp(
    lambda g, ans, x, w, **s: _conv_input(g, w, size=_spatial(x, len(s["stride"])), **s),
    lambda g, ans, x, w, **s: _conv_weight(x, g, kernel=_spatial(w, len(s["stride"])), **s))
_conv.defjvp(lambda t, ans, x, w, **s: _conv(t, w, **s),
             lambda t, ans, x, w, **s: _conv(x, t, **s))

# dx = conv_input_grad(g, w) is <dx, h> = <g, conv(h, w)>: its gradient in g is conv(h, w),
# in w the weight gradient of h against g.
_conv_input.defvjp(
    lambda h, ans, g, w, size, **s: _conv(h, w, **s),
    lambda h, ans, g, w, size, **s: _conv_weight(h, g, kernel=_spatial(w, len(size)), **s))
_conv_input.defjvp(lambda t, ans, g, w, size, **s: _conv_input(t, w, size=size, **s),
                   lambda t, ans, g, w, size, **s: _conv_input(g, t, size=size, **s))

# dw = conv_weight_grad(x, g) is <dw, h> = <g, conv(x, h)>.
_conv_weight.defvjp(
    lambda h, ans, x, g, kernel, **s: _conv_input(g, h, size=_spatial(x, len(kernel)), **s),
    lambda h, ans, x, g, kernel, **s: _conv(x, h, **s))
_conv_weight.defjvp(lambda t, ans, x, g, kernel, **s: _conv_weight(t, g, kernel=kernel, **s),
                    lambda t, ans, x, g, kernel, **s: _conv_weight(x, t, kernel=kernel, **s))


def conv(x, w, stride=1, padding=0, dilation=1, groups=1, name="conv"):
    """The convolution of x (N, C_in, *spatial) with w (C_out, C_in / groups, *kernel):
    PyTorch's conv1d/conv2d/conv3d, a cross-correlation (the kernel is not flipped).

    ``stride``, ``padding`` (zeros; an int, a tuple, ``"same"`` or ``"valid"``) and
    ``dilation`` are ints or one per spatial axis; ``groups`` splits the channels into
    independent convolutions. Differentiable in x and w to any order.

    >>> x = cr.tensor(np.arange(5.0).reshape(1, 1, 5))       # (N, C, L)
    >>> w = cr.tensor([[[1.0, 0.0, -1.0]]], requires_grad=True)
    >>> y = cr.rules.convolution.conv(x, w)                  # x[i] - x[i + 2]
    >>> y.data.tolist()
    [[[-2.0, -2.0, -2.0]]]
    >>> y.sum().backward()
    >>> w.grad.tolist()                                      # sums of x's windows
    [[[3.0, 6.0, 9.0]]]
    """
    settings = conv_arguments(name, shape_of(x), shape_of(w), stride, padding, dilation,
                              groups)
    return _conv(x, w, **settings)


# ---------------------------------------------------------------------------------------
# The transposed convolution: conv_input_grad read as an operation of its own
# ---------------------------------------------------------------------------------------

def conv_transpose_arguments(name, x_shape, w_shape, stride=1, padding=0,
                             output_padding=0, groups=1, dilation=1):
    """The transposed convolution's settings checked against the shapes, as
    ``conv_input_grad`` takes them: ``dict(size, stride, pads, dilation, groups)``, where
    ``size`` is the output's spatial shape and ``pads`` are those of the convolution it
    transposes. A ValueError (one line, naming ``name`` and the shapes) where they do not
    fit.

    >>> cr.rules.convolution.conv_transpose_arguments("conv_transpose1d", (1, 2, 4),
    ...                                               (2, 3, 3), stride=2)["size"]
    (9,)
    """
    d = len(w_shape) - 2
    if d < 1:
        raise ValueError(f"{name}: weight of shape {w_shape}, expected (in_channels, "
                         f"out_channels / groups, *kernel)")
    _check_input(name, x_shape, d)
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    if x_shape[1] != w_shape[0]:
        raise ValueError(f"{name}: input of shape {x_shape} has {x_shape[1]} channels, but "
                         f"the weight of shape {w_shape} expects {w_shape[0]} (its layout "
                         f"is (in_channels, out_channels / groups, *kernel))")
    if w_shape[0] % groups:
        raise ValueError(f"{name}: groups={groups} must divide the input's {w_shape[0]} "
                         f"channels (input {x_shape}, weight {w_shape})")
    if isinstance(padding, str):
        raise ValueError(f"{name}: padding must be an int or {d} of them, got {padding!r}")
    stride = _tuple(stride, d, "stride", name, 1)
    dilation = _tuple(dilation, d, "dilation", name, 1)
    padding = _tuple(padding, d, "padding", name, 0)
    extra = _tuple(output_padding, d, "output_padding", name, 0)
    if any(e >= s and e >= dl for e, s, dl in zip(extra, stride, dilation)):
        raise ValueError(f"{name}: output_padding {extra} must be smaller than the stride "
                         f"{stride} or the dilation {dilation} along each axis")
    kernel = tuple(w_shape[2:])
    size = tuple((n - 1) * s - 2 * p + dl * (k - 1) + e + 1 for n, k, s, p, dl, e
                 in zip(x_shape[2:], kernel, stride, padding, dilation, extra))
    if any(n < 1 for n in size):
        raise ValueError(f"{name}: input of shape {x_shape} with a weight of shape "
                         f"{w_shape}, stride {stride}, padding {padding}, dilation "
                         f"{dilation} and output_padding {extra} gives an output of size "
                         f"{size}; expected every size positive")
    # The convolution this one transposes maps ``size`` back onto the input's shape. An
    # output_padding of a stride or more (allowed below the dilation) adds whole strides
    # that convolution would read: its high side is cropped by them instead, which keeps
    # the output and makes the operands' shapes agree in every derivative.
    pads = tuple((p, p - s * (e // s)) for p, s, e in zip(padding, stride, extra))
    return dict(size=size, stride=stride, pads=pads, dilation=dilation, groups=groups)


def conv_transpose(x, w, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                   name="conv_transpose"):
    """The transposed convolution of x (N, C_in, *spatial) with w (C_in, C_out / groups,
    *kernel): PyTorch's conv_transpose1d/2d/3d, the gradient of ``conv`` in its input,
    so that ``conv_transpose(conv(x, w), w)`` has x's shape when the stride divides.

    Each output size is ``(n - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1``: ``padding`` (ints) crops the full result, ``output_padding``
    (below the stride or the dilation) adds rows at the end. Differentiable in x and w
    to any order, forward and reverse.

    >>> x = cr.tensor([[[1.0, 2.0]]])                          # (N, C_in, L)
    >>> w = cr.tensor([[[1.0, 10.0, 100.0]]])                  # (C_in, C_out, k)
    >>> cr.rules.convolution.conv_transpose(x, w, stride=2).data.tolist()
    [[[1.0, 10.0, 102.0, 20.0, 200.0]]]
    """
    settings = conv_transpose_arguments(name, shape_of(x), shape_of(w), stride, padding,
                                        output_padding, groups, dilation)
    return _conv_input(x, w, **settings)

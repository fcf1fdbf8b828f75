"""scipy.signal's convolve and correlate (n-dimensional, in the modes full, valid and
same), convolve2d and correlate2d (with their boundaries), fftconvolve and detrend,
differentiable in every array input (each is linear in each).

    >>> import chainrule.scipy.signal as signal
    >>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]

Every mode is a window of the full convolution, and the full convolution's VJP in one
input is the full convolution of the gradient with the other input flipped, in the
window where they overlap: so the rules are written with this one operation, and the
derivatives of any order follow.
"""

from numbers import Number

import numpy as np
import scipy.signal as _signal

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Primitive, raw, shape_of

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend"]


def _full(a, v):
    # (through the array namespace's call, so that cr.jit records it in its program)
    return xp.call(lambda a, v: _signal.convolve(a, v, mode="full"), a, v)


_convolve_full = Primitive(_full, "convolve")


def _flipped(x):
    return ops.flip(x) if len(shape_of(x)) else x


def _window(x, starts, shape):
    """The block of x starting at ``starts`` with ``shape``."""
    return x[tuple(slice(s, s + n) for s, n in zip(starts, shape))]


def _overlap_vjp(g, other, mine):
    """d/d(mine) of sum(g * (mine conv other)): g convolved with other flipped, in the
    window of mine's shape where other overlaps it fully."""
    full = _convolve_full(g, _flipped(other))
    starts = [n - 1 for n in shape_of(other)]
    return _window(full, starts, shape_of(mine))


_convolve_full.defvjp(lambda g, ans, a, v: _overlap_vjp(g, v, a),
                      lambda g, ans, a, v: _overlap_vjp(g, a, v))
_convolve_full.defjvp(lambda t, ans, a, v: _convolve_full(t, v),
                      lambda t, ans, a, v: _convolve_full(a, t))


def convolve(in1, in2, mode="full", method="auto"):
    """The n-dimensional convolution of in1 and in2, as scipy.signal.convolve: ``full``
    (every overlap), ``valid`` (where one lies wholly inside the other) or ``same`` (the
    size of in1, centred).

    >>> import chainrule.scipy.signal as signal
    >>> cr.grad(lambda v: cr.sum(signal.convolve(np.ones(4), v, mode="valid")))(np.ones(2))
    array([3., 3.])
    """
    a, v = shape_of(in1), shape_of(in2)
    if len(a) != len(v):
        raise ValueError(f"convolve: in1 and in2 must have the same number of dimensions, "
                         f"got shapes {a} and {v}")
    full = _convolve_full(in1, in2)
    if mode == "full":
        return full
    if mode == "valid":
        if not (all(m >= n for m, n in zip(a, v)) or all(n >= m for m, n in zip(a, v))):
            raise ValueError(f"convolve: in mode 'valid' one input must be at least as "
                             f"large as the other in every dimension, got shapes {a} and {v}")
        shape = tuple(abs(m - n) + 1 for m, n in zip(a, v))
    elif mode == "same":
        shape = a
    else:
        raise ValueError(f"convolve: mode must be 'full', 'valid' or 'same', got {mode!r}")
    full_shape = shape_of(full)
    return _window(full, [(f - n) // 2 for f, n in zip(full_shape, shape)], shape)


def correlate(in1, in2, mode="full", method="auto"):
    """The n-dimensional cross-correlation of in1 and in2, as scipy.signal.correlate:
    the convolution of in1 with in2 flipped along every axis.

    >>> import chainrule.scipy.signal as signal
    >>> signal.correlate(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), mode="valid").tolist()
    [3.0, 5.0]
    """
    return convolve(in1, _flipped(in2), mode=mode)


_BOUNDARIES = {"fill": None, "wrap": "wrap", "symm": "symmetric"}


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-d convolution of in1 and in2, as scipy.signal.convolve2d: in1 extended
    past its edges by ``boundary``, ``fill`` (with ``fillvalue``), ``wrap`` (periodic)
    or ``symm`` (mirrored, the edge repeated).

    >>> import chainrule.scipy.signal as signal
    >>> signal.convolve2d(np.eye(2), np.ones((1, 2)), boundary="wrap").tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    a, v = shape_of(in1), shape_of(in2)
    if len(a) != 2 or len(v) != 2:
        raise ValueError(f"convolve2d: in1 and in2 must be 2-d, got shapes {a} and {v}")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"convolve2d: boundary must be 'fill', 'wrap' or 'symm', "
                         f"got {boundary!r}")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"convolve2d: mode must be 'full', 'valid' or 'same', got {mode!r}")
    # (in valid mode no entry reaches past an edge; a zero fill differentiated stays in
    # the formula below, whose derivative in it is not zero)
    if mode == "valid" or (boundary == "fill" and isinstance(fillvalue, Number)
                           and fillvalue == 0):
        return convolve(in1, in2, mode=mode)
    if boundary == "fill":
        # in1 extended with c is (in1 - c) extended with 0, plus c everywhere: the
        # convolution's every entry gains c * sum(in2)
        return convolve(in1 - fillvalue, in2, mode=mode) + fillvalue * ops.sum(in2)
    # the full convolution of in1 extended by the boundary, its window as the mode says
    extended = ops.pad(in1, [(n - 1, n - 1) for n in v], mode=_BOUNDARIES[boundary])
    full = convolve(extended, in2, mode="valid")
    if mode == "full":
        return full
    return _window(full, [(f - n) // 2 for f, n in zip(shape_of(full), a)], a)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-d cross-correlation of in1 and in2, as scipy.signal.correlate2d: the
    convolution with in2 flipped (and conjugated), in1 extended by ``boundary``.

    >>> import chainrule.scipy.signal as signal
    >>> signal.correlate2d(np.eye(2), np.array([[1.0, 2.0]]), mode="valid").tolist()
    [[1.0], [2.0]]
    """
    if len(shape_of(in2)) != 2:
        raise ValueError(f"correlate2d: in2 must be 2-d, got shape {shape_of(in2)}")
    flipped = _flipped(ops.conj(in2))
    if mode == "same":  # scipy centres a correlation's window half an entry later
        full = convolve2d(in1, flipped, "full", boundary, fillvalue)
        return _window(full, [(f - n + 1) // 2 for f, n in zip(shape_of(full), shape_of(in1))],
                       shape_of(in1))
    return convolve2d(in1, flipped, mode, boundary, fillvalue)


def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of in1 and in2 over ``axes`` (all of them by default), as
    scipy.signal.fftconvolve; along the other axes the two broadcast. The numbers are
    those of a direct convolution, which agree with an FFT's to rounding.

    >>> import chainrule.scipy.signal as signal
    >>> signal.fftconvolve(np.ones((2, 3)), np.array([[1.0, -1.0]]), axes=1).tolist()
    [[1.0, 0.0, 0.0, -1.0], [1.0, 0.0, 0.0, -1.0]]
    """
    a, v = shape_of(in1), shape_of(in2)
    if len(a) != len(v):
        raise ValueError(f"fftconvolve: in1 and in2 must have the same number of "
                         f"dimensions, got shapes {a} and {v}")
    ndim = len(a)
    if axes is None:
        return convolve(in1, in2, mode=mode)
    axes = sorted({ax % ndim for ax in np.atleast_1d(axes).tolist()})
    others = [ax for ax in range(ndim) if ax not in axes]
    for ax in others:
        if a[ax] != v[ax] and 1 not in (a[ax], v[ax]):
            raise ValueError(f"fftconvolve: along axis {ax}, which is not convolved, the "
                             f"sizes must match or be 1, got shapes {a} and {v}")
    batch = tuple(max(a[ax], v[ax]) for ax in others)
    order = others + axes
    x = ops.transpose(in1, order)
    y = ops.transpose(in2, order)
    pieces = []
    for index in np.ndindex(*batch):
        at = lambda z: z[tuple(i if shape_of(z)[k] > 1 else 0 for k, i in enumerate(index))]
        pieces.append(convolve(at(x), at(y), mode=mode))
    out = ops.stack(pieces).reshape(batch + shape_of(pieces[0]))
    return ops.transpose(out, list(np.argsort(order)))


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=False):
    """data less its least-squares line along ``axis`` (``type="linear"``; a line in
    each piece between the breakpoints ``bp``) or less its mean (``"constant"``), as
    scipy.signal.detrend. What is subtracted is a projection of the data, a constant
    matrix: the derivative is that matrix's complement.

    >>> import chainrule.scipy.signal as signal
    >>> signal.detrend(np.array([1.0, 2.0, 4.0])).round(6).tolist()
    [0.166667, -0.333333, 0.166667]
    """
    shape = shape_of(data)
    axis = axis % len(shape) if shape else 0
    n = shape[axis] if shape else 1
    if type in ("constant", "c"):
        return data - ops.mean(data, axis=axis, keepdims=True)
    if type not in ("linear", "l"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}")
    breaks = np.unique(np.concatenate([[0], np.atleast_1d(bp), [n]]).astype(int))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError(f"detrend: breakpoints must lie in [0, {n}] (the length of axis "
                         f"{axis}), got bp={bp!r}")
    # (in float32 for float32 data, as SciPy keeps it)
    single = np.dtype(getattr(raw(data), "dtype", np.float64)).char in "fF"
    residual = np.eye(n, dtype=np.float32 if single else np.float64)
    for start, stop in zip(breaks[:-1], breaks[1:]):
        line = np.stack([np.arange(1, stop - start + 1) / (stop - start),
                         np.ones(stop - start)], axis=1)
        residual[start:stop, start:stop] -= line @ np.linalg.pinv(line)
    out = ops.tensordot(residual, data, axes=([1], [axis]))
    return ops.moveaxis(out, 0, axis)

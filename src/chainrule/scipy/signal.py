"""scipy.signal's convolve and correlate, n-dimensional, in the modes full, valid and
same, differentiable in both inputs (both are linear in each).

    >>> import chainrule.scipy.signal as signal
    >>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]

Every mode is a window of the full convolution, and the full convolution's VJP in one
input is the full convolution of the gradient with the other input flipped, in the
window where they overlap: so the rules are written with this one operation, and the
derivatives of any order follow.
"""

import scipy.signal as _signal

from .. import rules as ops
from ..primitive import Primitive, shape_of

__all__ = ["convolve", "correlate"]


def _full(a, v):
    return _signal.convolve(a, v, mode="full")


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

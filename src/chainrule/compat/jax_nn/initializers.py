"""``jax.nn.initializers``: functions ``init(key, shape, dtype=float64) -> array`` that
draw a layer's first parameters from a ``cr.random`` key, with JAX's names, arguments
and distributions (chainrule's random bits, so other numbers than JAX's).

``zeros``, ``ones`` are initializers themselves; the others make one:
``glorot_normal()(key, (3, 4))``. The variance-scaling ones read the fans as JAX does: a
weight of shape (..., fan_in, fan_out) (``in_axis=-2, out_axis=-1``), every other axis a
receptive field (a convolution's kernel HWIO).

>>> import chainrule as cr
>>> from chainrule.jax_nn import initializers
>>> initializers.glorot_uniform()(cr.random.key(0), (3, 4)).shape
(3, 4)
>>> initializers.zeros(cr.random.key(0), (2,)).tolist()
[0.0, 0.0]
"""

import math
from collections.abc import Sequence

import numpy as np

from ...api import random

__all__ = ["constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal",
           "ones", "orthogonal", "truncated_normal", "uniform", "variance_scaling",
           "xavier_normal", "xavier_uniform", "zeros"]

_DEFAULT = np.float64


def _shape(shape, name):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(n) for n in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a sequence of ints, got "
                        f"{shape!r}") from None


def zeros(key, shape, dtype=_DEFAULT):
    """An array of zeros (the key is not used).

    >>> from chainrule.jax_nn import initializers
    >>> initializers.zeros(cr.random.key(0), (2, 3)).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    >>> initializers.zeros(cr.random.key(0), 2, np.float32).dtype
    dtype('float32')
    """
    return np.zeros(_shape(shape, "zeros"), dtype)


def ones(key, shape, dtype=_DEFAULT):
    """An array of ones (the key is not used).

    >>> from chainrule.jax_nn import initializers
    >>> initializers.ones(cr.random.key(0), (2,)).tolist()
    [1.0, 1.0]
    """
    return np.ones(_shape(shape, "ones"), dtype)


def constant(value, dtype=_DEFAULT):
    """An initializer filling every entry with ``value``.

    >>> from chainrule.jax_nn import initializers
    >>> initializers.constant(0.5)(cr.random.key(0), (2, 3)).tolist()
    [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]
    >>> initializers.constant(7, dtype=np.int32)(cr.random.key(0), 2).tolist()
    [7, 7]
    """
    def init(key, shape, dtype=dtype):
        return np.full(_shape(shape, "constant"), value, dtype)
    return init


def normal(stddev=1e-2, dtype=_DEFAULT):
    """Normal draws of standard deviation ``stddev``.

    >>> from chainrule.jax_nn import initializers
    >>> w = initializers.normal(0.5)(cr.random.key(0), (1000, 100))
    >>> w.shape, round(float(w.std()), 2)
    ((1000, 100), 0.5)
    >>> initializers.normal()(cr.random.key(0), (2, 3), np.float32).dtype
    dtype('float32')
    """
    def init(key, shape, dtype=dtype):
        return random.normal(key, _shape(shape, "normal"), dtype) * np.asarray(stddev, dtype)
    return init


def uniform(scale=1e-2, dtype=_DEFAULT):
    """Uniform draws in [0, scale).

    >>> from chainrule.jax_nn import initializers
    >>> w = initializers.uniform(2.0)(cr.random.key(0), (100, 10))
    >>> w.shape, bool(w.min() >= 0.0 and w.max() < 2.0)
    ((100, 10), True)
    """
    def init(key, shape, dtype=dtype):
        return random.uniform(key, _shape(shape, "uniform"), dtype) * np.asarray(scale, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=_DEFAULT, lower=-2.0, upper=2.0):
    """Normal draws truncated to [lower, upper], times ``stddev``.

    >>> from chainrule.jax_nn import initializers
    >>> w = initializers.truncated_normal(1.0)(cr.random.key(0), (100, 10))
    >>> w.shape, bool(abs(w).max() <= 2.0)
    ((100, 10), True)
    """
    def init(key, shape, dtype=dtype):
        draw = random.truncated_normal(key, lower, upper, _shape(shape, "truncated_normal"),
                                       dtype)
        return draw * np.asarray(stddev, dtype)
    return init


def _fans(shape, in_axis, out_axis, batch_axis, name):
    if len(shape) < 2:
        raise ValueError(f"{name}: can't compute input and output sizes of a "
                         f"{len(shape)}-dimensional weight of shape {shape}; expected at "
                         f"least 2 dimensions")
    batch = (batch_axis,) if isinstance(batch_axis, int) else tuple(batch_axis)
    batch_size = math.prod(shape[a] for a in batch)
    receptive = math.prod(shape) // (shape[in_axis] * shape[out_axis] * batch_size)
    return shape[in_axis] * receptive, shape[out_axis] * receptive


# the standard deviation of a standard normal truncated to [-2, 2]
_TRUNCATED_STD = .87962566103423978


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1,
                     batch_axis: int | Sequence[int] = (), dtype=_DEFAULT):
    """Draws of variance ``scale / n``, n the fan in, the fan out or their mean
    (``mode``: "fan_in", "fan_out", "fan_avg"), from ``distribution``:
    "truncated_normal", "normal" or "uniform" (in +-sqrt(3 * variance)).

    >>> from chainrule.jax_nn import initializers
    >>> init = initializers.variance_scaling(2.0, "fan_in", "normal")
    >>> w = init(cr.random.key(0), (3, 3, 16, 32))     # a conv kernel, HWIO: fan_in 3*3*16
    >>> round(float(w.std() * np.sqrt(3 * 3 * 16 / 2)), 1)
    1.0
    """
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"variance_scaling: mode must be 'fan_in', 'fan_out' or "
                         f"'fan_avg', got {mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"variance_scaling: distribution must be 'truncated_normal', "
                         f"'normal' or 'uniform', got {distribution!r}")

    def init(key, shape, dtype=dtype):
        shape = _shape(shape, "variance_scaling")
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis, "variance_scaling")
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = scale / n
        if distribution == "truncated_normal":
            std = math.sqrt(variance) / _TRUNCATED_STD
            return random.truncated_normal(key, -2.0, 2.0, shape, dtype) * np.asarray(std, dtype)
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.asarray(math.sqrt(variance), dtype)
        return random.uniform(key, shape, dtype, -1.0, 1.0) * \
            np.asarray(math.sqrt(3 * variance), dtype)
    return init


def _named(scale, mode, distribution, name, alias=None):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_DEFAULT):
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)
    make.__name__ = make.__qualname__ = name
    # (the example's weight is (400, 300): fan_in 400, fan_out 300, their mean 350)
    fan = {"fan_in": 400, "fan_out": 300, "fan_avg": 350}[mode]
    same = f" ``{name}`` and ``{alias}`` are one function." if alias else ""
    make.__doc__ = (
        f"``variance_scaling({scale}, {mode!r}, {distribution!r})``: draws of standard "
        f"deviation sqrt({scale:g} / {mode}).{same}\n\n"
        f">>> from chainrule.jax_nn import initializers\n"
        f">>> w = initializers.{name}()(cr.random.key(0), (400, 300))\n"
        f">>> w.shape, round(float(w.std() / np.sqrt({scale:g} / {fan})), 1)\n"
        f"((400, 300), 1.0)\n")
    return make


glorot_uniform = xavier_uniform = _named(1.0, "fan_avg", "uniform", "glorot_uniform",
                                         "xavier_uniform")
glorot_normal = xavier_normal = _named(1.0, "fan_avg", "truncated_normal", "glorot_normal",
                                       "xavier_normal")
lecun_uniform = _named(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _named(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = kaiming_uniform = _named(2.0, "fan_in", "uniform", "he_uniform", "kaiming_uniform")
he_normal = kaiming_normal = _named(2.0, "fan_in", "truncated_normal", "he_normal",
                                    "kaiming_normal")


def orthogonal(scale=1.0, column_axis=-1, dtype=_DEFAULT):
    """A (semi-)orthogonal matrix times ``scale``, as JAX makes it: the Q of a normal
    matrix's QR, its columns' signs fixed by R's diagonal; other axes than
    ``column_axis`` are flattened into the rows.

    >>> from chainrule.jax_nn import initializers
    >>> w = initializers.orthogonal()(cr.random.key(0), (5, 3))
    >>> w.shape, np.allclose(w.T @ w, np.eye(3))        # orthonormal columns
    ((5, 3), True)
    """
    def init(key, shape, dtype=dtype):
        shape = _shape(shape, "orthogonal")
        if len(shape) < 2:
            raise ValueError(f"orthogonal: expected a shape of at least 2 dimensions, got "
                             f"{shape}")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        a = np.asarray(random.normal(key, matrix_shape, dtype))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if n_rows < n_cols:
            q = q.T
        q = np.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        return (scale * np.moveaxis(q, -1, column_axis)).astype(dtype)
    return init

"""scipy.fft's discrete cosine transforms of type 2, ``dct`` and ``dctn``, and their
inverses ``idct`` and ``idctn`` (a DCT of type 3), as jax.scipy.fft offers them,
differentiable to any order in the input.

    >>> from chainrule.scipy.fft import dct
    >>> dct(np.array([1.0, 2.0, 3.0])).round(6).tolist()
    [12.0, -3.464102, 0.0]

The DCT-II of x (n entries) is ``y[k] = 2 sum_j x[j] cos(pi k (2j + 1) / (2n))``. The
FFT of x followed by x reversed (2n entries) is, at k, ``exp(i pi k / (2n)) y[k]``, so
y is computed with the FFT and a turn of each entry; the inverse reads the same
identity backwards, with an inverse FFT. Each step is a differentiable operation of
chainrule's (the FFT's rules), so derivatives of any order, vmap and jit follow.
``norm`` scales as SciPy's: None or "backward" (the sums above, and 1/(2n) on the
inverse), "ortho" (an orthogonal matrix: its inverse is its transpose) or "forward".
"""

import numpy as np

from .. import rules as ops
from ..rules.fft import fft as _fft, ifft as _ifft
from ..primitive import raw, shape_of

__all__ = ["dct", "idct", "dctn", "idctn"]

_NORMS = (None, "backward", "ortho", "forward")


def _checked(name, type, norm):
    if type != 2:
        raise ValueError(f"{name}: only type 2 is supported (as in jax.scipy.fft), got "
                         f"type={type!r}")
    if norm not in _NORMS:
        raise ValueError(f"{name}: norm must be None, 'backward', 'ortho' or 'forward', "
                         f"got {norm!r}")


def _resized(x, n, name):
    """x cut or padded with zeros to n entries along its last axis."""
    if n is None:
        return x
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name}: n must be a positive integer, got {n!r}")
    length = shape_of(x)[-1]
    if n <= length:
        return x[..., :n]
    return ops.pad(x, [(0, 0)] * (len(shape_of(x)) - 1) + [(0, n - length)])


def _row_scales(n, norm):
    """The factor of each entry of the DCT-II on top of its sums (None: 1)."""
    if norm == "ortho":  # the rows of an orthogonal matrix
        return np.array([np.sqrt(1 / (4 * n))] + [np.sqrt(1 / (2 * n))] * (n - 1))
    return 1 / (2 * n) if norm == "forward" else None


def _inverse_weights(n, norm):
    """The weight of each y[k] in the inverse: the first, then the others."""
    if norm == "ortho":  # the transpose of the orthogonal matrix
        first, rest = np.sqrt(1 / n), np.sqrt(2 / n)
    elif norm == "forward":
        first, rest = 1.0, 2.0
    else:
        first, rest = 1 / (2 * n), 1 / n
    return np.array([first] + [rest] * (n - 1))


def _single(x):
    """Whether x holds float32 numbers (kept in float32, as SciPy keeps them)."""
    return np.dtype(getattr(raw(x), "dtype", np.float64)) == np.float32


def _turns(n, sign, x):
    """exp(sign i pi k / (2n)) for k < n, in x's precision."""
    return np.exp(sign * 0.5j * np.pi * np.arange(n) / n).astype(
        np.complex64 if _single(x) else np.complex128)


def _dct_last(x, norm):
    """The DCT-II along the last axis."""
    n = shape_of(x)[-1]
    doubled = ops.concatenate([x, ops.flip(x, axis=-1)], axis=-1)
    spectrum = _fft(doubled, axis=-1)[..., :n]
    y = ops.real(spectrum * _turns(n, -1, x))
    scale = _row_scales(n, norm)
    if scale is None:
        return y
    return y * np.asarray(scale, dtype=np.float32 if _single(x) else np.float64)


def _idct_last(y, norm):
    """The inverse of the DCT-II (a DCT-III) along the last axis: x[j] is the sum of
    w[k] y[k] cos(pi k (2j + 1) / (2n)) over k, with weights w by norm."""
    n = shape_of(y)[-1]
    turns = _turns(n, 1, y)
    turned = y * (_inverse_weights(n, norm) * turns).astype(turns.dtype)
    padded = ops.pad(turned, [(0, 0)] * (len(shape_of(y)) - 1) + [(0, n)])
    return ops.real(_ifft(padded, axis=-1)[..., :n]) * (2 * n)


def _along(transform, x, n, axis, norm, name):
    ndim = len(shape_of(x))
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of range for an array of shape "
                         f"{shape_of(x)}")
    moved = _resized(ops.moveaxis(x, axis, -1), n, name)
    if np.dtype(getattr(raw(x), "dtype", np.float64)).kind == "c":  # (SciPy: each part)
        out = transform(ops.real(moved), norm) + 1j * transform(ops.imag(moved), norm)
    else:
        out = transform(moved, norm)
    return ops.moveaxis(out, -1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The discrete cosine transform of type 2 of x along ``axis`` (cut or padded with
    zeros to ``n`` entries first), as scipy.fft.dct.

    >>> from chainrule.scipy.fft import dct
    >>> cr.grad(lambda x: dct(x, norm="ortho")[0])(np.ones(4)).tolist()   # the mean's row
    [0.5, 0.5, 0.5, 0.5]
    """
    _checked("dct", type, norm)
    return _along(_dct_last, x, n, axis, norm, "dct")


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of ``dct`` of type 2 (a DCT of type 3) along ``axis``, as
    scipy.fft.idct: ``idct(dct(x, norm=m), norm=m)`` is x for every norm m.

    >>> from chainrule.scipy.fft import dct, idct
    >>> idct(dct(np.array([1.0, 2.0, 3.0]))).round(6).tolist()
    [1.0, 2.0, 3.0]
    """
    _checked("idct", type, norm)
    return _along(_idct_last, x, n, axis, norm, "idct")


def _over_axes(transform, name, x, s, axes, norm):
    ndim = len(shape_of(x))
    if axes is None:
        axes = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got s={s!r} "
                         f"and axes={axes!r}")
    for k, axis in enumerate(axes):
        x = _along(transform, x, None if s is None else s[k], axis, norm, name)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The DCT of type 2 along each of ``axes`` (all by default), as scipy.fft.dctn.

    >>> from chainrule.scipy.fft import dctn
    >>> dctn(np.ones((2, 2))).tolist()
    [[16.0, 0.0], [0.0, 0.0]]
    """
    _checked("dctn", type, norm)
    return _over_axes(_dct_last, "dctn", x, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of ``dctn`` of type 2 along each of ``axes``, as scipy.fft.idctn.

    >>> from chainrule.scipy.fft import dctn, idctn
    >>> idctn(dctn(np.eye(2), norm="ortho"), norm="ortho").round(6).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _checked("idctn", type, norm)
    return _over_axes(_idct_last, "idctn", x, s, axes, norm)

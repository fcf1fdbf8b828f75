"""The discrete Fourier transforms of ``numpy.fft``, differentiable: ``chainrule.numpy.fft``.

Four are operations of the table, along one axis: ``fft``, ``ifft``, ``rfft``,
``irfft``. The others are built from them as NumPy builds them (``fftn`` is ``fft``
along each axis in turn, ``rfftn`` an ``rfft`` along the last axis and ``fft`` along the
others, ``hfft`` an ``irfft`` of the conjugate), so they need no rules.

Every transform is linear, so its JVP is itself applied to the tangent, and its VJP is
its transpose (JAX's convention: no conjugate, docs/conventions.md). The DFT matrix is
symmetric, so the transpose of ``fft`` is ``fft`` (of ``ifft``, ``ifft``), with the same
``norm``. Where ``n`` pads or cuts the input, the transpose cuts or pads back. ``rfft``
keeps the first n//2 + 1 outputs of an ``fft`` of real numbers: its transpose pads the
gradient with zeros to n, takes the ``fft``, and the real input keeps the real part.
``irfft`` reads a half spectrum: each entry but the first (and the middle one, for an
even n) stands for two of the full spectrum, hence the factor 2 in its transpose (JAX's
``_irfft_transpose``).
"""

from collections.abc import Sequence

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import along_axis, ndim_of, shape_of
from .assembly import pad, roll
from .common import Result, op
from .complexes import conj
from .indexing import getitem

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift",
           "fftfreq", "rfftfreq"]

fftfreq, rfftfreq = xp.fft.fftfreq, xp.fft.rfftfreq  # (numbers, no derivative)
_SCALE = {None: lambda n: 1.0 / n, "backward": lambda n: 1.0 / n,
          "ortho": lambda n: n ** -0.5, "forward": lambda n: 1.0}


def _axis_from_end(axis, x):
    """The axis counted from the end, so that a gradient's batch axes in front are
    passed over."""
    ndim = ndim_of(x)
    return axis % ndim - ndim


def _resized(y, length, axis):
    """y cut or padded with zeros to ``length`` along ``axis`` (counted from the end)."""
    have = shape_of(y)[axis]
    if have == length:
        return y
    if have > length:
        return getitem(y, index=(Ellipsis, slice(0, length)) + (slice(None),) * (-axis - 1))
    widths = [(0, 0)] * ndim_of(y)
    widths[axis] = (0, length - have)
    return pad(y, widths)


@op("fft", batching=along_axis(n=None, axis=-1, norm=None))
def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Result:
    """``np.fft.fft``: the discrete Fourier transform along ``axis``, differentiable.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.fft(np.array([1.0, 0.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]
    >>> cr.grad(lambda x: cr.abs(cnp.fft.fft(x)[1]) ** 2)(np.array([1.0, 2.0]))
    array([-2.,  2.])
    """
    return xp.fft.fft(a, n=n, axis=axis, norm=norm)


def _fft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    axis = _axis_from_end(axis, a)
    return _resized(fft(g, axis=axis, norm=norm), shape_of(a)[axis], axis)


fft.defvjp(_fft_vjp)
fft.defjvp(lambda t, ans, a, n=None, axis=-1, norm=None:
           fft(t, n, _axis_from_end(axis, a), norm))


@op("ifft", batching=along_axis(n=None, axis=-1, norm=None))
def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Result:
    """``np.fft.ifft``: the inverse of ``fft``, differentiable.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.ifft(np.array([4.0, 0.0, 0.0, 0.0])).real.tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return xp.fft.ifft(a, n=n, axis=axis, norm=norm)




def _ifft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    axis = _axis_from_end(axis, a)
    return _resized(ifft(g, axis=axis, norm=norm), shape_of(a)[axis], axis)


ifft.defvjp(_ifft_vjp)
ifft.defjvp(lambda t, ans, a, n=None, axis=-1, norm=None:
            ifft(t, n, _axis_from_end(axis, a), norm))


@op("rfft", batching=along_axis(n=None, axis=-1, norm=None))
def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Result:
    """``np.fft.rfft``: the first n//2 + 1 entries of the ``fft`` of a real signal.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.rfft(np.ones(4)).real.tolist()
    [4.0, 0.0, 0.0]
    """
    return xp.fft.rfft(a, n=n, axis=axis, norm=norm)




def _rfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    axis = _axis_from_end(axis, a)
    n = shape_of(a)[axis] if n is None else n
    full = fft(_resized(g, n, axis), axis=axis, norm=norm)  # (real part: backward._fit)
    return _resized(full, shape_of(a)[axis], axis)


rfft.defvjp(_rfft_vjp)
rfft.defjvp(lambda t, ans, a, n=None, axis=-1, norm=None:
            rfft(t, n, _axis_from_end(axis, a), norm))


@op("irfft", batching=along_axis(n=None, axis=-1, norm=None))
def irfft(a: ArrayLike, n: int | None = None, axis: int = -1,
          norm: str | None = None) -> Result:
    """``np.fft.irfft``: the real signal of length n (2 (m - 1) by default) whose
    ``rfft`` is ``a``.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.irfft(np.array([4.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return xp.fft.irfft(a, n=n, axis=axis, norm=norm)




def _irfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    axis = _axis_from_end(axis, a)
    n = shape_of(ans)[axis]
    half = n // 2 + 1
    weights = xp.full(half, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights = weights.reshape((half,) + (1,) * (-axis - 1)) * _SCALE[norm](n)
    spectrum = conj(rfft(g, axis=axis)) * weights
    return _resized(spectrum, shape_of(a)[axis], axis)


irfft.defvjp(_irfft_vjp)
irfft.defjvp(lambda t, ans, a, n=None, axis=-1, norm=None:
             irfft(t, n, _axis_from_end(axis, a), norm))


# ---------------------------------------------------------------------------------------
# Built from the four, as NumPy builds them
# ---------------------------------------------------------------------------------------

def _lengths_and_axes(a, s, axes, name):
    """NumPy's s (lengths) and axes, completed: all axes by default, the last len(s)
    when only s is given."""
    ndim = ndim_of(a)
    if axes is None:
        axes = list(range(ndim - (len(s) if s is not None else ndim), ndim))
    axes = [int(axis) for axis in axes]
    if s is None:
        s = [shape_of(a)[axis] for axis in axes]
    if len(s) != len(axes):
        raise ValueError(f"{name}: s and axes have different lengths ({len(s)} and "
                         f"{len(axes)})")
    return list(s), axes


def fftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Result:
    """``np.fft.fftn``: ``fft`` along each of ``axes`` (all by default), differentiable.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.fftn(np.ones((2, 2))).real.tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    s, axes = _lengths_and_axes(a, s, axes, "fftn")
    for n, axis in reversed(list(zip(s, axes))):
        a = fft(a, n, axis, norm)
    return a


def ifftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Result:
    """``np.fft.ifftn``: ``ifft`` along each of ``axes``, differentiable.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    s, axes = _lengths_and_axes(a, s, axes, "ifftn")
    for n, axis in reversed(list(zip(s, axes))):
        a = ifft(a, n, axis, norm)
    return a


def rfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Result:
    """``np.fft.rfftn``: ``rfft`` along the last of ``axes``, ``fft`` along the others.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.rfftn(np.ones((2, 4))).shape
    (2, 3)
    """
    s, axes = _lengths_and_axes(a, s, axes, "rfftn")
    a = rfft(a, s[-1], axes[-1], norm)
    for n, axis in zip(s[:-1], axes[:-1]):
        a = fft(a, n, axis, norm)
    return a


def irfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Result:
    """``np.fft.irfftn``: ``ifft`` along all of ``axes`` but the last, then ``irfft``.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.irfftn(np.ones((2, 3))).shape
    (2, 4)
    """
    if s is None:  # the last length is 2 (m - 1), as NumPy's
        _, axes = _lengths_and_axes(a, None, axes, "irfftn")
        s = [shape_of(a)[axis] for axis in axes[:-1]] + [2 * (shape_of(a)[axes[-1]] - 1)]
    s, axes = _lengths_and_axes(a, s, axes, "irfftn")
    for n, axis in zip(s[:-1], axes[:-1]):
        a = ifft(a, n, axis, norm)
    return irfft(a, s[-1], axes[-1], norm)


def fft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Result:
    """``np.fft.fft2``: ``fftn`` over the last two axes.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.fft2(np.ones((2, 2))).real.tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    return fftn(a, s, axes, norm)


def ifft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Result:
    """``np.fft.ifft2``: ``ifftn`` over the last two axes.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.ifft2(np.array([[4.0, 0.0], [0.0, 0.0]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return ifftn(a, s, axes, norm)


def rfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Result:
    """``np.fft.rfft2``: ``rfftn`` over the last two axes.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.rfft2(np.ones((2, 4))).shape
    (2, 3)
    """
    return rfftn(a, s, axes, norm)


def irfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Result:
    """``np.fft.irfft2``: ``irfftn`` over the last two axes.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.irfft2(np.ones((2, 3))).shape
    (2, 4)
    """
    return irfftn(a, s, axes, norm)


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Result:
    """``np.fft.hfft``: the real spectrum of a Hermitian signal given by its first half,
    ``irfft`` of the conjugate with the opposite normalisation (as NumPy computes it).

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.hfft(np.array([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return irfft(conj(a), n, axis, _SWAPPED[norm])


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Result:
    """``np.fft.ihfft``: the inverse of ``hfft``, the conjugate of an ``rfft``.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.ihfft(np.array([1.0, 1.0, 1.0, 1.0])).real.tolist()
    [1.0, 0.0, 0.0]
    """
    return conj(rfft(a, n, axis, _SWAPPED[norm]))


def _half_shifts(x, axes, sign):
    shape = shape_of(x)
    axes = tuple(range(len(shape))) if axes is None else \
        ((axes,) if xp.ndim(axes) == 0 else tuple(axes))
    return [sign * (shape[a] // 2) for a in axes], axes


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Result:
    """``np.fft.fftshift``: the zero frequency moved to the middle, differentiable.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.fftshift(np.arange(5.0)).tolist()
    [3.0, 4.0, 0.0, 1.0, 2.0]
    """
    shifts, axes = _half_shifts(x, axes, 1)
    return roll(x, shifts, axis=axes)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Result:
    """``np.fft.ifftshift``: the inverse of ``fftshift``, differentiable.

    >>> import chainrule.numpy as cnp
    >>> cnp.fft.ifftshift(np.arange(5.0)).tolist()
    [2.0, 3.0, 4.0, 0.0, 1.0]
    """
    shifts, axes = _half_shifts(x, axes, -1)
    return roll(x, shifts, axis=axes)

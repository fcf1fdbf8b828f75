"""The functions of complex numbers that are not holomorphic: real, imag, conj, angle,
and abs of a complex z, with rules under JAX's convention.

JAX's convention (docs/conventions.md): a gradient ``c`` acts on a tangent ``t`` as
``Re(c t)``, with no conjugate. A holomorphic function's rules are then the real ones,
``g * f'(z)`` and ``t * f'(z)``, and the table's elementwise rules serve complex numbers
unchanged. The functions here are not holomorphic, so each has its own pair, written
out: for ``real``, Re(c Re t) = Re(c t) for a real c, so the VJP passes c through and
the JVP takes Re t. A complex gradient reaching a real input keeps its real part (the
engine does that, in ``backward._fit``), which is how a real program with complex
intermediates gets real gradients.
"""

import math

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import ENTRYWISE, raw
from ..arrays import as_array
from .common import Result, op
from .elementwise import absolute, divide, multiply, where

__all__ = ["real", "imag", "conj", "conjugate", "angle"]
METHODS = ["conj", "conjugate", "angle"]  # also methods of Tensor (x.real and x.imag are
# properties, as NumPy's and PyTorch's: methods/array.py)


def is_complex(x: ArrayLike) -> bool:
    """Whether x (an array, a number, a box) holds complex numbers.

    >>> from chainrule.rules.complexes import is_complex
    >>> is_complex(np.array([1j])), is_complex(cr.tensor([1.0]))
    (True, False)
    """
    value = raw(x)
    dtype = getattr(value, "dtype", None)
    if dtype is None:  # a number, a list
        return xp.result_type(value).kind == "c"
    if isinstance(dtype, xp.dtype):
        return dtype.kind == "c"
    # another library's dtype (torch.complex128), met outside a transform
    return bool(getattr(dtype, "is_complex", False)) or "complex" in str(dtype)


@op("real", batching=ENTRYWISE)
def real(x: ArrayLike) -> Result:
    """The real part, elementwise (x itself, as a copy, for a real x).

    Its gradient is g itself (a real g, as a complex number for a complex x); its
    tangent is the real part of t.

    >>> cr.grad(lambda z: cr.real(z * z))(1 + 2j)      # Re(f(z)), f holomorphic: f'(z)
    (2+4j)
    >>> cr.grad(cr.real)(2.0)
    1.0
    """
    return xp.real(as_array(x)).copy()


real.defvjp(lambda g, ans, x: g)
real.defjvp(lambda t, ans, x: real(t))


@op("imag", batching=ENTRYWISE)
def imag(x: ArrayLike) -> Result:
    """The imaginary part, elementwise (0 for a real x).

    Re(c Im t) = Re(-i c t) for a real c: the gradient is -i g (0 for a real x, the
    real part of -i g); the tangent is Im t.

    >>> cr.grad(cr.imag)(1 + 2j)
    -1j
    >>> cr.grad(cr.imag)(2.0)
    0.0
    """
    return xp.imag(as_array(x)).copy()


imag.defvjp(lambda g, ans, x: multiply(g, -1j))
imag.defjvp(lambda t, ans, x: imag(t))


@op("conj", batching=ENTRYWISE)
def conj(x: ArrayLike) -> Result:
    """The complex conjugate, elementwise (x itself, as a copy, for a real x).

    Re(c conj(t)) = Re(conj(c) t): both rules conjugate.

    >>> out, f_vjp = cr.vjp(cr.conj, 1 + 2j)
    >>> out, f_vjp(1 + 1j)
    ((1-2j), ((1-1j),))
    """
    return xp.conj(as_array(x)).copy()


conj.defvjp(lambda g, ans, x: conj(g))
conj.defjvp(lambda t, ans, x: conj(t))
conjugate = conj


def _angle_vjp(g, ans, x, deg=False):
    """d angle(z) = Im(t / z), so Re(c Im(t / z)) = Re(-i c / z t): the gradient is
    -i g / z. A real x's angle is piecewise constant (0 or pi): no gradient."""
    if not is_complex(x):
        return g * 0.0  # (g's kind and dtype: a Tensor in a graph stays one)
    return divide(multiply(g, -1j * (180 / math.pi if deg else 1.0)), x)


def _angle_jvp(t, ans, x, deg=False):
    if not is_complex(x):
        return t * 0.0  # (the tangent's kind, dtype and batch axes)
    return imag(divide(t, x)) * (180 / math.pi if deg else 1.0)


@op("angle", batching=ENTRYWISE)
def angle(z: ArrayLike, deg: bool = False) -> Result:
    """The angle of z in the complex plane, in (-pi, pi] (in degrees with ``deg``), as
    ``np.angle``: 0 or pi for a real z, a piecewise constant (its gradient is 0).

    >>> cr.grad(cr.angle)(1 + 1j)                  # -i / z
    (-0.5-0.5j)
    """
    return xp.angle(as_array(z), deg=deg)


angle.defvjp(_angle_vjp)
angle.defjvp(_angle_jvp)


def _abs_rules(real_vjp, real_jvp):
    """abs's rules for a complex z too: d|z| = Re(conj(z) t) / |z|, so the gradient is
    g conj(z) / |z| and the tangent Re(conj(z) t) / |z| (0 at z = 0, as sign(0) = 0 for
    a real x). A real x keeps the rules of ``elementwise.py``: one dtype test."""
    def unit(ans, x):  # conj(z) / |z|, with the table's operations (for second order)
        return conj(x) / where(raw(ans) == 0, 1.0, ans)

    def vjp(g, ans, x):
        return g * unit(ans, x) if is_complex(x) else real_vjp(g, ans, x)

    def jvp(t, ans, x):
        return real(t * unit(ans, x)) if is_complex(x) else real_jvp(t, ans, x)
    return vjp, jvp


absolute.vjps[0], absolute.jvps[0] = _abs_rules(absolute.vjps[0], absolute.jvps[0])

"""Determinants: ``det``, and ``slogdet``, the sign and the log of the absolute value
(which neither overflow nor underflow), each on a matrix or on a batch of them (leading
axes), as numpy.linalg does. The gradient of det is the matrix of cofactors, det(A)
A^-T (docs/conventions.md), which exists at a singular matrix too: it is taken through
the inverse, or, where a matrix of the batch is singular, through the SVD.

A file of its own because it stands on both the solves (``solves``: the inverse) and the
factorizations (``decompositions``: the SVD), which are written without it.
"""

from collections import namedtuple

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import LEADING_AXES, raw, shape_of
from .common import Result, op
from .complexes import imag, is_complex
from .elementwise import where
from .linalg import matmul
from .matrices import check_square, mT, zero_gradient
from .reductions import prod, sum
from .shapes import expand_dims
from .decompositions import _real_if_complex, svd
from .solves import inv

__all__ = ["det", "slogdet"]

SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")


@op("det", batching=LEADING_AXES)
def det(a):
    """The determinant of a square matrix (or of each in a batch), as np.linalg.det.

    The gradient is det(A) A^-T, the matrix of cofactors, which exists at a singular
    matrix too (computed there from the SVD).

    >>> a = cr.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> y = cr.det(a)                         # or cr.linalg.det(a)
    >>> round(y.item(), 12)
    5.0
    >>> y.backward()
    >>> np.round(a.grad, 12).tolist()         # the cofactors
    [[3.0, -1.0], [-1.0, 2.0]]
    """
    check_square("det", a)
    return xp.linalg.det(a)


def _cofactors(a, det_a):
    """The matrix of cofactors, det(A) A^-T: through the inverse, or, when a matrix of
    the batch is singular (no inverse, but cofactors all the same), through the SVD
    A = U diag(s) Vh: det(U) det(Vh) U diag(prod_{j != i} s_j) Vh."""
    if xp.branch(xp.all(raw(det_a) != 0), "'every matrix is invertible'"):
        return expand_dims(expand_dims(det_a, -1), -1) * mT(inv(a))
    u, s, vh = svd(a, full_matrices=False)
    n = shape_of(a)[-1]
    others = prod(where(xp.eye(n, dtype=bool), 1.0, expand_dims(s, -2)), axis=-1)
    signs = xp.linalg.det(raw(u)) * xp.linalg.det(raw(vh))  # piecewise constant
    return matmul(u * expand_dims(others * expand_dims(signs, -1), -2), vh)


# Giles 2008, sec. 2.2.4: d det A = det A tr(A^-1 dA), so Abar = gbar det A A^-T (the
# cofactors, which exist at a singular A too).
det.defvjp(lambda g, ans, a: expand_dims(expand_dims(g, -1), -1) * _cofactors(a, ans))
det.defjvp(lambda t, ans, a: sum(_cofactors(a, ans) * t, axis=(-2, -1)))


@op("logabsdet", batching=LEADING_AXES)
def _logabsdet(a):
    check_square("slogdet", a)
    return xp.linalg.slogdet(a)[1]


# d log|det A| = tr(A^-1 dA) (Giles 2008, sec. 2.2.4, divided by det A)
# (of a complex A, the real part: JAX's convention makes the VJP the same)
_logabsdet.defvjp(lambda g, ans, a: expand_dims(expand_dims(g, -1), -1) * mT(inv(a)))
_logabsdet.defjvp(lambda t, ans, a: _real_if_complex(sum(mT(inv(a)) * t, axis=(-2, -1))))


@op("det_sign", batching=LEADING_AXES)
def _det_sign(a):
    return xp.linalg.slogdet(a)[0]


# A real sign is piecewise constant: derivative 0 wherever it exists. A complex one,
# det / |det|, turns: d sign = i Im(tr(A^-1 dA)) sign (JAX's _slogdet_jvp), whose
# transpose under Re(c t) is i Im(g sign) A^-T.
def _det_sign_vjp(g, ans, a):
    if not is_complex(a):
        return zero_gradient(g, a)
    turn = 1j * imag(g * ans)
    return expand_dims(expand_dims(turn, -1), -1) * mT(inv(a))


def _det_sign_jvp(t, ans, a):
    if not is_complex(a):
        return sum(t, axis=(-2, -1)) * 0.0
    return 1j * imag(sum(mT(inv(a)) * t, axis=(-2, -1))) * ans


_det_sign.defvjp(_det_sign_vjp)
_det_sign.defjvp(_det_sign_jvp)


def slogdet(a: ArrayLike) -> Result:
    """The sign and the log of the absolute value of the determinant, as
    np.linalg.slogdet: ``(sign, logabsdet)``, det = sign * exp(logabsdet).

    Unlike det it neither overflows nor underflows. The sign has derivative 0; the
    gradient of logabsdet is A^-T.

    >>> a = cr.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> sign, logdet = cr.slogdet(a)          # or cr.linalg.slogdet(a)
    >>> sign.item(), round(float(np.exp(logdet.item())), 12)
    (1.0, 5.0)
    >>> logdet.backward()
    >>> np.round(a.grad, 12).tolist()         # inv(a).T
    [[0.6, -0.2], [-0.2, 0.4]]
    """
    return SlogdetResult(_det_sign(a), _logabsdet(a))

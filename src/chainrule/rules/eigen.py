"""The eigendecomposition of a general square matrix: ``eig`` and ``eigvals``, as
numpy.linalg's, with JAX's derivatives (``eigh`` of a symmetric or Hermitian matrix is
in ``decompositions``).

A real matrix may have complex eigenvalues: NumPy then gives complex results, and real
ones where every eigenvalue of the batch is real (JAX's are always complex; the numbers
are the same). A complex result reaching a real matrix gives it a real gradient (the
engine keeps the real part), as every complex intermediate of a real program does.

The eigenvalue equation A v = w v fixes each eigenvector only up to a complex factor.
LAPACK's ``geev`` (NumPy's and JAX's) picks the one with unit 2-norm whose largest
entry is real; the derivative of the eigenvectors is that of this choice, as
``jax.lax.linalg.eig(..., enable_eigvec_derivs=True)`` gives it (jax.numpy's eig
leaves eigenvector derivatives out, jax-ml/jax#2748: they hold only where the
eigenvalues are distinct). A loss that does not depend on the choice (a projector,
|v_j^H x| / |v_j|) has the same gradient under any other normalisation.
"""

from collections import namedtuple

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import LEADING_AXES, raw, shape_of
from .common import Result, op
from .complexes import conj, imag, is_complex, real
from .solves import solve
from .elementwise import where
from .linalg import matmul
from .matrices import check_square, diag_embed, diagonal_of, mT, pack, pack_raw, unpack
from .reductions import sum
from .shapes import expand_dims

__all__ = ["eig", "eigvals"]

EigResult = namedtuple("EigResult", "eigenvalues eigenvectors")


@op("eig", batching=LEADING_AXES)
def _eig(a):
    """eig's two results packed: eigenvalues (n,), then eigenvectors (n, n)."""
    check_square("eig", a)
    n = shape_of(a)[-1]
    w, v = xp.linalg.eig(a)
    return pack_raw([w, v], [(n,), (n, n)])


def _parts(ans, a):
    n = shape_of(a)[-1]
    return unpack(ans, [(n,), (n, n)])


def _gaps(w):
    """F[i, j] = 1 / (w_j - w_i), and 0 where w_j == w_i (the diagonal, and exactly
    repeated eigenvalues, whose eigenvectors have no derivative). The zeros are put in
    after the division of a safe 1, so that no derivative of F meets 1/0 or inf."""
    gaps = expand_dims(w, -2) - expand_dims(w, -1)
    equal = raw(gaps) == 0
    return where(equal, 0.0, 1.0 / where(equal, 1.0, gaps))


def _largest(v):
    """1 at the largest entry (in absolute value) of each eigenvector, the first of
    equal ones, else 0: where LAPACK made it real. A constant: the choice does not move
    under a small step."""
    v = raw(v)
    first = xp.argmax(xp.abs(v), axis=-2)
    rows = xp.arange(xp.shape(v)[-2])
    return (rows[:, None] == first[..., None, :]).astype(v.dtype)


def _eig_jvp(t, ans, a):
    # Giles 2008, sec. 3.1, and JAX's eig_jvp_rule: with P = V^-1 dA V, dw = diag(P),
    # and dV = V (F o P) + V diag(c), where c_j, free in the eigenvalue equation, keeps
    # LAPACK's normalisation: c_j = -Re(v_j^H u_j) - i Im(u_kj) / Re(v_kj), with
    # U = V (F o P) and k the row of v_j's largest entry (held real).
    w, v = _parts(ans, a)
    p = matmul(solve(v, t), v)
    u = matmul(v, _gaps(w) * p)
    if is_complex(v):
        mask = _largest(v)
        c = (-real(sum(conj(v) * u, axis=-2))
             - 1j * imag(sum(mask * u, axis=-2)) / real(sum(mask * v, axis=-2)))
    else:  # real eigenvectors of a real matrix: unit norm is the whole choice
        c = -sum(v * u, axis=-2)
    n = shape_of(a)[-1]
    return pack([diagonal_of(p), u + v * expand_dims(c, -2)], [(n,), (n, n)])


def _eig_vjp(g, ans, a):
    # The adjoint of _eig_jvp under Re(c t), step by step back: with s_j = sum_i Vbar_ij
    # V_ij, c's terms give Ubar = Vbar - conj(V) Re(s) - i mask Im(s) / Re(v_k); then
    # Pbar = diag(wbar) + F o (V^T Ubar), and Abar = V^-T Pbar V^T.
    w, v = _parts(ans, a)
    gw, gv = _parts(g, a)
    s = expand_dims(sum(gv * v, axis=-2), -2)
    if is_complex(v):
        mask = _largest(v)
        vk = expand_dims(real(sum(mask * v, axis=-2)), -2)
        ubar = gv - conj(v) * real(s) - 1j * mask * (imag(s) / vk)
    else:
        ubar = gv - v * s
    pbar = diag_embed(gw) + _gaps(w) * matmul(mT(v), ubar)
    return solve(mT(v), matmul(pbar, mT(v)))


_eig.defvjp(_eig_vjp)
_eig.defjvp(_eig_jvp)


def eig(a: ArrayLike) -> Result:
    """The eigenvalues and right eigenvectors (columns) of a square matrix, as
    np.linalg.eig: ``(eigenvalues, eigenvectors)``, batched on leading axes, each
    eigenvector of unit norm with its largest entry real (LAPACK's choice).

    Complex where some eigenvalue is, as NumPy's (a real matrix may have complex
    eigenvalues). The derivative is JAX's (``jax.lax.linalg.eig`` with
    ``enable_eigvec_derivs=True``): the eigenvalues' exists wherever they are
    distinct, the eigenvectors' is that of LAPACK's normalisation, and near equal
    eigenvalues it is as large as 1 / (w_j - w_i).

    >>> a = np.array([[0.0, 1.0], [-2.0, -3.0]])
    >>> w, v = cr.linalg.eig(a)
    >>> w.tolist()
    [-1.0, -2.0]
    >>> rotation = np.array([[0.0, -1.0], [1.0, 0.0]])   # eigenvalues i and -i
    >>> cr.linalg.eigvals(rotation).tolist()
    [1j, -1j]
    >>> cr.grad(lambda a: cr.real(cr.linalg.eigvals(a)[0]))(a)   # d w_0 / dA
    array([[ 2., -2.],
           [ 1., -1.]])
    """
    check_square("eig", a)
    return EigResult(*_parts(_eig(a), a))


def eigvals(a: ArrayLike) -> Result:
    """The eigenvalues of a square matrix, as np.linalg.eigvals (``eig``'s first
    result: its derivative, V^-T diag(g) V^T, needs the eigenvectors anyway).

    >>> cr.linalg.eigvals(np.array([[2.0, 1.0], [0.0, 3.0]])).tolist()
    [2.0, 3.0]
    """
    return eig(a).eigenvalues

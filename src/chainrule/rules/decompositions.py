"""The decompositions of a matrix: cholesky, eigh and eigvalsh, svd and svdvals, qr, each
on a matrix or on a batch of them (leading axes), as numpy.linalg does. The rules are
written with the table's own operations (``solve``, from ``solves``, and the
decompositions themselves), so derivatives of any order follow. Operations with several
results (eigh, svd, qr) are one primitive whose result packs them side by side along a
last axis (``matrices._pack``): the engine sees one array, and the public function slices
the pieces out again.

Conventions (docs/conventions.md): cholesky and eigh symmetrise their input, as JAX
does; at exactly repeated eigenvalues or singular values the vectors' gradient leaves
out the rotations within the repeated space (finite, where PyTorch and JAX give NaN), so
the values' gradient stays exact. Near repeated values the gradients are as large as
the calculus says.

A file of its own between the solves (``solves``) beneath it and the determinants
(``determinants``) above it, whose gradient at a singular matrix goes through the SVD.
"""

import builtins
from collections import namedtuple

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import LEADING_AXES, raw, shape_of
from .common import Result, op
from .complexes import imag, is_complex, real
from .elementwise import where
from .linalg import matmul
from .matrices import (check_matrix, check_square, conjugated, diag_embed, diagonal_of,
                       hermitian_part, mH, mT, pack, pack_raw, symmetrised, unpack)
from .joining import concatenate
from .shapes import expand_dims
from .solves import solve

__all__ = ["cholesky", "eigh", "eigvalsh", "svd", "svdvals", "qr"]

EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
SVDResult = namedtuple("SVDResult", "U S Vh")
QRResult = namedtuple("QRResult", "Q R")


def _real_if_complex(x):
    return real(x) if is_complex(x) else x


@op("cholesky", batching=LEADING_AXES)
def cholesky(a):
    """The lower-triangular L with L @ L^T = a, for symmetric positive definite a
    (or each of a batch), as np.linalg.cholesky.

    The input is symmetrised first, (a + a^T)/2, as jax.numpy's cholesky does (NumPy
    reads the lower triangle: the same for a symmetric a), so the gradient is
    symmetric. A matrix that is not positive definite raises NumPy's LinAlgError.

    >>> a = cr.tensor([[4.0, 2.0], [2.0, 5.0]], requires_grad=True)
    >>> L = cr.cholesky(a)                    # or cr.linalg.cholesky(a)
    >>> L.data.tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    >>> L.sum().backward()
    >>> a.grad.tolist()
    [[0.1875, 0.125], [0.125, 0.25]]
    """
    check_square("cholesky", a)
    return xp.linalg.cholesky(hermitian_part(a))


def _phi(x):
    """The lower triangle with the diagonal halved (Murray 2016's Phi)."""
    n = shape_of(x)[-1]
    return x * (xp.tril(xp.ones((n, n))) - 0.5 * xp.eye(n)).astype(xp.result_type(raw(x)))


def _right_solve(y, L):
    """y @ L^-1: (L^-T y^T)^T."""
    return mT(solve(mT(L), mT(y)))


def _cholesky_vjp(g, ans, a):
    # Murray 2016, "Differentiation of the Cholesky decomposition", eq. 10:
    # Abar = L^-T Phi(L^T Lbar) L^-1, symmetrised (the forward symmetrises a).
    # (of a complex a, L^-1 on the right is conj(L)^-1 and the symmetrisation Hermitian)
    inner = _phi(matmul(mT(ans), g))
    return symmetrised(_right_solve(solve(mT(ans), inner), mT(mH(ans))))


def _cholesky_jvp(t, ans, a):
    # Murray 2016, eq. 7: dL = L Phi(L^-1 dA L^-T), dA symmetrised.
    inner = _right_solve(solve(ans, symmetrised(t)), mH(ans))
    return matmul(ans, _phi(inner))


cholesky.defvjp(_cholesky_vjp)
cholesky.defjvp(_cholesky_jvp)


@op("eigh", batching=LEADING_AXES)
def _eigh(a):
    """eigh's two results packed: eigenvalues (n,), then eigenvectors (n, n)."""
    check_square("eigh", a)
    n = shape_of(a)[-1]
    w, v = xp.linalg.eigh(hermitian_part(a))
    return pack_raw([w, v], [(n,), (n, n)])


def _eigh_parts(ans, a):
    n = shape_of(a)[-1]
    return unpack(ans, [(n,), (n, n)])


def _eigen_gaps(w):
    """F[i, j] = 1 / (w_j - w_i), and 0 where w_j == w_i (the diagonal, and exactly
    repeated values: docs/conventions.md). The masked gap is inf before the division,
    so that no derivative of F meets 1/0 either."""
    gaps = expand_dims(w, -2) - expand_dims(w, -1)
    return 1.0 / where(raw(gaps) == 0, xp.inf, gaps)


def _eigh_vjp(g, ans, a):
    # Giles 2008, sec. 3.1 (real symmetric case):
    # Abar = V (diag(wbar) + F o (V^T Vbar)) V^T, symmetrised (the forward symmetrises).
    w, v = _eigh_parts(ans, a)
    gw, gv = _eigh_parts(g, a)
    # (of a Hermitian a, the transpose of dV = V (F o (V^H dA V)): conj(V) on the left)
    inner = diag_embed(gw) + _eigen_gaps(w) * matmul(mT(v), gv)
    return symmetrised(matmul(matmul(conjugated(v), inner), mT(v)))


def _eigh_jvp(t, ans, a):
    # Giles 2008, sec. 3.1: dw = diag(V^T dA V), dV = V (F o (V^T dA V)).
    w, v = _eigh_parts(ans, a)
    n = shape_of(a)[-1]
    m = matmul(matmul(mH(v), symmetrised(t)), v)
    return pack([diagonal_of(m), matmul(v, _eigen_gaps(w) * m)], [(n,), (n, n)])


_eigh.defvjp(_eigh_vjp)
_eigh.defjvp(_eigh_jvp)


def eigh(a: ArrayLike, UPLO: str = "L") -> Result:
    """The eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix, as
    np.linalg.eigh: ``(eigenvalues, eigenvectors)``, batched on leading axes.

    The input is symmetrised first, (a + a^T)/2, as jax.numpy's eigh does (NumPy
    reads one triangle, ``UPLO``: the same for a symmetric a). Caveat: the derivative
    of the eigenvectors involves 1 / (w_j - w_i); with repeated (degenerate)
    eigenvalues it does not exist, and near them it is very large (as in PyTorch and
    JAX). At exactly equal eigenvalues chainrule leaves out the rotations within
    their eigenspace (finite, where PyTorch and JAX give NaN: docs/conventions.md),
    so the eigenvalues' gradient is exact there. Each eigenvector's sign is NumPy's choice; a
    loss should not depend on it.

    >>> a = cr.tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> w, v = cr.eigh(a)                     # or cr.linalg.eigh(a)
    >>> np.round(w.data, 12).tolist()
    [1.0, 3.0]
    >>> w[1].backward()                       # d w_max / dA = v v^T
    >>> np.round(a.grad, 12).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    del UPLO  # the input is symmetrised, so both triangles count
    check_square("eigh", a)
    w, v = _eigh_parts(_eigh(a), a)
    return EighResult(real(w) if is_complex(w) else w, v)  # (packed with v: complex)


@op("eigvalsh", batching=LEADING_AXES)
def eigvalsh(a, UPLO="L"):
    """The eigenvalues (ascending) of a symmetric matrix, as np.linalg.eigvalsh.

    Symmetrised first as ``eigh``. The gradient V diag(g) V^T needs no eigenvalue
    gaps: it exists for repeated eigenvalues too (where it is one of the
    subgradients).

    >>> a = cr.tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> np.round(cr.eigvalsh(a).data, 12).tolist()
    [1.0, 3.0]
    """
    check_square("eigvalsh", a)
    return xp.linalg.eigvalsh(hermitian_part(a))


def _eigvalsh_vjp(g, ans, a, UPLO="L"):
    v = eigh(a).eigenvectors  # Giles 2008, sec. 3.1 with Vbar = 0: Abar = V diag(wbar) V^T
    return symmetrised(matmul(conjugated(v) * expand_dims(g, -2), mT(v)))


def _eigvalsh_jvp(t, ans, a, UPLO="L"):
    v = eigh(a).eigenvectors  # dw = diag(V^T dA V)
    return _real_if_complex(diagonal_of(matmul(matmul(mH(v), symmetrised(t)), v)))


eigvalsh.defvjp(_eigvalsh_vjp)
eigvalsh.defjvp(_eigvalsh_jvp)


def _svd_cores(a):
    m, n = shape_of(a)[-2:]
    k = builtins.min(m, n)
    return [(m, k), (k,), (k, n)]


@op("svd", batching=LEADING_AXES)
def _svd(a):
    """svd's three results packed: U (m, k), S (k,), Vh (k, n)."""
    check_matrix("svd", a)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return pack_raw([u, s, vh], _svd_cores(a))


def _singular_gaps(s):
    """F[i, j] = 1 / (s_j^2 - s_i^2), 0 on the diagonal and at equal values."""
    return _eigen_gaps(s * s)


def _svd_jvp(t, ans, a):
    # Townsend 2016, "Differentiating the singular value decomposition", and JAX's
    # svd_jvp_rule: with P = U^H dA V, dS = Re diag(P),
    # dU = U (F o (P S + S P^H) + D) + (I - U U^H) dA V S^-1,
    # dV = V (F o (S P + P^H S)) + (I - V V^H) dA^H U S^-1.
    # Of a complex A, U and V are fixed only up to a phase per column, shared by both:
    # D = i Im diag(P) / S is the turn of those phases, which JAX's rule (and so this
    # one) gives to U, leaving V's diagonal real. For a real A, D = 0.
    cplx = is_complex(a)
    u, s, vh = unpack(ans, _svd_cores(a))
    s = real(s) if cplx else s  # (packed with U: complex, with no imaginary part)
    m, n = shape_of(a)[-2:]
    v = mH(vh)
    p = matmul(matmul(mH(u), t), v)
    f = _singular_gaps(s)
    row, col = expand_dims(s, -2), expand_dims(s, -1)   # s_j across, s_i down
    ps = p * row
    sp = col * p
    inner = f * (ps + mH(ps))
    if cplx:
        inner = inner + diag_embed(1j * imag(diagonal_of(p)) / _nonzero(s))
    du = matmul(u, inner)
    dv = matmul(v, f * (sp + mH(sp)))
    if m > n:
        dav = matmul(t, v)
        du = du + (dav - matmul(u, matmul(mH(u), dav))) / row
    if n > m:
        dau = matmul(mH(t), u)
        dv = dv + (dau - matmul(v, matmul(vh, dau))) / row
    ds = diagonal_of(p)
    return pack([du, real(ds) if cplx else ds, mH(dv)], _svd_cores(a))


def _nonzero(s):
    """s with its zeros made inf, so that 1 / s is 0 there (JAX's s_inv)."""
    return where(raw(s) == 0, xp.inf, s)


def _svd_vjp(g, ans, a):
    # The adjoint of _svd_jvp under Re(c t) (the same sources): with
    # X = F o (U^T Ubar), Y = F o (V^T Vbar), Vbar = Vhbar^H,
    # Pbar = diag(Sbar) + (X + X^H) S + S (Y + Y^H) (+ i Im diag(U^T Ubar) / S, D's
    # adjoint, for a complex A), and Abar = conj(U) Pbar conj(Vh) plus the two
    # projections' terms. A transpose, not a conjugate transpose, moves a factor
    # across the pairing Re(c t): hence conj(U) where the JVP has U^H.
    cplx = is_complex(a)
    h = mH if cplx else mT
    u, s, vh = unpack(ans, _svd_cores(a))
    gu, gs, gvh = unpack(g, _svd_cores(a))
    if cplx:
        s, gs = real(s), real(gs)  # (S is real: Re(c dS) takes c's real part)
    m, n = shape_of(a)[-2:]
    v, gv = mH(vh), h(gvh)
    cu, cvh = conjugated(u), conjugated(vh)
    f = _singular_gaps(s)
    row, col = expand_dims(s, -2), expand_dims(s, -1)
    utgu = matmul(mT(u), gu)
    x = f * utgu
    y = f * matmul(mT(v), gv)
    pbar = diag_embed(gs) + (x + h(x)) * row + col * (y + h(y))
    if cplx:
        pbar = pbar + diag_embed(1j * imag(diagonal_of(utgu)) / _nonzero(s))
    abar = matmul(matmul(cu, pbar), cvh)
    if m > n:
        abar = abar + matmul((gu - matmul(cu, utgu)) / row, cvh)
    if n > m:
        abar = abar + matmul(cu, (gvh - matmul(matmul(gvh, mT(vh)), cvh)) / col)
    return abar


_svd.defvjp(_svd_vjp)
_svd.defjvp(_svd_jvp)


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Result:
    """The singular value decomposition a = U @ diag(S) @ Vh, as np.linalg.svd with
    ``full_matrices=False`` (the reduced one, the only one differentiated here):
    ``(U, S, Vh)`` with k = min(m, n) singular values, descending.

    ``full_matrices=True`` (NumPy's default) is the same for square matrices and
    refused for others (it makes U or Vh square, and their extra columns are not
    determined by a). Caveat: the derivative
    of U and Vh involves 1 / (s_j^2 - s_i^2); with repeated singular values it does
    not exist and the gradient is very large near them (as in PyTorch and JAX). At
    exactly equal ones chainrule leaves out the rotations that mix them (finite, where
    PyTorch and JAX give NaN), so S's gradient is exact there; for m != n a zero
    singular value still makes U's or Vh's gradient infinite. ``compute_uv=False``
    gives S alone (``svdvals``).

    >>> a = cr.tensor([[3.0, 0.0], [0.0, -2.0]], requires_grad=True)
    >>> U, S, Vh = cr.svd(a, full_matrices=False)      # or cr.linalg.svd(...)
    >>> S.data.tolist()
    [3.0, 2.0]
    >>> S.sum().backward()                    # the nuclear norm's gradient: U @ Vh
    >>> np.round(a.grad, 12).tolist()
    [[1.0, 0.0], [0.0, -1.0]]
    """
    del hermitian  # the general algorithm serves symmetric matrices too
    if not compute_uv:
        return svdvals(a)
    check_matrix("svd", a)
    if full_matrices and shape_of(a)[-1] != shape_of(a)[-2]:
        raise ValueError(f"svd: full_matrices=True for shape {shape_of(a)}; chainrule "
                         f"differentiates the reduced SVD only: pass full_matrices=False")
    u, s, vh = unpack(_svd(a), _svd_cores(a))
    return SVDResult(u, real(s) if is_complex(s) else s, vh)  # (packed with U: complex)


@op("svdvals", batching=LEADING_AXES)
def svdvals(a):
    """The singular values, descending, as np.linalg.svdvals (svd(a, compute_uv=False)).

    The gradient U diag(g) Vh needs no gaps between singular values: it exists for
    repeated ones too (where it is one of the subgradients).

    >>> np.round(cr.svdvals(cr.tensor([[3.0, 0.0], [0.0, -2.0]])).data, 12).tolist()
    [3.0, 2.0]
    """
    check_matrix("svdvals", a)
    return xp.linalg.svd(a, compute_uv=False)


def _uv(a):
    u, _, vh = svd(a, full_matrices=False)
    return u, vh


def _svdvals_vjp(g, ans, a):
    u, vh = _uv(a)  # Townsend 2016 with Ubar = Vbar = 0: Abar = conj(U) diag(Sbar) conj(Vh)
    if is_complex(a):
        return matmul(conjugated(u) * expand_dims(real(g), -2), conjugated(vh))
    return matmul(u * expand_dims(g, -2), vh)


def _svdvals_jvp(t, ans, a):
    u, vh = _uv(a)  # dS = Re diag(U^H dA V)
    ds = diagonal_of(matmul(matmul(mH(u), t), mH(vh)))
    return real(ds) if is_complex(a) else ds


svdvals.defvjp(_svdvals_vjp)
svdvals.defjvp(_svdvals_jvp)


@op("qr", batching=LEADING_AXES)
def _qr(a):
    """qr's two results packed: Q (m, n), R (n, n), for m >= n."""
    q, r = xp.linalg.qr(a)
    return pack_raw([q, r], _qr_cores(a))


def _qr_cores(a):
    m, n = shape_of(a)[-2:]
    return [(m, n), (n, n)]


def _strictly_lower(x):
    n = shape_of(x)[-1]
    return x * xp.tril(xp.ones((n, n)), -1).astype(xp.result_type(raw(x)))


def _qr_jvp(t, ans, a):
    # Walter & Lehmann 2018, "Algorithmic differentiation of linear algebra functions
    # with application in optimum experimental design", and JAX's qr_jvp_rule:
    # C = dA R^-1, B = Q^H C, W = tril(B, -1) - tril(B, -1)^H, dQ = Q (W - B) + C,
    # dR = (B - W) R. Of a complex A, W also takes i Im diag(B): R's diagonal stays
    # real (LAPACK's choice of Q's phases).
    q, r = unpack(ans, _qr_cores(a))
    c = _right_solve(t, r)
    b = matmul(mH(q), c)
    low = _strictly_lower(b)
    w = low - mH(low)
    if is_complex(a):
        w = w + diag_embed(1j * imag(diagonal_of(b)))
    return pack([matmul(q, w - b) + c, matmul(b - w, r)], _qr_cores(a))


def _qr_vjp(g, ans, a):
    # The adjoint of _qr_jvp under Re(c t): with M = Q^T Qbar - Rbar R^T,
    # Bbar = tril(M - M^H, -1) - M (+ i Im diag(M), of a complex A),
    # Cbar = Qbar + conj(Q) Bbar, Abar = Cbar R^-T.
    cplx = is_complex(a)
    q, r = unpack(ans, _qr_cores(a))
    gq, gr = unpack(g, _qr_cores(a))
    m = matmul(mT(q), gq) - matmul(gr, mT(r))
    bbar = _strictly_lower(m - (mH(m) if cplx else mT(m))) - m
    if cplx:
        bbar = bbar + diag_embed(1j * imag(diagonal_of(m)))
    cbar = gq + matmul(conjugated(q), bbar)
    return mT(solve(r, mT(cbar)))


_qr.defvjp(_qr_vjp)
_qr.defjvp(_qr_jvp)


def qr(a: ArrayLike, mode: str = "reduced") -> Result:
    """The reduced QR decomposition a = Q @ R, as np.linalg.qr: ``(Q, R)``, Q with
    orthonormal columns (m, k), R upper triangular (k, n), k = min(m, n).

    For m < n, R's last n - m columns are Q^H a[:, m:] (the first m columns
    decide Q). The derivative needs R's first k columns invertible (full rank).

    >>> a = cr.tensor([[3.0, 1.0], [4.0, 2.0]], requires_grad=True)
    >>> Q, R = cr.qr(a)                       # or cr.linalg.qr(a)
    >>> np.round(np.abs(R.data), 12).tolist()
    [[5.0, 2.2], [0.0, 0.4]]
    """
    if mode != "reduced":
        raise ValueError(f"qr: mode={mode!r}; chainrule differentiates mode='reduced' only")
    check_matrix("qr", a)
    m, n = shape_of(a)[-2:]
    if m >= n:
        return QRResult(*unpack(_qr(a), _qr_cores(a)))
    q, r1 = unpack(_qr(a[..., :m]), _qr_cores(a[..., :m]))
    return QRResult(q, concatenate([r1, matmul(mH(q), a[..., m:])], axis=-1))

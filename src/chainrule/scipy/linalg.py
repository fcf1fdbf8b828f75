"""scipy.linalg's triangular, Cholesky and LU solves, differentiable: what a Gaussian
process or a Kalman filter written against SciPy calls.

    >>> import chainrule.scipy.linalg as sla
    >>> L = np.array([[2.0, 0.0], [1.0, 3.0]])
    >>> sla.solve_triangular(L, np.array([2.0, 7.0]), lower=True).tolist()
    [1.0, 2.0]

The matrix functions (``expm``, ``logm``, ``sqrtm``) and the Sylvester and Lyapunov
solves are ``chainrule.scipy.matrix_functions``'s, the structured and named matrices
(``toeplitz``, ``block_diag``, ``hilbert``...) and ``schur``, ``polar``, ``qr_multiply``...
are ``chainrule.scipy.linalg_structured``'s, and the other names of scipy.linalg that
chainrule differentiates are ``cr.linalg``'s (``solve``, ``inv``, ``det``, ``eigh``,
``svd``, ``qr``...): all re-exported here.
"""

import functools

import numpy as np
import scipy.linalg as _sl

from .. import arrays as xp, rules as ops
from ..api.linalg import det, eigh, inv, lstsq, pinv, qr, slogdet, solve, svd  # noqa: F401
from ..primitive import Primitive, raw, shape_of
from .banded import solve_banded  # noqa: F401
from .linalg_structured import *  # noqa: F401,F403  (the structured matrices, schur, polar...)
from .linalg_structured import __all__ as _STRUCTURED
from .matrix_functions import (_check_square, expm, logm,  # noqa: F401
                               solve_continuous_lyapunov, solve_sylvester, sqrtm)

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor",
           "lu_solve", "lu", "expm", "logm", "sqrtm", "solve_sylvester",
           "solve_continuous_lyapunov", "solve_banded", "solve", "inv", "det", "slogdet", "eigh", "svd",
           "qr", "lstsq", "pinv", *_STRUCTURED]


def _triangle(m, lower):
    """The lower (or upper) triangle of the last two axes of m, the rest 0."""
    return ops.tril(m) if lower else ops.triu(m)


def _solve_forward(a, b, trans=0, lower=False, unit_diagonal=False):
    # SciPy's functions take NumPy arrays only: xp.call hands them over (under cr.jit,
    # as one call of the program)
    solve = functools.partial(_sl.solve_triangular, trans=trans, lower=lower,
                              unit_diagonal=unit_diagonal)
    return xp.call(solve, a, b)


_solve = Primitive(_solve_forward, "solve_triangular")


def _transposed(trans):
    return 1 if trans in (0, "N") else 0


def _as_matrix(v):
    """A right-hand side as columns: a vector b becomes (n, 1)."""
    return ops.reshape(v, (-1, 1)) if len(shape_of(v)) == 1 else v


def _vjp_b(g, x, a, b, trans=0, lower=False, unit_diagonal=False):
    # x = op(A)^-1 b, so b's gradient is op(A)^-T g: the other transposition
    return _solve(a, g, trans=_transposed(trans), lower=lower, unit_diagonal=unit_diagonal)


def _vjp_a(g, x, a, b, trans=0, lower=False, unit_diagonal=False):
    gb = _as_matrix(_vjp_b(g, x, a, b, trans, lower, unit_diagonal))
    xm = _as_matrix(x)
    # d op(A) = -gb x^T; for op(A) = A^T, the same transposed; only A's triangle moves
    full = -(gb @ ops.transpose(xm)) if trans in (0, "N") else -(xm @ ops.transpose(gb))
    out = _triangle(full, lower)
    if unit_diagonal:  # the diagonal is taken to be 1: not read from A
        out = out - ops.diag(ops.diag(out))
    return out


def _jvp_a(t, x, a, b, trans=0, lower=False, unit_diagonal=False):
    t = _triangle(t, lower)
    if unit_diagonal:
        t = t - ops.diag(ops.diag(t))
    moved = ops.transpose(t) if trans not in (0, "N") else t
    change = moved @ _as_matrix(x)
    change = ops.reshape(change, shape_of(x)) if len(shape_of(x)) == 1 else change
    return -_solve(a, change, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def _jvp_b(t, x, a, b, trans=0, lower=False, unit_diagonal=False):
    return _solve(a, t, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


_solve.defvjp(_vjp_a, _vjp_b)
_solve.defjvp(_jvp_a, _jvp_b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """x solving a x = b (``trans=1``: a^T x = b) for a triangular matrix a (its other
    triangle is not read), as scipy.linalg.solve_triangular; differentiable in a and b.

    >>> import chainrule.scipy.linalg as sla
    >>> cr.grad(lambda b: cr.sum(sla.solve_triangular(np.eye(2) * 2, b)))(np.ones(2)).tolist()
    [0.5, 0.5]
    """
    return _solve(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a symmetric positive definite matrix: upper (a = U^T U) by
    default, as SciPy; lower (a = L L^T) with ``lower=True``.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 1.0], [0.0, 2.0]]
    """
    factor = ops.cholesky(a)
    return factor if lower else ops.swapaxes(factor, -1, -2)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for cho_solve, as SciPy: c is the Cholesky factor (its other
    triangle zeros, where SciPy leaves what was there).

    >>> import chainrule.scipy.linalg as sla
    >>> c, lower = sla.cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]))
    >>> c.tolist(), lower
    ([[2.0, 1.0], [0.0, 2.0]], False)
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x solving a x = b from ``cho_factor(a)``: two triangular solves.

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> sla.cho_solve(sla.cho_factor(a), np.array([6.0, 7.0])).tolist()
    [1.0, 1.0]
    """
    c, lower = c_and_lower
    if lower:  # a = L L^T: L y = b, then L^T x = y
        return solve_triangular(c, solve_triangular(c, b, lower=True), trans=1, lower=True)
    return solve_triangular(c, solve_triangular(c, b, trans=1), lower=False)


# ---------------------------------------------------------------------------------------
# LU: a[perm] = L U, L unit lower triangular, U upper
# ---------------------------------------------------------------------------------------

def _rows(piv):
    """LAPACK's pivots (row i swapped with row piv[i], in turn) as the order of a's
    rows that L U equals."""
    return xp.call(_row_order, piv)


def _row_order(piv):
    perm = np.arange(len(piv))
    for i, j in enumerate(piv):
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _lu_packed(a):
    # the pivots ride along as a last column, so that the rules see the permutation
    # the factors were made with; the column has no derivative
    lu, piv = _sl.lu_factor(a)
    return np.concatenate([lu, piv[:, None].astype(lu.dtype)], axis=1)


def _lu_forward(a):
    return xp.call(_lu_packed, a)


_lu = Primitive(_lu_forward, "lu_factor")


def _lu_parts(ans):
    """The packed factors (L's strict lower triangle, U's upper one) and the row order."""
    n = shape_of(ans)[0]
    return ans[:, :n], _rows(raw(ans)[:, n].astype(int))


def _right_solve_upper(y, lu):
    """y U^-1, as (U^-T y^T)^T."""
    return ops.transpose(_solve(lu, ops.transpose(y), trans=1))


def _lu_jvp(t, ans, a):
    # L U = a[perm]: dL U + L dU = t[perm], so X = L^-1 t[perm] U^-1 = L^-1 dL + dU U^-1
    # splits into a strictly lower part (L^-1 dL) and an upper one (dU U^-1)
    lu, perm = _lu_parts(ans)
    x = _right_solve_upper(_solve(lu, ops.take(t, perm, axis=0), lower=True,
                                  unit_diagonal=True), lu)
    unit_lower = ops.tril(lu, -1) + xp.eye(shape_of(lu)[0])
    change = ops.matmul(unit_lower, ops.tril(x, -1)) + ops.matmul(ops.triu(x), ops.triu(lu))
    return ops.concatenate([change, xp.zeros((shape_of(lu)[0], 1))], axis=1)


def _lu_vjp(g, ans, a):
    # the adjoint of _lu_jvp: Xbar = tril(L^T g, -1) + triu(g U^T) (L^T and U^T being
    # triangular, only g's own triangle reaches each), a[perm]'s gradient L^-T Xbar U^-T
    lu, perm = _lu_parts(ans)
    n = shape_of(lu)[0]
    g = g[:, :n]
    unit_lower = ops.tril(lu, -1) + xp.eye(n)
    xbar = ops.tril(ops.matmul(ops.transpose(unit_lower), g), -1) + \
        ops.triu(ops.matmul(g, ops.transpose(ops.triu(lu))))
    rows = _solve(lu, ops.transpose(_solve(lu, ops.transpose(xbar), lower=False)), trans=1,
                  lower=True, unit_diagonal=True)
    return ops.take(rows, xp.argsort(perm), axis=0)


_lu.defvjp(_lu_vjp)
_lu.defjvp(_lu_jvp)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)`` for lu_solve, as scipy.linalg.lu_factor: lu holds U on and above the
    diagonal and L's multipliers below it (L's unit diagonal left out), piv LAPACK's
    row interchanges. lu is differentiable in a (piv is piecewise constant); a is an
    (n, n) matrix.

    >>> import chainrule.scipy.linalg as sla
    >>> lu, piv = sla.lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> np.round(lu, 12).tolist(), piv.tolist()
    ([[3.0, 4.0], [0.333333333333, 0.666666666667]], [1, 1])
    """
    _check_square("lu_factor", a)
    packed = _lu(a)
    n = shape_of(a)[0]
    return packed[:, :n], raw(packed)[:, n].astype(xp.int32)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x solving a x = b (``trans=1`` or 2: a^T x = b) from ``lu_factor(a)``, as
    scipy.linalg.lu_solve: triangular solves, differentiable in lu (so in a, through
    lu_factor) and in b.

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> np.round(sla.lu_solve(sla.lu_factor(a), np.array([5.0, 11.0])), 12).tolist()
    [1.0, 2.0]
    >>> np.round(cr.grad(lambda a: cr.sum(sla.lu_solve(sla.lu_factor(a), np.ones(2))))(a),
    ...          12).tolist()
    [[-0.5, 0.5], [0.5, -0.5]]
    """
    lu, piv = lu_and_piv
    n = shape_of(lu)[0] if len(shape_of(lu)) == 2 else None
    if n is None or shape_of(lu) != (n, n) or shape_of(piv) != (n,) or \
            len(shape_of(b)) not in (1, 2) or shape_of(b)[0] != n:
        raise ValueError(f"lu_solve: lu of shape {shape_of(lu)}, piv of shape "
                         f"{shape_of(piv)} and b of shape {shape_of(b)}; expected (n, n), "
                         f"(n,) and (n,) or (n, k)")
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"lu_solve: trans={trans!r}; expected 0, 1 or 2")
    perm = _rows(xp.as_array(piv))
    if trans in (0, "N"):  # a[perm] = L U: L y = b[perm], then U x = y
        y = _solve(lu, ops.take(b, perm, axis=0), lower=True, unit_diagonal=True)
        return _solve(lu, y, lower=False)
    # a^T = U^T L^T P^T: U^T z = b, L^T w = z, and x[perm] = w (real a: 2 is 1)
    z = _solve(lu, b, trans=1, lower=False)
    w = _solve(lu, z, trans=1, lower=True, unit_diagonal=True)
    return ops.take(w, xp.argsort(perm), axis=0)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """The LU decomposition a = p @ l @ u, as scipy.linalg.lu: ``(p, l, u)``, p a
    permutation matrix, l unit lower triangular, u upper triangular; with
    ``permute_l=True``, ``(p @ l, u)``; with ``p_indices=True``, p as row indices
    (a = l[p] @ u). l and u are differentiable in a; a is an (n, n) matrix.

    >>> import chainrule.scipy.linalg as sla
    >>> p, l, u = sla.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> p.tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    >>> np.round(l, 12).tolist(), np.round(u, 12).tolist()
    ([[1.0, 0.0], [0.333333333333, 1.0]], [[3.0, 4.0], [0.0, 0.666666666667]])
    """
    _check_square("lu", a)
    packed, piv = lu_factor(a)
    n = shape_of(a)[0]
    lower = ops.tril(packed, -1) + xp.eye(n)
    upper = ops.triu(packed)
    order = xp.argsort(_rows(piv))  # a = lower[order] @ upper
    if permute_l:
        return ops.take(lower, order, axis=0), upper
    p = order if p_indices else (order[:, None] == xp.arange(n)).astype(float)  # eye[order]
    return p, lower, upper

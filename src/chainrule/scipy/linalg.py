"""scipy.linalg's triangular and Cholesky solves, differentiable: what a Gaussian
process or a Kalman filter written against SciPy calls.

    >>> import chainrule.scipy.linalg as sla
    >>> L = np.array([[2.0, 0.0], [1.0, 3.0]])
    >>> sla.solve_triangular(L, np.array([2.0, 7.0]), lower=True).tolist()
    [1.0, 2.0]

The other names of scipy.linalg that chainrule differentiates are ``cr.linalg``'s
(``solve``, ``inv``, ``det``, ``eigh``, ``svd``, ``qr``...), re-exported here.
"""

import scipy.linalg as _sl

from .. import arrays as xp, rules as ops
from ..linalg import det, eigh, inv, lstsq, pinv, qr, slogdet, solve, svd  # noqa: F401
from ..primitive import Primitive, shape_of

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "solve", "inv", "det",
           "slogdet", "eigh", "svd", "qr", "lstsq", "pinv"]


def _triangle(m, lower):
    """The lower (or upper) triangle of the last two axes of m, the rest 0."""
    return ops.tril(m) if lower else ops.triu(m)


def _solve_forward(a, b, trans=0, lower=False, unit_diagonal=False):
    return _sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


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

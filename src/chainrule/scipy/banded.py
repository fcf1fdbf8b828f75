"""scipy.linalg.solve_banded, differentiable: a banded system solved in its band storage.

The matrix A (n x n, ``l`` diagonals below the main one and ``u`` above) is given as
``ab`` of shape (l + u + 1, n), with ab[u + i - j, j] = A[i, j]: row r of ab holds the
diagonal of offset u - r, aligned by column. SciPy solves in O(n (l + u)^2); the rules
stay in band storage too, written with the solve itself and shifts of rows:

    x = A^-1 b:   dx = A^-1 (db - dA x),   b_bar = A^-T g,   A_bar = -b_bar x^T on the band,

where A^T is banded with l and u swapped, and (dA x) and the band of b_bar x^T are sums
of shifted products, one per stored diagonal.
"""

import functools

import scipy.linalg as _sl

from .. import arrays as xp, rules as ops
from ..primitive import Primitive, shape_of

__all__ = ["solve_banded"]


def _shift(v, s):
    """w with w[j] = v[j + s] along the first axis (0 where j + s falls outside)."""
    n = shape_of(v)[0]
    if s == 0:
        return v
    rest = [(0, 0)] * (len(shape_of(v)) - 1)
    if abs(s) >= n:
        return 0.0 * v
    if s > 0:
        return ops.pad(v[s:], [(0, s)] + rest)
    return ops.pad(v[:n + s], [(-s, 0)] + rest)


def _column(row, like):
    """A row of ab as a column against ``like`` (n,) or (n, k)."""
    return row if len(shape_of(like)) == 1 else ops.reshape(row, (-1, 1))


def _band_matvec(lower, upper, ab, x):
    """A x from A's band storage: row r is the diagonal of offset d = u - r, so
    (A x)[i] gets ab[r, i + d] x[i + d]."""
    total = 0.0
    for r in range(lower + upper + 1):
        d = upper - r
        total = total + _shift(_column(ab[r], x) * x, d)
    return total


def _band_transposed(lower, upper, ab):
    """The band storage of A^T (``upper`` diagonals below, ``lower`` above): its row r
    is ab's row l + u - r, shifted by r - l columns."""
    rows = [_shift(ab[lower + upper - r], r - lower) for r in range(lower + upper + 1)]
    return ops.stack(rows)


def _band_of_outer(lower, upper, left, right):
    """The band of left right^T (summed over columns for matrices), in band storage:
    row r, column j holds left[j - d] right[j] with d = u - r."""
    rows = []
    for r in range(lower + upper + 1):
        d = upper - r
        product = _shift(left, -d) * right
        rows.append(product if len(shape_of(right)) == 1 else ops.sum(product, axis=1))
    return ops.stack(rows)


def _forward(ab, b, lower=0, upper=0):
    return xp.call(functools.partial(_sl.solve_banded, (lower, upper)), ab, b)


_solve = Primitive(_forward, "solve_banded")


def _vjp_ab(g, x, ab, b, lower=0, upper=0):
    return -_band_of_outer(lower, upper, _vjp_b(g, x, ab, b, lower, upper), x)


def _vjp_b(g, x, ab, b, lower=0, upper=0):
    return _solve(_band_transposed(lower, upper, ab), g, lower=upper, upper=lower)


def _jvp_ab(t, x, ab, b, lower=0, upper=0):
    return -_solve(ab, _band_matvec(lower, upper, t, x), lower=lower, upper=upper)


def _jvp_b(t, x, ab, b, lower=0, upper=0):
    return _solve(ab, t, lower=lower, upper=upper)


_solve.defvjp(_vjp_ab, _vjp_b)
_solve.defjvp(_jvp_ab, _jvp_b)


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """x solving A x = b for a banded A given in band storage ``ab`` with ``(l, u)``
    diagonals below and above the main one, as scipy.linalg.solve_banded; differentiable
    in ``ab`` and ``b``, to any order.

    >>> import chainrule.scipy.linalg as sla
    >>> ab = np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])  # tridiagonal
    >>> sla.solve_banded((1, 1), ab, np.array([5.0, 6.0, 5.0])).tolist()
    [1.0, 1.0, 1.0]
    """
    lower, upper = (int(v) for v in l_and_u)
    shape, rhs = shape_of(ab), shape_of(b)
    if len(shape) != 2 or shape[0] != lower + upper + 1 or len(rhs) not in (1, 2) \
            or rhs[0] != shape[1]:
        raise ValueError(f"solve_banded: expected ab of shape (l + u + 1, n) = "
                         f"({lower + upper + 1}, n) and b of shape (n,) or (n, k), got ab "
                         f"{shape} and b {rhs}")
    return _solve(ab, b, lower=lower, upper=upper)

"""Solving linear systems: the inverse (``inv``), ``solve`` and ``solve_triangular``, each
on a matrix or on a batch of them (leading axes), as numpy.linalg does. Their rules are
solves again (the gradient of a solve is a solve with the transpose), so derivatives of
any order follow; for nearly singular matrices the gradients are as large as the
calculus says.

The floor of the linear algebra beyond the product, a file of its own because the
factorizations (``decompositions``) and the determinants (``determinants``) write their
rules with these solves: they import this file, and it neither of them. What composes
from them all (pinv, trace, matrix_power, lstsq, the norms of ``cr.linalg.norm``) is in
``matrix_functions``.
"""


from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import LEADING_AXES, ndim_of, raw, shape_of
from .common import Result, op, tangent_lead
from .linalg import matmul
from .matrices import check_square, column, mT
from .shapes import expand_dims, reshape

__all__ = ["inv", "solve", "solve_triangular"]


@op("inv", batching=LEADING_AXES)
def inv(a):
    """The inverse of a square matrix (or of each in a batch), as np.linalg.inv.

    A singular matrix raises NumPy's LinAlgError. The gradient is -A^-T g A^-T.

    >>> a = cr.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
    >>> y = cr.inv(a)                         # or cr.linalg.inv(a)
    >>> y.data.tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    >>> y.sum().backward()
    >>> a.grad.tolist()
    [[-0.25, -0.125], [-0.125, -0.0625]]
    """
    check_square("inv", a)
    return xp.linalg.inv(a)


# Giles 2008, sec. 2.2.3: d(A^-1) = -A^-1 dA A^-1, so Abar = -A^-T Cbar A^-T.
inv.defvjp(lambda g, ans, a: -matmul(matmul(mT(ans), g), mT(ans)))
inv.defjvp(lambda t, ans, a: -matmul(matmul(ans, t), ans))


@op("solve")
def solve(a, b):
    """The solution x of a @ x = b, as np.linalg.solve: b is a vector (shape (n,)) or
    a matrix of right-hand sides (shape (..., n, k)); a batch of a broadcasts.

    The gradients are solve(a^T, g) for b and -solve(a^T, g) x^T for a.

    >>> a = cr.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
    >>> b = cr.tensor([2.0, 2.0], requires_grad=True)
    >>> x = cr.solve(a, b)                    # or cr.linalg.solve(a, b)
    >>> x.data.tolist()
    [1.0, 0.5]
    >>> x.sum().backward()
    >>> b.grad.tolist(), a.grad.tolist()
    ([0.5, 0.25], [[-0.5, -0.25], [-0.25, -0.125]])
    """
    check_square("solve", a)
    n = shape_of(a)[-1]
    b_rows = shape_of(b)[0] if ndim_of(b) == 1 else shape_of(b)[-2] if ndim_of(b) >= 2 else None
    if b_rows != n:
        raise ValueError(f"solve: a of shape {shape_of(a)} and b of shape {shape_of(b)}; "
                         f"expected b of shape ({n},) or (..., {n}, k)")
    return xp.linalg.solve(a, b)


def _solve_vjp_b(g, ans, a, b):
    """solve(a^T, g), with g a (batch of) vector(s) when b is one."""
    if ndim_of(b) == 1:
        return solve(mT(a), column(g))[..., 0]
    return solve(mT(a), g)


def _solve_vjp_a(g, ans, a, b):
    gb = _solve_vjp_b(g, ans, a, b)
    if ndim_of(b) == 1:  # -gb x^T, an outer product for each vector
        return -expand_dims(gb, -1) * expand_dims(ans, -2)
    return -matmul(gb, mT(ans))


def _behind_batch(t, x, ndim):
    """A tangent of x with 1s between its leading axes and x's, to ``ndim`` axes after
    them: x broadcast against a longer batch, while the tangent's axes stay in front."""
    return reshape(t, tangent_lead(t, x) + (1,) * (ndim - ndim_of(x)) + shape_of(x))


def _solve_jvp_a(t, ans, a, b):
    if ndim_of(b) == 1:
        t = _behind_batch(t, a, ndim_of(ans) + 1)
        return -solve(a, matmul(t, column(ans)))[..., 0]
    return -solve(a, matmul(_behind_batch(t, a, ndim_of(ans)), ans))


def _solve_jvp_b(t, ans, a, b):
    t = _behind_batch(t, b, ndim_of(ans))
    if ndim_of(b) == 1:
        return solve(a, column(t))[..., 0]
    return solve(a, t)


# Giles 2008, sec. 2.3.1: x = A^-1 B; Bbar = A^-T xbar, Abar = -Bbar x^T;
# dx = A^-1 (dB - dA x).
solve.defvjp(_solve_vjp_a, _solve_vjp_b)
solve.defjvp(_solve_jvp_a, _solve_jvp_b)


def solve_triangular(a: ArrayLike, b: ArrayLike, lower: bool = False) -> Result:
    """The solution x of a @ x = b for a triangular a, reading only the triangle
    ``lower`` names (scipy.linalg.solve_triangular's default is upper, lower=False).

    b as for ``solve``. Only the triangle of a gets a gradient: the other entries
    take no part.

    >>> a = cr.tensor([[2.0, 0.0], [1.0, 4.0]], requires_grad=True)
    >>> cr.solve_triangular(a, cr.tensor([2.0, 5.0]), lower=True).data.tolist()
    [1.0, 1.0]
    """
    check_square("solve_triangular", a)
    n = shape_of(a)[-1]
    mask = xp.tril(xp.ones((n, n), dtype=bool)) if lower else xp.triu(xp.ones((n, n), bool))
    return solve(a * mask.astype(xp.result_type(raw(a))), b)

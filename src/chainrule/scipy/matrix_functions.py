"""scipy.linalg's matrix functions and Sylvester solves, differentiable: expm, logm,
sqrtm, solve_sylvester and solve_continuous_lyapunov, for real square matrices.

    >>> import chainrule.scipy.linalg as sla
    >>> sla.expm(np.array([[0.0, 1.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]

SciPy computes every value. The derivative of a primary matrix function f (exp, log)
in a direction E is its Fréchet derivative L_f(A, E), the upper-right block of
f([[A, E], [0, A]]) (Higham 2008, "Functions of Matrices", thm. 3.6); its adjoint is
L_f(A^T, .). That derivative is an operation of its own whose rules are the same
block trick one size up, so derivatives of any order follow. The square root's
derivative X solves sqrtm(A) X + X sqrtm(A) = E, a Sylvester equation, and the
Sylvester solve's rules are Sylvester solves again.

Each takes one (n, n) matrix, no batch; a result that would be complex (the
logarithm of a matrix with a negative eigenvalue) is refused with a ValueError.
"""

import scipy.linalg as _sl

from .. import arrays as xp, rules as ops
from ..primitive import Primitive, shape_of

__all__ = ["expm", "logm", "sqrtm", "solve_sylvester", "solve_continuous_lyapunov"]


def _check_square(name, a, what="a"):
    shape = shape_of(a)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name}: {what} of shape {shape}; expected a square matrix of "
                         f"shape (n, n)")


def _real(name, result, refusal):
    """SciPy's result, which is complex where no real one exists: refused then."""
    if xp.iscomplexobj(result):
        if xp.any(xp.imag(result) != 0):
            raise ValueError(f"{name}: {refusal}")
        result = xp.real(result)
    return result


# ---------------------------------------------------------------------------------------
# Primary matrix functions and their Fréchet derivatives
# ---------------------------------------------------------------------------------------

def _block(a, e):
    """[[a, e], [0, a]], with the table's operations."""
    zero = xp.zeros(shape_of(a))
    return ops.concatenate([ops.concatenate([a, e], axis=1),
                            ops.concatenate([zero, a], axis=1)], axis=0)


def _frechet_forward(f, a, e):
    a, e = xp.asarray(a, dtype=float), xp.asarray(e, dtype=float)
    n = a.shape[0]
    size_a, size_e = xp.linalg.norm(a, 1), xp.linalg.norm(e, 1)
    if size_e == 0:
        return xp.zeros_like(a)
    # L is linear in E, so E is brought to A's size first: rounding errors relative to
    # the block's norm would swamp a tiny E, and a huge E would spoil A's accuracy
    scale = size_a / size_e if size_a else 1.0
    corner = f(xp.block([[a, scale * e], [xp.zeros_like(a), a]]))[:n, n:]
    return corner / scale


def _primary(name, f, refusal):
    """f (SciPy's function of a real matrix) as a primitive, and its Fréchet derivative
    L(a, e) as another, each with rules written with the other and itself."""
    # SciPy's functions take NumPy arrays only: xp.call hands them over (under cr.jit,
    # as one call of the program)
    value = Primitive(lambda a: xp.call(lambda m: _real(name, f(m), refusal), a), name)
    frechet = Primitive(lambda a, e: xp.call(
        lambda m, d: _real(name, _frechet_forward(f, m, d), refusal), a, e), f"{name}_frechet")

    def corner_vjp(g, ans, a, e):
        # L(a, e) is f(M)'s upper-right block, M = [[a, e], [0, a]]: M's gradient is
        # L(M^T, G) for G = [[0, g], [0, 0]], and a sits in both diagonal blocks
        n = shape_of(a)[0]
        big = frechet(ops.transpose(_block(a, e)), ops.pad(g, ((0, n), (n, 0))))
        return big[:n, :n] + big[n:, n:]

    def corner_jvp(t, ans, a, e):
        n = shape_of(a)[0]
        return frechet(_block(a, e), _block(t, xp.zeros(shape_of(t))))[:n, n:]

    value.defvjp(lambda g, ans, a: frechet(ops.transpose(a), g))
    value.defjvp(lambda t, ans, a: frechet(a, t))
    frechet.defvjp(corner_vjp, lambda g, ans, a, e: frechet(ops.transpose(a), g))
    frechet.defjvp(corner_jvp, lambda t, ans, a, e: frechet(a, t))
    return value, frechet


_expm, _expm_frechet = _primary("expm", _sl.expm,
                                "the result is complex; expected a real matrix")
_logm, _logm_frechet = _primary(
    "logm", _sl.logm, "the matrix has no real logarithm (an eigenvalue on the negative "
    "real axis); expected a real matrix whose real eigenvalues are all positive")


def expm(A):
    """The matrix exponential e^A of a real square matrix, as scipy.linalg.expm;
    differentiable to any order (its derivative is the Fréchet derivative, computed
    with SciPy's expm of a matrix twice the size).

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.array([[1.0, 2.0], [0.0, 1.0]])
    >>> np.round(sla.expm(a), 10).tolist()
    [[2.7182818285, 5.4365636569], [0.0, 2.7182818285]]
    >>> np.round(cr.grad(lambda a: cr.trace(sla.expm(a)))(a), 10).tolist()   # e^(A^T)
    [[2.7182818285, 0.0], [5.4365636569, 2.7182818285]]
    """
    _check_square("expm", A, "A")
    return _expm(A)


def logm(A, disp=True):
    """The principal logarithm of a real square matrix, as scipy.linalg.logm, where it is
    real: a matrix with a negative real eigenvalue has no real principal logarithm, and
    gets a ValueError (a singular one has none either; SciPy warns). Differentiable to
    any order (the Fréchet derivative, from SciPy's logm of a matrix twice the size).
    ``disp`` is accepted and ignored: the result alone is returned.

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.array([[np.e, 1.0], [0.0, np.e]])
    >>> np.round(sla.logm(a), 10).tolist()
    [[1.0, 0.3678794412], [0.0, 1.0]]
    >>> np.round(cr.grad(lambda a: cr.trace(sla.logm(a)))(a), 10).tolist()   # A^-T
    [[0.3678794412, 0.0], [-0.1353352832, 0.3678794412]]
    """
    _check_square("logm", A, "A")
    return _logm(A)


# ---------------------------------------------------------------------------------------
# Sylvester and Lyapunov equations, and the square root through them
# ---------------------------------------------------------------------------------------

_sylvester = Primitive(lambda a, b, q: xp.call(_sl.solve_sylvester, a, b, q), "solve_sylvester")


def _sylvester_adjoint(g, a, b):
    """Q's gradient: X -> A X + X B has the adjoint Y -> A^T Y + Y B^T, so it is the
    solution of that equation with g on the right."""
    return _sylvester(ops.transpose(a), ops.transpose(b), g)


# A X + X B = Q: dA X + A dX + dX B + X dB = dQ, so dX solves the same equation with
# dQ - dA X - X dB on the right; Abar = -Qbar X^T, Bbar = -X^T Qbar.
_sylvester.defvjp(
    lambda g, ans, a, b, q: -ops.matmul(_sylvester_adjoint(g, a, b), ops.transpose(ans)),
    lambda g, ans, a, b, q: -ops.matmul(ops.transpose(ans), _sylvester_adjoint(g, a, b)),
    lambda g, ans, a, b, q: _sylvester_adjoint(g, a, b))
_sylvester.defjvp(lambda t, ans, a, b, q: _sylvester(a, b, -ops.matmul(t, ans)),
                  lambda t, ans, a, b, q: _sylvester(a, b, -ops.matmul(ans, t)),
                  lambda t, ans, a, b, q: _sylvester(a, b, t))


def solve_sylvester(a, b, q):
    """X solving a X + X b = q, as scipy.linalg.solve_sylvester (a (m, m), b (n, n),
    q (m, n)); differentiable in all three. It has one solution when no eigenvalue of
    a is minus one of b.

    >>> import chainrule.scipy.linalg as sla
    >>> a, b = np.array([[2.0, 0.0], [0.0, 3.0]]), np.array([[1.0]])
    >>> sla.solve_sylvester(a, b, np.array([[3.0], [8.0]])).tolist()
    [[1.0], [2.0]]
    >>> cr.grad(lambda q: cr.sum(sla.solve_sylvester(a, b, q)))(np.ones((2, 1))).tolist()
    [[0.3333333333333333], [0.25]]
    """
    sa, sb, sq = shape_of(a), shape_of(b), shape_of(q)
    if len(sa) != 2 or len(sb) != 2 or sa[0] != sa[1] or sb[0] != sb[1] or \
            tuple(sq) != (sa[0], sb[0]):
        raise ValueError(f"solve_sylvester: a of shape {sa}, b of shape {sb} and q of "
                         f"shape {sq}; expected (m, m), (n, n) and (m, n)")
    return _sylvester(a, b, q)


def solve_continuous_lyapunov(a, q):
    """X solving a X + X a^T = q, as scipy.linalg.solve_continuous_lyapunov for real
    matrices: the Sylvester equation with b = a^T, differentiable in a and q.

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.array([[-1.0, 0.0], [0.0, -2.0]])
    >>> sla.solve_continuous_lyapunov(a, -np.eye(2)).tolist()   # a stable system's Gramian
    [[0.5, 0.0], [0.0, 0.25]]
    """
    sa, sq = shape_of(a), shape_of(q)
    if len(sa) != 2 or sa[0] != sa[1] or tuple(sq) != tuple(sa):
        raise ValueError(f"solve_continuous_lyapunov: a of shape {sa} and q of shape "
                         f"{sq}; expected both (n, n)")
    return _sylvester(a, ops.transpose(a), q)


_SQRTM_REFUSAL = ("the matrix has no real square root (a negative real eigenvalue); "
                  "expected a real matrix whose real eigenvalues are all nonnegative")
_sqrtm = Primitive(lambda a: xp.call(lambda m: _real("sqrtm", _sl.sqrtm(m), _SQRTM_REFUSAL), a),
                   "sqrtm")
# S S = A: S dS + dS S = dA, a Sylvester equation in dS; its adjoint has S^T for S
_sqrtm.defvjp(lambda g, ans, a: _sylvester(ops.transpose(ans), ops.transpose(ans), g))
_sqrtm.defjvp(lambda t, ans, a: _sylvester(ans, ans, t))


def sqrtm(A, disp=True, blocksize=64):
    """The principal square root of a real square matrix, as scipy.linalg.sqrtm, where it
    is real: a matrix with a negative real eigenvalue gets a ValueError. The derivative
    X in a direction E solves sqrtm(A) X + X sqrtm(A) = E (it needs no eigenvalue 0).
    ``disp`` and ``blocksize`` are accepted and ignored.

    >>> import chainrule.scipy.linalg as sla
    >>> a = np.array([[4.0, 0.0], [0.0, 9.0]])
    >>> sla.sqrtm(a).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    >>> cr.grad(lambda a: cr.trace(sla.sqrtm(a)))(a).tolist()   # 1 / (2 sqrt(a_ii))
    [[0.25, 0.0], [0.0, 0.16666666666666666]]
    """
    _check_square("sqrtm", A, "A")
    return _sqrtm(A)

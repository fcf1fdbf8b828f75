"""scipy.sparse.linalg's solvers, differentiable in the matrix's entries and the right side.

``spsolve`` (a direct sparse LU) and the iterative ``cg``, ``minres`` (symmetric),
``gmres`` and ``bicgstab`` take SciPy's arguments and solve with SciPy. A is a sparse
matrix of ``chainrule.scipy.sparse`` (entries that may be differentiated), a SciPy
sparse array (a constant) or a dense 2-D array. The derivative of x = A^-1 b is one more
solve with the same method, on A^T in reverse mode and on A in forward mode:

    dx = A^-1 (db - dA x),   b_bar = A^-T g,   data_bar[k] = -b_bar[row[k]] x[col[k]],

written with the solve and the sparse product themselves, so derivatives of any order
follow. An iterative solve's derivative is as accurate as its tolerance: pass a small
``rtol`` when the derivative matters. A solve that stops before its tolerance (SciPy's
``info`` > 0) returns ``(x, info)`` as SciPy does on plain arrays, and raises when its
derivative is being taken, since it would be the derivative of another problem.

A may also be SciPy's ``LinearOperator`` (matrix-free), a constant: x is then
differentiable in b, the derivative's solve made with the operator (forward mode) or
its transpose, whose products are the operator's ``rmatvec`` (reverse mode; cg and
minres take A = A^T).

The iterative solvers also take A as a function v -> A v, as jax.scipy.sparse.linalg
does (and ``tol=``, JAX's name for ``rtol``): x is then differentiable in b and in the
values the function closes over, through ``cr.custom_linear_solve`` (the derivative's
solves use the same method, with v -> A^T v found by reverse mode for gmres and
bicgstab). Such a solve that stops before its tolerance raises, since JAX returns no
``info`` to check.

    >>> import chainrule.scipy.sparse as sp
    >>> from chainrule.scipy.sparse.linalg import cg
    >>> A = lambda d: sp.coo_array((d, ([0, 1, 0, 1], [0, 1, 1, 0])), shape=(2, 2))
    >>> d = np.array([2.0, 2.0, 1.0, 1.0])               # [[2, 1], [1, 2]]
    >>> x = lambda d: cg(A(d), np.array([3.0, 3.0]), rtol=1e-12)[0]
    >>> x(d).round(6).tolist(), cr.grad(lambda d: x(d)[0])(d).round(6).tolist()
    ([1.0, 1.0], [-0.666667, 0.333333, -0.666667, 0.333333])
"""

import numpy as np
import scipy.sparse as _sp
import scipy.sparse.linalg as _sla

from ... import arrays as xp
from ...arrays import ARRAYS
from ...primitive import Box, Primitive, shape_of
from ...transforms.custom_root import custom_linear_solve
from .matrix import SparseMatrix, as_sparse, matvec

__all__ = ["spsolve", "cg", "minres", "gmres", "bicgstab"]

_SYMMETRIC = {"cg", "minres"}  # A = A^T: the adjoint solve takes the same preconditioner


def _scipy_matrix(data, row, col, n):
    return _sp.coo_array((data, (row, col)), shape=(n, n)).tocsc()


def _run(method, matrix, b, options):
    """SciPy's solve: (x, info); info 0 where it converged (spsolve always)."""
    if method == "spsolve":
        return np.asarray(_sla.spsolve(matrix, b, **options)), 0
    return getattr(_sla, method)(matrix, b, **options)


def _solve_forward(data, b, row, col, method, options):
    def solve(data, b):
        x, info = _run(method, _scipy_matrix(data, row, col, b.shape[0]), b, dict(options))
        if info != 0:
            raise ValueError(_not_converged(method, info, b.shape[0]))
        return x.reshape(b.shape).astype(np.result_type(data, b), copy=False)
    return xp.call(solve, data, b)


_solve = Primitive(_solve_forward, "sparse_solve")


def _transposed(method, options):
    """The options of the adjoint solve: a preconditioner of A serves A^T transposed."""
    options = dict(options)
    M = options.get("M")
    if M is not None and method not in _SYMMETRIC:
        if not hasattr(M, "T"):
            raise TypeError(f"{method}: the preconditioner M has no transpose, which the "
                            f"derivative's solve with A^T needs")
        options["M"] = M.T
    return tuple(sorted(options.items()))


def _vjp_b(g, x, data, b, row, col, method, options):
    return _solve(data, g, row=col, col=row, method=method,
                  options=_transposed(method, options))


def _vjp_data(g, x, data, b, row, col, method, options):
    adjoint = _vjp_b(g, x, data, b, row, col, method, options)
    return -(adjoint[row] * x[col])


def _jvp_b(t, x, data, b, row, col, method, options):
    return _solve(data, t, row=row, col=col, method=method, options=options)


def _jvp_data(t, x, data, b, row, col, method, options):
    change = matvec(t, x, row=row, col=col, rows=shape_of(b)[0])
    return -_solve(data, change, row=row, col=col, method=method, options=options)


_solve.defvjp(_vjp_data, _vjp_b)
_solve.defjvp(_jvp_data, _jvp_b)


# ---------------------------------------------------------------------------------------
# A as a LinearOperator: a constant (its products are SciPy's, on plain numbers); x is
# differentiable in b, with the transpose's products (``rmatvec``) in reverse mode.
# ---------------------------------------------------------------------------------------

class _Operator:
    """A LinearOperator handed to the solve as a parameter: held, not shown as an array
    (the engine would take a value with a shape and a dtype for an array to convert)."""

    __slots__ = ("A",)

    def __init__(self, A):
        self.A = A


def _operator_solve_forward(b, operator, method, options):
    def solve(b):
        x, info = _run(method, operator.A, b, dict(options))
        if info != 0:
            raise ValueError(_not_converged(method, info, b.shape[0]))
        return np.asarray(x).reshape(b.shape).astype(np.result_type(operator.A.dtype, b),
                                                     copy=False)
    return xp.call(solve, b)


_operator_solve = Primitive(_operator_solve_forward, "operator_solve")


def _transpose_of(operator, method):
    """A^T as an operator: A itself for the symmetric methods; else SciPy's transpose,
    whose products are A's ``rmatvec``, which a LinearOperator made from a matvec alone
    lacks (then the derivative cannot be solved for: say so)."""
    if method in _SYMMETRIC:
        return operator
    A = operator.A
    try:
        A.rmatvec(np.zeros(A.shape[0], dtype=A.dtype))
    except NotImplementedError:
        raise TypeError(f"{method}: the derivative solves with A^T, and this "
                        f"LinearOperator has no rmatvec; give it one "
                        f"(LinearOperator(shape, matvec=..., rmatvec=...))") from None
    return _Operator(A.T)


_operator_solve.defvjp(lambda g, x, b, operator, method, options: _operator_solve(
    g, operator=_transpose_of(operator, method), method=method,
    options=_transposed(method, options)))
_operator_solve.defjvp(lambda t, x, b, operator, method, options: _operator_solve(
    t, operator=operator, method=method, options=options))


# ---------------------------------------------------------------------------------------
# SciPy's signatures
# ---------------------------------------------------------------------------------------

def _not_converged(method, info, n):
    return (f"{method}: the solve of {n} unknowns stopped before its tolerance (SciPy's "
            f"info = {info}), so its derivative would be of another problem: raise "
            f"maxiter, loosen rtol or pass a preconditioner M")


def _matrix_of(A, name):
    """(A as a SparseMatrix, its order), checking it is square."""
    if not isinstance(A, SparseMatrix) and not _sp.issparse(A) and len(shape_of(A)) == 2:
        n, m = shape_of(A)
        rows, cols = np.indices((n, m))
        A = SparseMatrix(A.reshape(-1) if isinstance(A, Box) else np.asarray(A).reshape(-1),
                         rows.ravel(), cols.ravel(), (n, m))
    A = as_sparse(A, name)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name}: expected a square matrix A, got shape {A.shape}")
    return A


def _plain(*values):
    """Nothing to differentiate: NumPy arrays, numbers and SciPy's sparse arrays only."""
    return all(type(v) in (np.ndarray, float, int) or _sp.issparse(v) for v in values)


# ---------------------------------------------------------------------------------------
# A as a function v -> A v (JAX's way): cr.custom_linear_solve, whose rules solve again
# ---------------------------------------------------------------------------------------

def _as_operator(function, n, dtype, what):
    """A function v -> A v on vectors of n entries as SciPy's LinearOperator."""
    def product(v):
        out = np.asarray(function(np.asarray(v).reshape(n)))
        if out.shape not in ((n,), (n, 1)):
            raise ValueError(f"{what}: expected a vector of shape ({n},) from the "
                             f"function, got shape {out.shape}")
        return out.reshape(n)
    return _sla.LinearOperator((n, n), matvec=product, dtype=dtype)


def _scipy_solver(method, options, transposed_options):
    """solve(matvec, rhs) for custom_linear_solve: SciPy's ``method`` with ``options``,
    raising where it stops before its tolerance. A derivative of a derivative calls it
    with a traced right side, or a matvec that closes over traced values: that solve is
    then a differentiable solve of its own, so derivatives of any order follow."""
    def solve(matvec, rhs):
        if not _numbers(rhs) or not _numbers(matvec(rhs)):  # (traced: by cr.jit too)
            return _function_solve(method, matvec, rhs, options, transposed_options)[0]
        rhs = np.asarray(rhs)
        n = rhs.shape[0]
        dtype = np.result_type(rhs, float)
        opts = dict(options)
        if callable(opts.get("M")) and not isinstance(opts["M"], _sla.LinearOperator):
            opts["M"] = _as_operator(opts["M"], n, dtype, f"{method}'s preconditioner M")
        x, info = _run(method, _as_operator(matvec, n, dtype, method), rhs, opts)
        if info != 0:
            raise ValueError(_not_converged(method, info, n))
        return np.asarray(x).reshape(rhs.shape)
    return solve


def _numbers(value):
    """Whether value is plain numbers: not a Box, nor a traced array of cr.jit."""
    return not isinstance(value, Box) and (type(value) is np.ndarray
                                           or type(value) not in ARRAYS)


def _refused_transpose(method):
    def transpose_solve(vecmat, rhs):
        raise TypeError(f"{method}: the derivative solves with A^T, preconditioned by "
                        f"M^T, and the preconditioner M is a function, which has no "
                        f"transpose; pass M as a matrix or a LinearOperator")
    return transpose_solve


def _function_solve(method, A, b, options, transposed_options=None):
    """(x, 0) of A(x) = b for a function A, differentiable in b and in what A closes
    over. ``transposed_options`` are those of the solves with A^T (a preconditioner M
    serves as M^T); None: found from ``options``."""
    if len(shape_of(b)) != 1:
        raise ValueError(f"{method}: with A a function, expected b a vector (1-d), got "
                         f"shape {shape_of(b)}")
    M = options.get("M")
    if method in _SYMMETRIC:  # the adjoint solve is the solve itself
        transpose_solve = None
    elif transposed_options is None and callable(M) and not hasattr(M, "T"):
        transpose_solve = _refused_transpose(method)
    else:
        if transposed_options is None:
            transposed_options = dict(_transposed(method, options))
        # (a solve with A^T, whose own adjoint is with A again)
        transpose_solve = _scipy_solver(method, transposed_options, options)
    x = custom_linear_solve(A, b, _scipy_solver(method, options, transposed_options),
                            transpose_solve, symmetric=method in _SYMMETRIC)
    return x, 0


def _solve_with(method, name, A, b, options, iterative):
    if type(b) in (list, tuple):
        b = np.asarray(b, dtype=float)
    if callable(A) and not isinstance(A, _sla.LinearOperator) and not _sp.issparse(A):
        if not iterative:
            raise TypeError(f"{name}: expected a matrix (a LU factors its entries), got "
                            f"a function; solve with it by cg, minres, gmres or bicgstab")
        return _function_solve(method, A, b, options)
    if isinstance(A, _sla.LinearOperator) and not _plain(b):
        if A.shape[0] != A.shape[1] or shape_of(b) != (A.shape[0],):
            raise ValueError(f"{name}: expected a square operator A and b of shape "
                             f"({A.shape[0]},), got A of shape {A.shape} and b of shape "
                             f"{shape_of(b)}")
        x = _operator_solve(b, operator=_Operator(A), method=method,
                            options=tuple(sorted(options.items())))
        return (x, 0) if iterative else x
    if _plain(A, b) or isinstance(A, _sla.LinearOperator):  # nothing to differentiate: SciPy as it is, info included
        matrix = A if _sp.issparse(A) or isinstance(A, _sla.LinearOperator) else \
            np.asarray(A)
        x, info = _run(method, matrix, np.asarray(b), options)
        return (x, info) if iterative else x
    A = _matrix_of(A, name)
    if shape_of(b)[:1] != (A.shape[0],) or len(shape_of(b)) > (1 if iterative else 2):
        raise ValueError(f"{name}: A of shape {A.shape} and b of shape {shape_of(b)}: "
                         f"expected b of shape ({A.shape[0]},)"
                         + ("" if iterative else f" or ({A.shape[0]}, k)"))
    x = _solve(A.data, b, row=A.row, col=A.col, method=method,
               options=tuple(sorted(options.items())))
    return (x, 0) if iterative else x


def spsolve(A, b, permc_spec=None, use_umfpack=True):
    """x solving A x = b by a sparse LU (scipy.sparse.linalg.spsolve), differentiable in
    A's entries and in b, to any order.

    >>> import chainrule.scipy.sparse as sp
    >>> from chainrule.scipy.sparse.linalg import spsolve
    >>> w = np.array([4.0, 1.0, 1.0, 4.0])
    >>> A = lambda w: sp.coo_array((w, ([0, 0, 1, 1], [0, 1, 0, 1])), shape=(2, 2))
    >>> spsolve(A(w), np.array([5.0, 5.0])).tolist()
    [1.0, 1.0]
    >>> cr.grad(lambda w: spsolve(A(w), np.array([5.0, 5.0])).sum())(w).round(3).tolist()
    [-0.2, -0.2, -0.2, -0.2]
    """
    if isinstance(A, _sla.LinearOperator):
        raise TypeError("spsolve: expected a matrix (a LU factors its entries), got a "
                        "LinearOperator; solve with it by cg, minres, gmres or bicgstab")
    options = {} if permc_spec is None else {"permc_spec": permc_spec}
    return _solve_with("spsolve", "spsolve", A, b, options, iterative=False)


def _iterative(method, A, b, x0, options, tol=None):
    if tol is not None:  # (JAX's name for SciPy's rtol)
        options["rtol"] = tol
    options = {k: v for k, v in options.items() if v is not None or k == "maxiter"}
    if x0 is not None:  # (where the iteration starts: not differentiated)
        options["x0"] = np.asarray(getattr(x0, "_data", x0))
    return _solve_with(method, method, A, b, options, iterative=True)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, tol=None):
    """(x, info) of A x = b by conjugate gradients (A symmetric positive definite), as
    scipy.sparse.linalg.cg; x differentiable in A's entries and in b, to any order (the
    derivative solves with cg too).

    >>> import chainrule.scipy.sparse as sp
    >>> from chainrule.scipy.sparse.linalg import cg
    >>> A = sp.csr_array((np.array([4.0, 1.0, 1.0, 3.0]), [0, 1, 0, 1], [0, 2, 4]))
    >>> x, info = cg(A, np.array([1.0, 2.0]), rtol=1e-12)
    >>> x.round(6).tolist(), info
    ([0.090909, 0.636364], 0)
    >>> x, info = cg(lambda v: A @ v, np.array([1.0, 2.0]), tol=1e-12)  # as in JAX
    >>> x.round(6).tolist(), info
    ([0.090909, 0.636364], 0)
    """
    return _iterative("cg", A, b, x0, {"rtol": rtol, "atol": atol, "maxiter": maxiter,
                                       "M": M}, tol)


def minres(A, b, x0=None, *, rtol=1e-5, shift=0.0, maxiter=None, M=None, tol=None):
    """(x, info) of (A - shift I) x = b by MINRES (A symmetric, possibly indefinite), as
    scipy.sparse.linalg.minres; x differentiable in A's entries and in b, to any order
    (the derivative's solves are MINRES's with the same shift).

    >>> import chainrule.scipy.sparse as sp
    >>> from chainrule.scipy.sparse.linalg import minres
    >>> A = sp.csr_array((np.array([1.0, 2.0, 2.0, -1.0]), [0, 1, 0, 1], [0, 2, 4]))
    >>> x, info = minres(A, np.array([3.0, 1.0]), rtol=1e-12)
    >>> x.round(6).tolist(), info
    ([1.0, 1.0], 0)
    """
    options = {"rtol": rtol, "maxiter": maxiter, "M": M}
    if shift != 0.0:  # (SciPy's keyword, left out at 0 as the other methods have none)
        options["shift"] = float(shift)
    return _iterative("minres", A, b, x0, options, tol)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None,
          tol=None, solve_method=None):
    """(x, info) of A x = b by GMRES (any nonsingular A), as scipy.sparse.linalg.gmres; x
    differentiable in A's entries and in b, to any order (the derivative's solve is with
    A^T, by GMRES too).

    >>> import chainrule.scipy.sparse as sp
    >>> from chainrule.scipy.sparse.linalg import gmres
    >>> A = sp.csr_array((np.array([3.0, 1.0, 2.0]), [0, 1, 1], [0, 2, 3]))
    >>> x, info = gmres(A, np.array([4.0, 2.0]), rtol=1e-12)
    >>> x.round(6).tolist(), info
    ([1.0, 1.0], 0)
    """
    if solve_method not in (None, "batched", "incremental"):  # (JAX's, same answer)
        raise ValueError(f"gmres: solve_method must be 'batched' or 'incremental', got "
                         f"{solve_method!r}")
    return _iterative("gmres", A, b, x0, {"rtol": rtol, "atol": atol, "restart": restart,
                                          "maxiter": maxiter, "M": M}, tol)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None,
             tol=None):
    """(x, info) of A x = b by BiCGSTAB (any nonsingular A), as
    scipy.sparse.linalg.bicgstab; x differentiable in A's entries and in b, to any order.

    >>> import chainrule.scipy.sparse as sp
    >>> from chainrule.scipy.sparse.linalg import bicgstab
    >>> A = sp.csr_array((np.array([3.0, 1.0, 2.0]), [0, 1, 1], [0, 2, 3]))
    >>> x, info = bicgstab(A, np.array([4.0, 2.0]), rtol=1e-12)
    >>> x.round(6).tolist(), info
    ([1.0, 1.0], 0)
    """
    return _iterative("bicgstab", A, b, x0, {"rtol": rtol, "atol": atol,
                                             "maxiter": maxiter, "M": M}, tol)

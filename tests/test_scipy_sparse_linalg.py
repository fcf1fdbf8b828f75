"""chainrule.scipy.sparse and .sparse.linalg: sparse matrices with differentiable entries,
and SciPy's sparse solvers differentiated through them.

Values against SciPy; derivatives (first and second order, reverse and forward mode,
with respect to the matrix's entries and the right side) against JAX's dense solve of
the same matrix in float64, and against central differences of the re-solved problem.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as ssp
import scipy.sparse.linalg as ssla

import chainrule as cr
import chainrule.scipy.sparse as sp
import chainrule.scipy.sparse.linalg as spla
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

N = 12
# A tridiagonal, diagonally dominant matrix with two couplings further out, each stored
# as its own entry (the derivative is with respect to each)
PAIRS = [(i, i + 1) for i in range(N - 1)] + [(0, 7), (5, 2)]
UPPER, LOWER = [i for i, _ in PAIRS], [j for _, j in PAIRS]
ROW = np.concatenate([np.arange(N), UPPER, LOWER])
COL = np.concatenate([np.arange(N), LOWER, UPPER])
SOLVERS = {"spsolve": lambda A, b: spla.spsolve(A, b),
           "cg": lambda A, b: spla.cg(A, b, rtol=1e-14)[0],
           "minres": lambda A, b: spla.minres(A, b, rtol=1e-14)[0],
           "gmres": lambda A, b: spla.gmres(A, b, rtol=1e-14, restart=N)[0],
           "bicgstab": lambda A, b: spla.bicgstab(A, b, rtol=1e-14)[0]}
SYMMETRIC_ONLY = {"cg", "minres"}


def problem(name):
    """(entries, rows, cols, b) of a system the method solves (symmetric positive
    definite for cg and minres), drawn for this method."""
    rng = seeded("sparse solve", name)
    above = rng.uniform(-1, 1, len(PAIRS))
    below = above if name in SYMMETRIC_ONLY else rng.uniform(-1, 1, len(PAIRS))
    data = np.concatenate([rng.uniform(4, 5, N), above, below])
    return data, ROW, COL, rng.standard_normal(N)


def dense(data, row, col):
    """The same matrix in JAX, built so its entries are differentiated as ours are."""
    return jnp.zeros((N, N)).at[row, col].add(data)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_values_match_scipy(name):
    data, row, col, b = problem(name)
    A = ssp.coo_array((data, (row, col)), shape=(N, N)).tocsr()
    ours = SOLVERS[name](sp.coo_array((cr.tensor(data), (row, col)), shape=(N, N)), b)
    theirs = ssla.spsolve(A.tocsc(), b)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SOLVERS))
@pytest.mark.parametrize("argnum", [0, 1])
def test_first_and_second_derivatives_match_jax_in_both_modes(name, argnum):
    data, row, col, b = problem(name)
    solve = SOLVERS[name]
    weights = np.linspace(1, 2, N)

    def ours(data, b):
        x = solve(sp.coo_array((data, (row, col)), shape=(N, N)), b)
        return cr.sum(weights * x ** 3)

    def theirs(data, b):
        return jnp.sum(weights * jnp.linalg.solve(dense(data, row, col), b) ** 3)

    tol = dict(rtol=1e-8, atol=1e-10)
    want = jax.grad(theirs, argnums=argnum)(data, b)
    np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(data, b), want, **tol)
    np.testing.assert_allclose(cr.jacfwd(ours, argnums=argnum)(data, b), want, **tol)
    want = jax.hessian(theirs, argnums=argnum)(data, b)
    np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(data, b), want, **tol)
    np.testing.assert_allclose(
        cr.jacfwd(cr.jacrev(ours, argnums=argnum), argnums=argnum)(data, b), want, **tol)


@pytest.mark.parametrize("argnum", [0, 1])
def test_minres_with_a_shift_solves_and_differentiates_the_shifted_system(argnum):
    """minres(A, b, shift=s) solves (A - s I) x = b, as SciPy's; its derivatives, to
    second order, are those of that system's solution (JAX's dense solve)."""
    data, row, col, b = problem("minres")
    shift = 0.6
    weights = np.linspace(1, 2, N)

    def ours(data, b):
        x, info = spla.minres(sp.coo_array((data, (row, col)), shape=(N, N)), b,
                              rtol=1e-14, shift=shift)
        return cr.sum(weights * x ** 3)

    def theirs(data, b):
        shifted = dense(data, row, col) - shift * jnp.eye(N)
        return jnp.sum(weights * jnp.linalg.solve(shifted, b) ** 3)

    tol = dict(rtol=1e-8, atol=1e-10)
    scipys = ssla.minres(ssp.coo_array((data, (row, col)), shape=(N, N)).tocsr(), b,
                         rtol=1e-14, shift=shift)[0]
    np.testing.assert_allclose(float(ours(data, b)), float(np.sum(weights * scipys ** 3)),
                               rtol=1e-10)
    want = jax.grad(theirs, argnums=argnum)(data, b)
    np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(data, b), want, **tol)
    np.testing.assert_allclose(cr.jacfwd(ours, argnums=argnum)(data, b), want, **tol)
    np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(data, b),
                               jax.hessian(theirs, argnums=argnum)(data, b), **tol)


@pytest.mark.parametrize("name", ["spsolve", "gmres"])
def test_the_gradient_matches_central_differences_of_the_resolved_problem(name):
    data, row, col, b = problem(name)
    solve = SOLVERS[name]

    def f(data):
        return cr.sum(cr.sin(solve(sp.coo_array((data, (row, col)), shape=(N, N)), b)))

    grad = cr.grad(f)(data)
    h = 1e-6
    for k in (0, N, len(data) - 1):
        step = np.zeros_like(data)
        step[k] = h
        difference = (f(data + step) - f(data - step)) / (2 * h)
        assert abs(float(difference) - grad[k]) < 1e-7 * max(1.0, abs(grad[k]))


def test_on_plain_arrays_the_solvers_are_scipys_info_included():
    data, row, col, b = problem("gmres")
    A = ssp.coo_array((data, (row, col)), shape=(N, N)).tocsr()
    x, info = spla.gmres(A, b, rtol=1e-30, maxiter=1, restart=2)
    want, want_info = ssla.gmres(A, b, rtol=1e-30, maxiter=1, restart=2)
    np.testing.assert_array_equal(x, want)
    assert info == want_info > 0
    np.testing.assert_array_equal(spla.spsolve(A, b), ssla.spsolve(A, b))


def test_a_solve_that_stops_early_refuses_its_derivative():
    data, row, col, b = problem("bicgstab")

    def f(data):
        A = sp.coo_array((data, (row, col)), shape=(N, N))
        return cr.sum(spla.bicgstab(A, b, rtol=1e-30, maxiter=1)[0])

    with pytest.raises(ValueError, match=r"bicgstab: .*stopped before its tolerance"):
        cr.grad(f)(data)


def test_a_scipy_matrix_is_a_constant_and_b_is_differentiated():
    data, row, col, b = problem("spsolve")
    A = ssp.coo_array((data, (row, col)), shape=(N, N)).tocsr()
    jacobian = cr.jacrev(lambda b: spla.spsolve(A, b))(b)
    np.testing.assert_allclose(jacobian, np.linalg.inv(A.toarray()), rtol=1e-10, atol=1e-13)


def test_a_dense_matrix_is_differentiated_entry_by_entry():
    data, row, col, b = problem("spsolve")
    matrix = np.asarray(dense(data, row, col))
    grad = cr.grad(lambda m: cr.sum(spla.spsolve(m, b)))(matrix)
    x = np.linalg.solve(matrix, b)
    adjoint = np.linalg.solve(matrix.T, np.ones(N))
    np.testing.assert_allclose(grad, -np.outer(adjoint, x), rtol=1e-10, atol=1e-13)


def test_a_preconditioner_serves_the_transposed_solve_too():
    data, row, col, b = problem("gmres")
    M = ssp.diags(1 / data[:N]).tocsr()

    def f(data):
        A = sp.coo_array((data, (row, col)), shape=(N, N))
        return cr.sum(spla.gmres(A, b, rtol=1e-14, M=M)[0] ** 2)

    def plain(data):
        return cr.sum(spla.spsolve(sp.coo_array((data, (row, col)), shape=(N, N)), b) ** 2)

    np.testing.assert_allclose(cr.grad(f)(data), cr.grad(plain)(data), rtol=1e-8)


def test_under_vmap_and_jit():
    data, row, col, b = problem("spsolve")
    rhs = np.stack([b, 2 * b, -b])

    def f(data, b):
        return cr.sum(spla.spsolve(sp.coo_array((data, (row, col)), shape=(N, N)), b) ** 2)

    per_example = cr.vmap(cr.grad(f), in_axes=(None, 0))(data, rhs)
    for k in range(3):
        np.testing.assert_allclose(per_example[k], cr.grad(f)(data, rhs[k]), rtol=1e-12)
    jitted = cr.jit(cr.grad(f))
    np.testing.assert_allclose(jitted(data, b), cr.grad(f)(data, b), rtol=1e-12)
    np.testing.assert_allclose(jitted(data * 1.1, b), cr.grad(f)(data * 1.1, b), rtol=1e-12)


# ---------------------------------------------------------------------------------------
# The sparse matrix itself
# ---------------------------------------------------------------------------------------

def test_the_product_and_its_transpose_are_differentiated_in_entries_and_vector():
    data, row, col, _ = problem("spsolve")
    x = np.linspace(-1, 1, N)

    def ours(data, x):
        A = sp.coo_array((data, (row, col)), shape=(N, N))
        return cr.sum(cr.tanh(A @ x) + (A.T @ x) ** 2)

    def theirs(data, x):
        A = dense(data, row, col)
        return jnp.sum(jnp.tanh(A @ x) + (A.T @ x) ** 2)

    for argnum in (0, 1):
        np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(data, x),
                                   jax.grad(theirs, argnums=argnum)(data, x), rtol=1e-12)
        np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(data, x),
                                   jax.hessian(theirs, argnums=argnum)(data, x),
                                   rtol=1e-10, atol=1e-12)


def test_csr_form_and_toarray():
    A = ssp.random_array((5, 4), density=0.5, rng=np.random.default_rng(3)).tocsr()
    ours = sp.csr_array((A.data, A.indices, A.indptr), shape=A.shape)
    np.testing.assert_array_equal(ours.toarray(), A.toarray())
    assert ours.nnz == A.nnz and ours.T.shape == (4, 5)
    np.testing.assert_array_equal(ours.to_scipy().toarray(), A.toarray())


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"coo_array: row indices must lie in \[0, 2\)"):
        sp.coo_array((np.ones(2), ([0, 2], [0, 1])), shape=(2, 2))
    with pytest.raises(ValueError, match=r"coo_array: expected data, row and col of one"):
        sp.coo_array((np.ones(3), ([0, 1], [0, 1])), shape=(2, 2))
    A = sp.coo_array((np.ones(2), ([0, 1], [0, 1])), shape=(2, 3))
    with pytest.raises(ValueError, match=r"spsolve: expected a square matrix A, got shape"):
        spla.spsolve(sp.coo_array((cr.tensor(np.ones(2)), ([0, 1], [0, 1])), shape=(2, 3)),
                     np.ones(2))
    with pytest.raises(ValueError, match=r"matmul: a sparse matrix of shape \(2, 3\)"):
        A @ np.ones(2)
    with pytest.raises(TypeError, match=r"cg: expected A as a sparse matrix"):
        spla.cg("matrix", cr.tensor(np.ones(2)))


# ---------------------------------------------------------------------------------------
# A as SciPy's LinearOperator: a constant, x differentiated in b
# ---------------------------------------------------------------------------------------

ITERATIVE = sorted(set(SOLVERS) - {"spsolve"})


def operator_problem(name):
    data, row, col, b = problem(name)
    matrix = ssp.coo_array((data, (row, col)), shape=(N, N)).toarray()
    return matrix, ssla.aslinearoperator(matrix), b


@pytest.mark.parametrize("name", ITERATIVE)
def test_a_linear_operator_is_a_constant_and_b_is_differentiated_to_second_order(name):
    """x = A^-1 b: dx/db = A^-1 both ways; the Hessian of sum(x^3) is
    A^-T diag(6 x) A^-1."""
    matrix, A, b = operator_problem(name)
    solve = lambda b: SOLVERS[name](A, b)  # noqa: E731
    inverse = np.linalg.inv(matrix)
    x = inverse @ b
    np.testing.assert_allclose(solve(b), x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cr.jacrev(solve)(b), inverse, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cr.jacfwd(solve)(b), inverse, rtol=1e-9, atol=1e-12)
    expected = inverse.T @ np.diag(6 * x) @ inverse
    cube = lambda b: cr.sum(solve(b) ** 3)  # noqa: E731
    np.testing.assert_allclose(cr.hessian(cube)(b), expected, rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(cr.jacrev(cr.grad(cube))(b), expected, rtol=1e-8, atol=1e-11)


def test_a_linear_operator_under_vmap_and_jit():
    matrix, A, b = operator_problem("gmres")
    rhs = np.stack([b, 2 * b, -b])
    f = lambda b: cr.sum(SOLVERS["gmres"](A, b) ** 2)  # noqa: E731
    per_example = cr.vmap(cr.grad(f))(rhs)
    for k in range(3):
        np.testing.assert_allclose(per_example[k], cr.grad(f)(rhs[k]), rtol=1e-12)
    jitted = cr.jit(cr.grad(f))
    for right in (b, 1.1 * b):
        np.testing.assert_allclose(jitted(right), cr.grad(f)(right), rtol=1e-12)


def test_a_linear_operator_without_rmatvec():
    """Forward mode needs only products with A; reverse mode needs A^T's, which cg and
    minres take to be A's, and the others ask of rmatvec."""
    matrix, _, b = operator_problem("gmres")
    A = ssla.LinearOperator((N, N), matvec=lambda v: matrix @ v)
    solve = lambda b: SOLVERS["gmres"](A, b)  # noqa: E731
    np.testing.assert_allclose(cr.jacfwd(solve)(b), np.linalg.inv(matrix), rtol=1e-9,
                               atol=1e-12)
    with pytest.raises(TypeError, match=r"gmres: the derivative solves with A\^T, and this "
                                        r"LinearOperator has no rmatvec"):
        cr.grad(lambda b: cr.sum(solve(b)))(b)
    symmetric, _, b = operator_problem("cg")
    S = ssla.LinearOperator((N, N), matvec=lambda v: symmetric @ v)
    np.testing.assert_allclose(cr.jacrev(lambda b: SOLVERS["cg"](S, b))(b),
                               np.linalg.inv(symmetric), rtol=1e-9, atol=1e-12)


def test_a_linear_operator_refused_where_it_cannot_serve():
    matrix, A, b = operator_problem("gmres")
    with pytest.raises(TypeError, match="spsolve: expected a matrix"):
        spla.spsolve(A, cr.tensor(b))
    with pytest.raises(ValueError, match=r"gmres: expected a square operator A and b of "
                                         r"shape \(12,\), got A of shape \(12, 12\) and b "
                                         r"of shape \(11,\)"):
        spla.gmres(A, cr.tensor(b[:11]))
    x, info = spla.gmres(A, b, rtol=1e-12)       # plain numbers: SciPy's own answer
    assert info == 0 and type(x) is np.ndarray

"""chainrule.scipy.linalg against scipy.linalg (values) and jax.scipy.linalg (float64
derivatives, first and second order, both modes)."""

import itertools

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg as sl

import chainrule as cr
import chainrule.scipy.linalg as sla
from seeds_and_tolerances import central_difference_atol, per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(5)
A = np.tril(RNG.standard_normal((3, 3))) + 3.0 * np.eye(3)
SPD = A @ A.T
RHS = {"matrix": RNG.standard_normal((3, 2)), "vector": RNG.standard_normal(3)}


@pytest.mark.parametrize("trans, lower, unit, rhs", list(itertools.product(
    (0, 1), (True, False), (False, True), sorted(RHS))))
def test_solve_triangular_matches_scipy_and_jax(trans, lower, unit, rhs):
    a, b = (A if lower else A.T), RHS[rhs]
    a = a + np.triu(np.ones((3, 3)), 1) * 7.0 if lower else a + np.tril(np.ones((3, 3)), -1) * 7.0
    kwargs = dict(trans=trans, lower=lower, unit_diagonal=unit)
    np.testing.assert_allclose(sla.solve_triangular(a, b, **kwargs),
                               sl.solve_triangular(a, b, **kwargs), rtol=1e-13)
    ours = lambda a, b: cr.sum(sla.solve_triangular(a, b, **kwargs) ** 3)
    theirs = lambda a, b: jnp.sum(jsl.solve_triangular(a, b, **kwargs) ** 3)
    for argnum in (0, 1):
        np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(a, b),
                                   jax.jit(jax.grad(theirs, argnums=argnum))(a, b), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(a, b),
                                   jax.jit(jax.hessian(theirs, argnums=argnum))(a, b), rtol=1e-9,
                                   atol=1e-11)
    da, db = RNG.standard_normal(a.shape), RNG.standard_normal(b.shape)
    np.testing.assert_allclose(cr.jvp(ours, (a, b), (da, db))[1],
                               _jax_jvp(theirs, (a, b), (da, db)), rtol=1e-10)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_and_cho_solve_match_scipy_and_jax(lower):
    np.testing.assert_allclose(sla.cholesky(SPD, lower=lower), sl.cholesky(SPD, lower=lower),
                               rtol=1e-13)
    b = RHS["matrix"]
    np.testing.assert_allclose(sla.cho_solve(sla.cho_factor(SPD, lower=lower), b),
                               sl.cho_solve(sl.cho_factor(SPD, lower=lower), b), rtol=1e-12)
    ours = lambda m, b: cr.sum(sla.cho_solve(sla.cho_factor(m, lower=lower), b) ** 2)
    theirs = lambda m, b: jnp.sum(jsl.cho_solve(jsl.cho_factor(m, lower=lower), b) ** 2)
    np.testing.assert_allclose(cr.grad(ours, argnums=1)(SPD, b),
                               jax.grad(theirs, argnums=1)(SPD, b), rtol=1e-10)
    # the matrix along symmetric directions (a covariance moves in no other)
    d = RNG.standard_normal((3, 3))
    d = d + d.T
    along = lambda m: ours(m, b)
    np.testing.assert_allclose(cr.jvp(along, (SPD,), (d,))[1],
                               jax.jvp(lambda m: theirs(m, b), (SPD,), (d,))[1], rtol=1e-10)
    slope = lambda m: cr.jvp(along, (m,), (d,))[1]
    jax_slope = lambda m: jax.jvp(lambda m: theirs(m, b), (m,), (d,))[1]
    np.testing.assert_allclose(cr.jvp(slope, (SPD,), (d,))[1],
                               jax.jvp(jax_slope, (SPD,), (d,))[1], rtol=1e-9)


# ---------------------------------------------------------------------------------------
# LU
# ---------------------------------------------------------------------------------------

# a standard normal matrix, well conditioned, whose rows partial pivoting moves in a
# cycle (a permutation that is not its own inverse, so that mixing the two up shows)
GENERAL = np.random.default_rng(19).standard_normal((4, 4))
LU_RHS = {"matrix": RNG.standard_normal((4, 2)), "vector": RNG.standard_normal(4)}


def _central_gradient(f, x, h=1e-5):
    """The gradient of a scalar f by central differences, entry by entry."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = h
        grad[index] = (f(x + step) - f(x - step)) / (2 * h)
    return grad


def _assert_matches_central_differences(grad, f, x, f_scale, h=1e-5, **tolerance):
    """grad against f's central differences of step h, within the error those make on a
    function whose values (and rounding errors) are of size f_scale: an absolute
    tolerance, since a gradient entry near 0 has no relative accuracy of its own."""
    np.testing.assert_allclose(grad, _central_gradient(f, x, h), rtol=0,
                               atol=central_difference_atol(h, f_scale, **tolerance))


def _check_against_jax(ours, theirs, args, argnums, rtol=1e-10, hessian_rtol=1e-9):
    """Gradients and Hessians in each argument, and one jvp in all of them at once.
    JAX's under jax.jit: one compile of the whole function is quicker than JAX's eager
    dispatch, which compiles each operation on its own."""
    scale = lambda x: 1e-12 * max(1.0, float(np.max(np.abs(x))))
    for argnum in argnums:
        expected = jax.jit(jax.grad(theirs, argnums=argnum))(*args)
        np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(*args), expected,
                                   rtol=rtol, atol=scale(expected))
        expected = jax.jit(jax.hessian(theirs, argnums=argnum))(*args)
        np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(*args), expected,
                                   rtol=hessian_rtol, atol=scale(expected))
    tangents = tuple(RNG.standard_normal(np.shape(x)) for x in args)
    np.testing.assert_allclose(cr.jvp(ours, args, tangents)[1],
                               _jax_jvp(theirs, args, tangents), rtol=rtol)


def _jax_jvp(f, primals, tangents):
    """JAX's jvp of f (its tangent out), compiled as a whole."""
    return jax.jit(lambda p, t: jax.jvp(f, p, t)[1])(tuple(primals), tuple(tangents))


def test_the_lu_test_matrix_is_pivoted_in_a_cycle():
    p = sl.lu(GENERAL, p_indices=True)[0]
    assert np.any(p != np.argsort(p))


@pytest.mark.parametrize("trans, rhs", list(itertools.product((0, 1, 2), sorted(LU_RHS))))
def test_lu_solve_of_lu_factor_matches_scipy_and_jax(trans, rhs):
    b = LU_RHS[rhs]
    lu, piv = sla.lu_factor(GENERAL)
    scipy_lu, scipy_piv = sl.lu_factor(GENERAL)
    np.testing.assert_allclose(lu, scipy_lu, rtol=1e-14)
    np.testing.assert_array_equal(piv, scipy_piv)
    np.testing.assert_allclose(sla.lu_solve((lu, piv), b, trans=trans),
                               sl.lu_solve((scipy_lu, scipy_piv), b, trans=trans), rtol=1e-12)
    ours = lambda a, b: cr.sum(sla.lu_solve(sla.lu_factor(a), b, trans=trans) ** 3)
    theirs = lambda a, b: jnp.sum(jsl.lu_solve(jsl.lu_factor(a), b, trans=trans) ** 3)
    _check_against_jax(ours, theirs, (GENERAL, b), argnums=(0, 1))
    np.testing.assert_allclose(cr.grad(ours)(GENERAL, b),
                               _central_gradient(lambda a: float(ours(a, b)), GENERAL),
                               rtol=1e-6)


def test_lu_factor_matches_jax_in_the_factors_themselves():
    # lu's entries, not only solves: both triangles' derivatives, through the pivoting
    weights = RNG.standard_normal((4, 4))
    ours = lambda a: cr.sum(weights * sla.lu_factor(a)[0] ** 2)
    theirs = lambda a: jnp.sum(weights * jsl.lu_factor(a)[0] ** 2)
    _check_against_jax(ours, theirs, (GENERAL,), argnums=(0,))


@pytest.mark.parametrize("permute_l, p_indices", list(itertools.product((False, True),
                                                                         repeat=2)))
def test_lu_matches_scipy_and_its_factors_match_jax(permute_l, p_indices):
    kwargs = dict(permute_l=permute_l, p_indices=p_indices)
    for mine, scipys in zip(sla.lu(GENERAL, **kwargs), sl.lu(GENERAL, **kwargs)):
        np.testing.assert_allclose(mine, scipys, rtol=1e-14, atol=1e-15)
    weights = RNG.standard_normal((2, 4, 4))
    if permute_l:  # jax.scipy.linalg.lu has no permute_l: its p @ l is the same matrix
        ours = lambda a: cr.sum(weights[0] * sla.lu(a, permute_l=True)[0] ** 2)
        theirs = lambda a: jnp.sum(weights[0] * (lambda p, l, u: p @ l)(*jsl.lu(a)) ** 2)
    else:
        ours = lambda a: cr.sum(weights[0] * sla.lu(a, **kwargs)[1] ** 2
                                + weights[1] * sla.lu(a, **kwargs)[2] ** 3)
        theirs = lambda a: jnp.sum(weights[0] * jsl.lu(a)[1] ** 2 + weights[1] * jsl.lu(a)[2] ** 3)
    _check_against_jax(ours, theirs, (GENERAL,), argnums=(0,))


def test_lu_solve_backward_through_a_tensor():
    a = cr.tensor(GENERAL, requires_grad=True)
    b = LU_RHS["vector"]
    cr.sum(sla.lu_solve(sla.lu_factor(a), b)).backward()
    expected = jax.grad(lambda a: jnp.sum(jsl.lu_solve(jsl.lu_factor(a), b)))(GENERAL)
    np.testing.assert_allclose(a.grad, expected, rtol=1e-11)


# ---------------------------------------------------------------------------------------
# Matrix functions
# ---------------------------------------------------------------------------------------

def _eig_function(f):
    """A primary matrix function through JAX's eigendecomposition, V f(w) V^-1: an oracle
    with float64 derivatives of every order for a matrix with distinct eigenvalues.
    (jax.scipy.linalg.sqrtm goes through schur, which JAX does not differentiate, and
    JAX has no logm.)"""
    def function(a):
        w, v = jax.lax.linalg.eig(a + 0j, compute_left_eigenvectors=False,
                                  enable_eigvec_derivs=True)
        return jnp.real(v @ jnp.diag(f(w)) @ jnp.linalg.inv(v))
    return function


# distinct eigenvalues, a complex pair among them, all in the right half-plane: a real
# logarithm and square root exist, with derivatives of moderate size
POSITIVE = np.random.default_rng(12).standard_normal((4, 4)) + 3.0 * np.eye(4)
SMALL = 0.6 * np.random.default_rng(13).standard_normal((4, 4))


def test_the_matrix_function_test_matrix_has_complex_eigenvalues_in_the_right_half_plane():
    w = np.linalg.eigvals(POSITIVE)
    assert np.any(w.imag != 0) and np.all(w.real > 0.5)


def test_expm_matches_scipy_and_jax():
    np.testing.assert_allclose(sla.expm(SMALL), sl.expm(SMALL), rtol=1e-14)
    weights = RNG.standard_normal((4, 4))
    ours = lambda a: cr.sum(weights * sla.expm(a) ** 2)
    theirs = lambda a: jnp.sum(weights * jsl.expm(a) ** 2)
    _check_against_jax(ours, theirs, (SMALL,), argnums=(0,), rtol=1e-11)
    size = np.sum(np.abs(weights * sl.expm(SMALL) ** 2))  # expm(a)**2 ~ expm(2a): each
    _assert_matches_central_differences(                   # derivative a factor of 2
        cr.grad(ours)(SMALL), lambda a: float(ours(a)), SMALL, size,
        third_derivative_scale=8.0 * size)


@pytest.mark.slow
def test_the_frechet_derivative_of_expm_is_scipys_and_differentiable_in_both_arguments():
    from chainrule.scipy.matrix_functions import _expm_frechet
    direction = RNG.standard_normal((4, 4))
    np.testing.assert_allclose(_expm_frechet(SMALL, direction),
                               sl.expm_frechet(SMALL, direction, compute_expm=False),
                               rtol=1e-12)
    weights = RNG.standard_normal((4, 4))
    ours = lambda a, e: cr.sum(weights * _expm_frechet(a, e) ** 2)
    theirs = lambda a, e: jnp.sum(weights * jsl.expm_frechet(a, e, compute_expm=False) ** 2)
    _check_against_jax(ours, theirs, (SMALL, direction), argnums=(0, 1), rtol=1e-10,
                       hessian_rtol=1e-8)


def test_third_derivative_of_expm_matches_jax():
    # the Fréchet derivative's own rules call it one size up: a third order runs them
    direction = RNG.standard_normal((4, 4))
    ours = lambda a: cr.sum(sla.expm(a) ** 2)
    theirs = lambda a: jnp.sum(jsl.expm(a) ** 2)
    slope = lambda f, jvp: lambda a: jvp(f, (a,), (direction,))[1]
    ours3 = slope(slope(slope(ours, cr.jvp), cr.jvp), cr.jvp)
    theirs3 = slope(slope(slope(theirs, jax.jvp), jax.jvp), jax.jvp)
    np.testing.assert_allclose(ours3(SMALL), theirs3(SMALL), rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name, f", [("sqrtm", jnp.sqrt), ("logm", jnp.log)])
def test_sqrtm_and_logm_match_scipy_jax_and_central_differences(name, f):
    ours_f, scipy_f = getattr(sla, name), getattr(sl, name)
    np.testing.assert_allclose(ours_f(POSITIVE), scipy_f(POSITIVE), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(_eig_function(f)(POSITIVE), scipy_f(POSITIVE), rtol=1e-12,
                               atol=1e-13)
    weights = RNG.standard_normal((4, 4))
    ours = lambda a: cr.sum(weights * ours_f(a) ** 3)
    theirs = lambda a: jnp.sum(weights * _eig_function(f)(a) ** 3)
    _check_against_jax(ours, theirs, (POSITIVE,), argnums=(0,), rtol=1e-10,
                       hessian_rtol=1e-9)
    # a Schur method's result is off by some ulps, each entry cubed: the rounding of
    # f = sum(w * F(A)**3) is some tens of eps * |f| (about 12 measured, over 100 draws)
    _assert_matches_central_differences(cr.grad(ours)(POSITIVE), lambda a: float(ours(a)),
                                        POSITIVE,
                                        np.sum(np.abs(weights * scipy_f(POSITIVE) ** 3)),
                                        conditioning=30.0)


def test_sqrtm_squares_back_in_value_and_derivative():
    # S(A)^2 = A, so the derivative of S(A) @ S(A) is the identity map
    direction = RNG.standard_normal((4, 4))
    square = lambda a: cr.matmul(sla.sqrtm(a), sla.sqrtm(a))
    np.testing.assert_allclose(square(POSITIVE), POSITIVE, rtol=1e-12)
    np.testing.assert_allclose(cr.jvp(square, (POSITIVE,), (direction,))[1], direction,
                               rtol=1e-11, atol=1e-12)


def _kronecker_sylvester(a, b, q):
    """X solving a X + X b = q as one linear system in vec(X) (column-major): an oracle
    JAX differentiates. (jax.scipy.linalg.solve_sylvester goes through schur, which JAX
    does not differentiate.)"""
    m, n = q.shape
    system = jnp.kron(jnp.eye(n), a) + jnp.kron(b.T, jnp.eye(m))
    return jnp.linalg.solve(system, q.T.reshape(-1)).reshape(n, m).T


SYL_A = RNG.standard_normal((3, 3)) + 3.0 * np.eye(3)
SYL_B = RNG.standard_normal((2, 2)) + 2.0 * np.eye(2)
SYL_Q = RNG.standard_normal((3, 2))


def test_solve_sylvester_matches_scipy_and_jax():
    np.testing.assert_allclose(sla.solve_sylvester(SYL_A, SYL_B, SYL_Q),
                               sl.solve_sylvester(SYL_A, SYL_B, SYL_Q), rtol=1e-13)
    np.testing.assert_allclose(_kronecker_sylvester(SYL_A, SYL_B, SYL_Q),
                               sl.solve_sylvester(SYL_A, SYL_B, SYL_Q), rtol=1e-12)
    ours = lambda a, b, q: cr.sum(sla.solve_sylvester(a, b, q) ** 3)
    theirs = lambda a, b, q: jnp.sum(_kronecker_sylvester(a, b, q) ** 3)
    args = (SYL_A, SYL_B, SYL_Q)
    _check_against_jax(ours, theirs, args, argnums=(0, 1, 2))
    np.testing.assert_allclose(cr.grad(ours, argnums=1)(*args),
                               _central_gradient(lambda b: float(ours(SYL_A, b, SYL_Q)), SYL_B),
                               rtol=1e-7)


def test_solve_continuous_lyapunov_matches_scipy_and_jax():
    a, q = -SYL_A, SPD  # a stable system, a covariance of its noise
    np.testing.assert_allclose(sla.solve_continuous_lyapunov(a, q),
                               sl.solve_continuous_lyapunov(a, q), rtol=1e-12)
    ours = lambda a, q: cr.sum(sla.solve_continuous_lyapunov(a, q) ** 3)
    theirs = lambda a, q: jnp.sum(_kronecker_sylvester(a, a.T, q) ** 3)
    _check_against_jax(ours, theirs, (a, q), argnums=(0, 1))


# ---------------------------------------------------------------------------------------
# Clear errors
# ---------------------------------------------------------------------------------------

NEGATIVE = np.array([[-1.0, 0.0], [0.0, 2.0]])


@pytest.mark.parametrize("call, message", [
    (lambda: sla.lu_factor(np.ones((2, 3))),
     r"lu_factor: a of shape \(2, 3\); expected a square matrix of shape \(n, n\)"),
    (lambda: sla.lu(np.ones(3)), r"lu: a of shape \(3,\); expected a square matrix"),
    (lambda: sla.lu_solve(sla.lu_factor(np.eye(2)), np.ones(3)),
     r"lu_solve: lu of shape \(2, 2\), piv of shape \(2,\) and b of shape \(3,\); "
     r"expected \(n, n\), \(n,\) and \(n,\) or \(n, k\)"),
    (lambda: sla.lu_solve(sla.lu_factor(np.eye(2)), np.ones(2), trans=3),
     r"lu_solve: trans=3; expected 0, 1 or 2"),
    (lambda: sla.expm(np.ones((2, 3))), r"expm: A of shape \(2, 3\); expected a square"),
    (lambda: sla.sqrtm(np.ones((2, 2, 2))), r"sqrtm: A of shape \(2, 2, 2\); expected"),
    (lambda: sla.logm(np.ones((3, 1))), r"logm: A of shape \(3, 1\); expected a square"),
    (lambda: sla.logm(NEGATIVE), r"logm: the matrix has no real logarithm \(an eigenvalue "
                                 r"on the negative real axis\); expected a real matrix"),
    (lambda: sla.sqrtm(NEGATIVE), r"sqrtm: the matrix has no real square root"),
    (lambda: sla.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 2))),
     r"solve_sylvester: a of shape \(2, 2\), b of shape \(3, 3\) and q of shape \(3, 2\); "
     r"expected \(m, m\), \(n, n\) and \(m, n\)"),
    (lambda: sla.solve_continuous_lyapunov(np.eye(2), np.ones((2, 3))),
     r"solve_continuous_lyapunov: a of shape \(2, 2\) and q of shape \(2, 3\); expected "
     r"both \(n, n\)"),
])
def test_bad_input_gets_a_one_line_error_naming_the_function(call, message):
    with pytest.raises(ValueError, match=message) as error:
        call()
    assert "\n" not in str(error.value)


def test_logm_refuses_a_complex_result_under_differentiation_too():
    with pytest.raises(ValueError, match="logm: the matrix has no real logarithm"):
        cr.grad(lambda a: cr.sum(sla.logm(a)))(NEGATIVE)


def test_the_autograd_shim_has_the_new_names():
    import chainrule.autograd.scipy.linalg as autograd_sla
    for name in ("lu_factor", "lu_solve", "lu", "expm", "logm", "sqrtm", "solve_sylvester",
                 "solve_continuous_lyapunov"):
        assert getattr(autograd_sla, name) is getattr(sla, name)
        assert name in autograd_sla.__all__


def _dense_from_band(lower, upper, ab):
    """JAX's dense A from band storage: A[i, j] = ab[u + i - j, j] inside the band."""
    n = ab.shape[1]
    rows = jnp.arange(n)[:, None] - jnp.arange(n)[None, :] + upper   # u + i - j
    inside = (rows >= 0) & (rows <= lower + upper)
    return jnp.where(inside, ab[jnp.clip(rows, 0, lower + upper), jnp.arange(n)[None, :]], 0.0)


@pytest.mark.parametrize("lower, upper, rhs", [(1, 1, "vector"), (2, 0, "matrix"),
                                               (0, 2, "vector"), (2, 1, "matrix")])
def test_solve_banded_matches_scipy_and_a_dense_solve_in_jax(lower, upper, rhs):
    n = 5
    ab = RNG.standard_normal((lower + upper + 1, n))
    ab[upper] += 4.0  # a dominant diagonal: well conditioned
    b = RNG.standard_normal((n, 2)) if rhs == "matrix" else RNG.standard_normal(n)
    np.testing.assert_allclose(sla.solve_banded((lower, upper), ab, b),
                               sl.solve_banded((lower, upper), ab, b), rtol=1e-13)
    ours = lambda ab, b: cr.sum(sla.solve_banded((lower, upper), ab, b) ** 3)
    theirs = lambda ab, b: jnp.sum(jnp.linalg.solve(_dense_from_band(lower, upper, ab), b) ** 3)
    for argnum in (0, 1):
        np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(ab, b),
                                   jax.jit(jax.grad(theirs, argnums=argnum))(ab, b), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(ab, b),
                                   jax.jit(jax.hessian(theirs, argnums=argnum))(ab, b), rtol=1e-9,
                                   atol=1e-11)
    dab, db = RNG.standard_normal(ab.shape), RNG.standard_normal(b.shape)
    np.testing.assert_allclose(cr.jvp(ours, (ab, b), (dab, db))[1],
                               _jax_jvp(theirs, (ab, b), (dab, db)), rtol=1e-10)


def test_solve_banded_refuses_a_band_of_the_wrong_height():
    with pytest.raises(ValueError, match=r"solve_banded: expected ab of shape \(l \+ u \+ 1, "
                                         r"n\) = \(3, n\) .* got ab \(2, 4\)"):
        sla.solve_banded((1, 1), np.ones((2, 4)), np.ones(4))


_SPD = np.random.default_rng(11).standard_normal((3, 3)) * 0.3 + 2.0 * np.eye(3)
_BAND = np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])
UNDER_JIT = {
    "solve_triangular": lambda a, b: sla.solve_triangular(a, b, lower=True),
    "cho_solve": lambda a, b: sla.cho_solve(sla.cho_factor(a @ a.T), b),
    "lu_solve": lambda a, b: sla.lu_solve(sla.lu_factor(a), b),
    "lu": lambda a, b: sla.lu(a)[0] @ sla.lu(a)[2] @ b,
    "expm": lambda a, b: sla.expm(a) @ b,
    "sqrtm": lambda a, b: sla.sqrtm(a) @ b,
    "logm": lambda a, b: sla.logm(a) @ b,   # (SciPy's logm draws from numpy.random)
    "solve_sylvester": lambda a, b: sla.solve_sylvester(a, a, a) @ b,
    "solve_banded": lambda a, b: sla.solve_banded((1, 1), _BAND * a[0, 0], b),
}


@pytest.mark.parametrize("name", UNDER_JIT)
def test_under_jit_each_function_and_its_gradient_are_the_eager_ones(name):
    """SciPy's functions take NumPy arrays: under cr.jit each is one call of the program,
    run again on every call's numbers (no value of the trace is kept)."""
    def loss(a, b):
        return cr.sum(cr.tanh(UNDER_JIT[name](a, b)))
    step = cr.value_and_grad(loss, argnums=(0, 1))
    jitted = cr.jit(step)
    b = np.random.default_rng(12).standard_normal(3)
    for a in (_SPD, 1.1 * _SPD + 0.1):
        (value, grads), (jit_value, jit_grads) = step(a, b), jitted(a, b)
        np.testing.assert_allclose(jit_value, value, rtol=1e-12)
        for g, j in zip(grads, jit_grads):
            np.testing.assert_allclose(j, g, rtol=1e-12, atol=1e-14)

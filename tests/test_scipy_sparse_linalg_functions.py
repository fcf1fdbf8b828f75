"""chainrule.scipy.sparse.linalg's iterative solvers given A as a function v -> A v, as
jax.scipy.sparse.linalg takes it: a program ported from JAX runs with its imports changed.

x is differentiable in b and in the values the function closes over (here the diagonal
``theta`` of A = diag(theta) + S), to second order in both modes: checked against JAX's
dense solve of the same matrix in float64 (the exact answer the iterations approach),
and the values against JAX's own solver called with the same function.
"""

import jax
import jax.numpy as jnp
import jax.scipy.sparse.linalg as jsla
import numpy as np
import pytest

import chainrule as cr
import chainrule.scipy.sparse.linalg as spla
from seeds_and_tolerances import seeded

jax.config.update("jax_enable_x64", True)

N = 8
TOL = 1e-13
METHODS = ["cg", "minres", "gmres", "bicgstab"]
SYMMETRIC = {"cg", "minres"}
JAX_HAS = ["cg", "gmres", "bicgstab"]  # (jax.scipy has no minres)


def problem(method):
    """(theta, S, b): A = diag(theta) + S, symmetric positive definite for cg and minres,
    diagonally dominant for all."""
    rng = seeded("function solve", method)
    S = rng.uniform(-0.5, 0.5, (N, N))
    if method in SYMMETRIC:
        S = (S + S.T) / 2
    return rng.uniform(5, 6, N), S, rng.standard_normal(N)


def solve(method, theta, S, b, **options):
    """Ours, as a JAX user writes it: A is a function of v."""
    x, info = getattr(spla, method)(lambda v: theta * v + S @ v, b, tol=TOL, **options)
    assert info == 0
    return x


def exact(theta, S, b):
    return jnp.linalg.solve(jnp.diag(theta) + S, b)


@pytest.mark.parametrize("method", JAX_HAS)
def test_the_values_are_jaxs_for_the_same_program(method):
    theta, S, b = problem(method)
    theirs, _ = getattr(jsla, method)(lambda v: theta * v + S @ v, b, tol=TOL)
    np.testing.assert_allclose(solve(method, theta, S, b), theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(solve(method, theta, S, b), exact(theta, S, b), rtol=1e-10)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("argnum", [0, 1], ids=["in what A closes over", "in b"])
def test_first_and_second_derivatives_match_jax_in_both_modes(method, argnum):
    theta, S, b = problem(method)
    weights = np.linspace(1, 2, N)

    def ours(theta, b):
        return cr.sum(weights * solve(method, theta, S, b) ** 3)

    def theirs(theta, b):
        return jnp.sum(weights * exact(theta, S, b) ** 3)

    tol = dict(rtol=1e-8, atol=1e-10)
    want = jax.jit(jax.grad(theirs, argnums=argnum))(theta, b)
    np.testing.assert_allclose(cr.grad(ours, argnums=argnum)(theta, b), want, **tol)
    np.testing.assert_allclose(cr.jacfwd(ours, argnums=argnum)(theta, b), want, **tol)
    want = jax.jit(jax.hessian(theirs, argnums=argnum))(theta, b)
    np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(theta, b), want, **tol)
    np.testing.assert_allclose(
        cr.jacrev(cr.jacrev(ours, argnums=argnum), argnums=argnum)(theta, b), want, **tol)


@pytest.mark.parametrize("method", ["cg", "gmres"])
def test_under_vmap_and_jit(method):
    theta, S, b = problem(method)
    thetas = np.stack([theta, theta + 1, theta * 1.5])

    def f(theta, b):
        return cr.sum(solve(method, theta, S, b) ** 2)

    per_example = cr.vmap(cr.grad(f), in_axes=(0, None))(thetas, b)
    for k in range(3):
        np.testing.assert_allclose(per_example[k], cr.grad(f)(thetas[k], b), rtol=1e-10)
    jitted = cr.jit(cr.grad(f))
    for t in (theta, theta + 0.5):  # replayed at other numbers than it was traced at
        want = jax.grad(lambda t: jnp.sum(exact(t, S, b) ** 2))(t)
        np.testing.assert_allclose(jitted(t, b), want, rtol=1e-8)


def test_tol_is_rtol_and_a_function_preconditioner_serves_cg():
    theta, S, b = problem("cg")
    A = lambda v: theta * v + S @ v
    x_tol, _ = spla.cg(A, b, tol=1e-3)
    x_rtol, _ = spla.cg(A, b, rtol=1e-3)
    np.testing.assert_array_equal(x_tol, x_rtol)
    jacobi = lambda v: v / theta
    grad = cr.grad(lambda theta: cr.sum(spla.cg(lambda v: theta * v + S @ v, b, tol=TOL,
                                                M=jacobi)[0]))(theta)
    want = jax.grad(lambda t: jnp.sum(exact(t, S, b)))(theta)
    np.testing.assert_allclose(grad, want, rtol=1e-8)


def test_what_cannot_be_done_is_named():
    theta, S, b = problem("gmres")
    A = lambda v: theta * v + S @ v
    with pytest.raises(TypeError, match="spsolve: expected a matrix .* got a function"):
        spla.spsolve(A, b)
    with pytest.raises(ValueError, match=r"cg: with A a function, expected b a vector"):
        spla.cg(A, np.ones((N, 2)))
    with pytest.raises(ValueError, match=r"bicgstab: the solve of 8 unknowns stopped"):
        spla.bicgstab(A, b, tol=1e-15, maxiter=1)
    with pytest.raises(ValueError, match=r"gmres: solve_method must be"):
        spla.gmres(A, b, solve_method="qr")
    # reverse mode solves with A^T, which a preconditioner given as a function cannot serve
    loss = lambda b: cr.sum(spla.gmres(A, b, tol=TOL, M=lambda v: v / theta)[0])
    with pytest.raises(TypeError, match="preconditioner M is a function"):
        cr.grad(loss)(b)
    # forward mode needs no transpose
    np.testing.assert_allclose(cr.jacfwd(lambda b: spla.gmres(A, b, tol=TOL,
                                                             M=lambda v: v / theta)[0])(b),
                               np.linalg.inv(np.diag(theta) + S), rtol=1e-8)

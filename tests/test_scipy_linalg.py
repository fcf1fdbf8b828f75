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

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(5)
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
                                   jax.grad(theirs, argnums=argnum)(a, b), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(cr.hessian(ours, argnums=argnum)(a, b),
                                   jax.hessian(theirs, argnums=argnum)(a, b), rtol=1e-9,
                                   atol=1e-11)
    da, db = RNG.standard_normal(a.shape), RNG.standard_normal(b.shape)
    np.testing.assert_allclose(cr.jvp(ours, (a, b), (da, db))[1],
                               jax.jvp(theirs, (a, b), (da, db))[1], rtol=1e-10)


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

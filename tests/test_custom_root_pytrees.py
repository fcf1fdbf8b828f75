"""cr.custom_root and cr.custom_linear_solve with pytrees (issue 46): x, f's value, the
solver's guess and answer, and tangent_solve's arguments as nested dicts and tuples, as
jax.lax.custom_root takes them, with the parameters a pytree too.

One coupled nonlinear system, x = {"p": (2,), "qr": (scalar, (2,))} with parameters
{"A": (2, 2), "bs": ((2,), scalar)}, solved three ways: as a pytree, as the same system
on one flat vector (custom_root on an array), and by JAX's lax.custom_root on the
pytree (jitted: its eager Newton steps are slow); values, gradients, forward-mode
Jacobians and Hessians agree. Also: has_aux, vmap over the parameters, the one-line
refusals of a mismatched structure; and custom_linear_solve with a pytree b against the
dense inverse of its assembled matrix (derivatives in b and in the matrix, second
order)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree as jax_ravel

import chainrule as cr
import chainrule.numpy as cnp
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)
RNG = per_test_generator(4649)
STEPS = 10  # Newton's steps: converged to rounding from the guess for these parameters

CR = dict(np=cnp, lax=cr.lax, ravel=cr.ravel_pytree, jacobian=cr.jacobian)
JAX = dict(np=jnp, lax=jax.lax, ravel=jax_ravel, jacobian=jax.jacobian)


def newton(ns):
    """Newton's method on a pytree, through its flat vector (the solver runs on numbers)."""
    def solve(f, x):
        v, unravel = ns["ravel"](x)
        F = lambda v: ns["ravel"](f(unravel(v)))[0]  # noqa: E731
        for _ in range(STEPS):
            v = v - ns["np"].linalg.solve(ns["jacobian"](F)(v), F(v))
        return unravel(v)
    return solve


def tangent_solve(ns):
    """v with g(v) = y for a linear g on pytrees: g's matrix formed, then solved."""
    def solve(g, y):
        flat, unravel = ns["ravel"](y)
        matrix = ns["jacobian"](lambda v: ns["ravel"](g(unravel(v)))[0])(flat)
        return unravel(ns["np"].linalg.solve(matrix, flat))
    return solve


def residual(np_, x, theta):
    p, (q, r) = x["p"], x["qr"]
    A, (b, s) = theta["A"], theta["bs"]
    return {"p": p ** 3 + A @ p - b + 0.1 * q,
            "qr": (q ** 3 + q - s - 0.2 * np_.sum(p), r ** 3 + 2 * r - q * b)}


GUESS = {"p": np.zeros(2), "qr": (0.5, np.zeros(2))}


def tree_root(ns):
    def root(theta):
        return ns["lax"].custom_root(lambda x: residual(ns["np"], x, theta), GUESS,
                                     newton(ns), tangent_solve(ns))
    return root


def flat_root(theta):
    """The same system on one vector [p0, p1, q, r0, r1]: custom_root on an array."""
    def f(v):
        out = residual(cnp, {"p": v[0:2], "qr": (v[2], v[3:5])}, theta)
        return cr.concatenate([out["p"], cr.reshape(out["qr"][0], (1,)), out["qr"][1]])

    def solve(f, v):
        for _ in range(STEPS):
            v = v - np.linalg.solve(cr.jacobian(f)(v), f(v))
        return v

    v = cr.custom_root(f, np.array([0.0, 0.0, 0.5, 0.0, 0.0]), solve,
                       lambda g, y: cnp.linalg.solve(cr.jacobian(g)(y), y))
    return {"p": v[0:2], "qr": (v[2], v[3:5])}


def parameters(w):
    """The parameter pytree from a vector of 7: A = 4 I + w[:4], b = w[4:6], s = w[6]."""
    return {"A": 4.0 * np.eye(2) + w[:4].reshape(2, 2), "bs": (w[4:6], w[6])}


def loss(root, np_):
    def f(w):
        x = root(parameters(w))
        return np_.sum(np_.sin(x["p"])) + x["qr"][0] ** 2 + np_.sum(x["qr"][1] ** 3)
    return f


def test_a_pytree_root_is_the_flat_roots():
    theta = parameters(0.3 * RNG.standard_normal(7))
    ours = tree_root(CR)(theta)
    assert set(ours) == {"p", "qr"} and isinstance(ours["qr"], tuple)
    assert np.shape(ours["qr"][0]) == () and np.shape(ours["qr"][1]) == (2,)
    for a, b in zip(cr.tree_leaves(ours), cr.tree_leaves(flat_root(theta))):
        np.testing.assert_allclose(a, b, atol=1e-13)
    np.testing.assert_allclose(cr.ravel_pytree(residual(np, ours, theta))[0], 0.0,
                               atol=1e-12)


def test_gradients_jacobians_and_hessians_agree_with_the_flat_version():
    w = 0.3 * RNG.standard_normal(7)
    ours, flat = loss(tree_root(CR), cnp), loss(flat_root, cnp)
    grad = cr.grad(ours)(w)
    np.testing.assert_allclose(grad, cr.grad(flat)(w), atol=1e-12)
    assert np.abs(grad).max() > 0.05
    np.testing.assert_allclose(cr.jacfwd(ours)(w), grad, atol=1e-12)
    hessian = cr.hessian(ours)(w)
    np.testing.assert_allclose(hessian, cr.hessian(flat)(w), atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(cr.jacrev(ours))(w), hessian, atol=1e-10)


def test_a_pytree_of_parameters_gets_a_pytree_gradient():
    theta = parameters(0.3 * RNG.standard_normal(7))
    grad = cr.grad(lambda theta: tree_root(CR)(theta)["qr"][0])(theta)
    expected = cr.grad(lambda theta: flat_root(theta)["qr"][0])(theta)
    assert set(grad) == {"A", "bs"} and np.shape(grad["bs"][0]) == (2,)
    for a, b in zip(cr.tree_leaves(grad), cr.tree_leaves(expected)):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert np.abs(np.asarray(grad["bs"][1])) > 0.1


@pytest.mark.slow
def test_values_gradients_and_hessians_agree_with_jax_lax_custom_root():
    w = 0.3 * RNG.standard_normal(7)
    ours = loss(tree_root(CR), cnp)
    theirs = loss(tree_root(JAX), jnp)
    value, grad, hessian = jax.jit(lambda w: (theirs(w), jax.grad(theirs)(w),
                                              jax.hessian(theirs)(w)))(jnp.asarray(w))
    np.testing.assert_allclose(ours(w), value, atol=1e-13)
    np.testing.assert_allclose(cr.grad(ours)(w), grad, atol=1e-12)
    np.testing.assert_allclose(cr.hessian(ours)(w), hessian, atol=1e-10)


def test_has_aux_returns_the_solvers_extra_beside_the_pytree():
    theta = parameters(0.3 * RNG.standard_normal(7))
    solve = newton(CR)
    x, aux = cr.custom_root(lambda x: residual(cnp, x, theta), GUESS,
                            lambda f, x: (solve(f, x), "10 steps"), tangent_solve(CR),
                            has_aux=True)
    assert aux == "10 steps"
    for a, b in zip(cr.tree_leaves(x), cr.tree_leaves(tree_root(CR)(theta))):
        np.testing.assert_allclose(a, b, atol=1e-14)


def test_vmap_over_the_parameters_solves_each_example():
    ws = 0.3 * RNG.standard_normal((3, 7))
    ours = loss(tree_root(CR), cnp)
    np.testing.assert_allclose(cr.vmap(ours)(ws), [ours(w) for w in ws], atol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.grad(ours))(ws), [cr.grad(ours)(w) for w in ws],
                               atol=1e-12)


def test_a_mismatched_structure_is_refused_in_one_line():
    with pytest.raises(TypeError, match=r"^custom_root: f's value must be a pytree of "
                                        r"initial_guess's structure") as raised:
        cr.custom_root(lambda x: [x["a"]], {"a": np.ones(2)}, lambda f, x: x,
                       lambda g, y: y)
    assert "\n" not in str(raised.value)
    with pytest.raises(TypeError, match=r"^custom_root: solve's answer must be a pytree "
                                        r"of initial_guess's structure and shapes"):
        cr.custom_root(lambda x: x, (np.ones(2), 1.0), lambda f, x: x[0], lambda g, y: y)
    with pytest.raises(TypeError, match=r"^custom_root: initial_guess's leaves must be "
                                        r"arrays or numbers, got str"):
        cr.custom_root(lambda x: x, {"a": "one"}, lambda f, x: x, lambda g, y: y)


# ---------------------------------------------------------------------------------------
# custom_linear_solve with a pytree b
# ---------------------------------------------------------------------------------------

def symmetric_part(w):
    return 4.0 * np.eye(2) + 0.5 * (cr.reshape(w[:4], (2, 2)) + cr.reshape(w[:4], (2, 2)).T)


def block_solve(w, b):
    """x = {"u": (2,), "s": scalar} with A x = b for the symmetric block matrix
    A = [[M, c], [c^T, d]] made from w (M = 4 I + w[:4] symmetrised, c = w[4:6],
    d = 3 + w[6]), solved by a dense solve of the pytree's flat vector."""
    M, c, d = symmetric_part(w), w[4:6], 3.0 + w[6]

    def matvec(x):
        return {"u": cr.matmul(M, x["u"]) + c * x["s"], "s": cr.sum(c * x["u"]) + d * x["s"]}

    def dense(mv, y):
        flat, unravel = cr.ravel_pytree(y)
        matrix = cr.jacobian(lambda v: cr.ravel_pytree(mv(unravel(v)))[0])(flat)
        return unravel(cnp.linalg.solve(matrix, flat))

    return cr.custom_linear_solve(matvec, b, dense, symmetric=True)


def block_matrix(w):
    """A of block_solve, assembled (chainrule's operations: differentiable in w)."""
    column = cr.reshape(w[4:6], (2, 1))
    last = cr.reshape(cr.concatenate([w[4:6], cr.reshape(3.0 + w[6], (1,))]), (1, 3))
    return cr.concatenate([cr.concatenate([symmetric_part(w), column], axis=1), last])


def test_a_pytree_linear_solve_and_its_derivatives_match_the_dense_inverse():
    w, b_flat = 0.3 * RNG.standard_normal(7), RNG.standard_normal(3)
    b = {"u": b_flat[:2], "s": b_flat[2]}
    inverse = np.linalg.inv(block_matrix(w))
    x = block_solve(w, b)
    assert set(x) == {"u", "s"} and np.shape(x["s"]) == ()
    np.testing.assert_allclose(np.r_[x["u"], x["s"]], inverse @ b_flat, atol=1e-12)
    as_vector = lambda v: block_solve(w, {"u": v[:2], "s": v[2]})  # noqa: E731
    for transform in (cr.jacrev, cr.jacfwd):
        jac = transform(lambda v: cr.ravel_pytree(as_vector(v))[0])(b_flat)
        np.testing.assert_allclose(jac, inverse[[2, 0, 1]], atol=1e-12)  # ("s" sorts first)
    outer = lambda w: cr.sum(block_solve(w, b)["u"]) * block_solve(w, b)["s"]  # noqa: E731
    dense = lambda w: (lambda x: cr.sum(x[:2]) * x[2])(  # noqa: E731
        cnp.linalg.solve(block_matrix(w), b_flat))
    np.testing.assert_allclose(cr.grad(outer)(w), cr.grad(dense)(w), atol=1e-12)
    np.testing.assert_allclose(cr.hessian(outer)(w), cr.hessian(dense)(w), atol=1e-10)
    assert np.abs(np.asarray(cr.grad(outer)(w))).max() > 1e-3

"""The Lagrange multipliers of chainrule.scipy.optimize.minimize with constraints or
bounds (issue 46): ``constraint_multipliers`` and ``bound_multipliers`` on the result,
with grad f(x*) = J^T constraint_multipliers + bound_multipliers, differentiable like x.

An equality-constrained quadratic program against its closed form (the KKT system
[[Q, -A^T], [A, 0]] [x; lam] = [b; c], its multipliers linear in the parameters) to
second order, and against SciPy's own SLSQP multipliers; a projection with a two-sided
LinearConstraint and bounds: the identity above, the signs of the sides, derivatives
against central differences of the problem solved again; vmap (examples with different
active sets), cr.jit and a Tensor's backward."""

import numpy as np
import pytest
import scipy.optimize as so

import chainrule as cr
from chainrule.scipy import optimize as opt
from seeds_and_tolerances import central_differences as central, per_test_generator

RNG = per_test_generator(4648)
METHODS = ["SLSQP", "trust-constr"]
TIGHT = {"SLSQP": {"ftol": 1e-14, "maxiter": 500},
         "trust-constr": {"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000}}




# ---------------------------------------------------------------------------------------
# An equality-constrained quadratic program: the closed form
# ---------------------------------------------------------------------------------------

def equality_qp(n=5, k=2, p=3):
    """min 0.5 x^T Q x - b^T x  s.t.  A x = c, with b = B theta, c = C theta: x and lam
    solve [[Q, -A^T], [A, 0]] [x; lam] = [b; c] (grad f = Q x - b = A^T lam)."""
    M = RNG.standard_normal((n, n))
    Q = M @ M.T + n * np.eye(n)
    A = RNG.standard_normal((k, n))
    B, C = RNG.standard_normal((n, p)), RNG.standard_normal((k, p))
    kkt = np.block([[Q, -A.T], [A, np.zeros((k, k))]])
    L = np.linalg.solve(kkt, np.vstack([B, C]))[n:]           # lam = L theta

    def result(theta, method):
        b, c = cr.matmul(B, theta), cr.matmul(C, theta)
        return opt.minimize(lambda x, b: 0.5 * cr.sum(x * cr.matmul(Q, x)) - cr.sum(b * x),
                            np.zeros(n), args=(b,), method=method,
                            constraints={"type": "eq", "fun": lambda x, c: cr.matmul(A, x) - c,
                                         "args": (c,)}, options=TIGHT[method])

    return result, L, p


@pytest.mark.parametrize("method", METHODS)
def test_an_equality_qps_multipliers_match_the_kkt_systems_solution(method):
    result, L, p = equality_qp()
    theta = RNG.standard_normal(p)
    out = result(theta, method)
    np.testing.assert_allclose(out.constraint_multipliers, L @ theta, atol=1e-10)
    assert np.all(np.asarray(out.bound_multipliers) == 0)           # no bounds
    lam = lambda t: result(t, method).constraint_multipliers  # noqa: E731
    np.testing.assert_allclose(cr.jacrev(lam)(theta), L, atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(lam)(theta), L, atol=1e-10)
    square = lambda t: cr.sum(lam(t) ** 2)  # noqa: E731
    np.testing.assert_allclose(cr.hessian(square)(theta), 2 * L.T @ L, atol=1e-9)
    np.testing.assert_allclose(cr.jacfwd(cr.jacrev(square))(theta), 2 * L.T @ L, atol=1e-9)


def test_slsqps_own_multipliers_agree_on_equalities():
    result, L, p = equality_qp()
    out = result(RNG.standard_normal(p), "SLSQP")
    np.testing.assert_allclose(out.constraint_multipliers, out.multipliers, atol=1e-8)


# ---------------------------------------------------------------------------------------
# A two-sided LinearConstraint and bounds: the identity, the signs, central differences
# ---------------------------------------------------------------------------------------

A2 = np.array([[1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])


def project(a, method="SLSQP"):
    """The nearest point to a with 0.2 <= x0 + x1 <= 0.5, -1 <= x2 - x0 <= 1, x >= 0."""
    return opt.minimize(lambda x, a: 0.5 * cr.sum((x - a) ** 2), np.full(3, 0.1), args=(a,),
                        method=method, bounds=[(0.0, None)] * 3,
                        constraints=so.LinearConstraint(A2, [0.2, -1.0], [0.5, 1.0]),
                        options=TIGHT[method])


@pytest.mark.parametrize("method", METHODS)
def test_the_multipliers_satisfy_the_stationarity_identity_with_their_signs(method):
    a = np.array([1.0, 0.4, -0.3]) + 0.01 * RNG.standard_normal(3)
    out = project(a, method)
    x = np.asarray(out.x)
    np.testing.assert_allclose(x[0] + x[1], 0.5, atol=1e-12)        # the upper side
    np.testing.assert_allclose(x[1:], 0.0, atol=1e-12)              # at their lower bounds
    lam, mu = np.asarray(out.constraint_multipliers), np.asarray(out.bound_multipliers)
    np.testing.assert_allclose(x - a, A2.T @ lam + mu, atol=1e-10)   # grad f = J^T lam + mu
    assert lam[0] < 0 and lam[1] == 0                # an upper side active; one inactive
    assert mu[0] == 0 and np.all(mu[1:] > 0)         # lower bounds active on x1, x2


def test_the_multipliers_derivatives_match_central_differences():
    a = np.array([1.0, 0.4, -0.3]) + 0.01 * RNG.standard_normal(3)
    for name in ("constraint_multipliers", "bound_multipliers"):
        f = lambda a: getattr(project(a), name)  # noqa: E731
        jac = cr.jacrev(f)(a)
        np.testing.assert_allclose(jac, central(f, a), atol=1e-8)
        np.testing.assert_allclose(cr.jacfwd(f)(a), jac, atol=1e-12)


# ---------------------------------------------------------------------------------------
# vmap, cr.jit, Tensors
# ---------------------------------------------------------------------------------------

BATCH = np.array([[1.0, 0.4, -0.3], [1.2, 0.6, -0.1], [0.3, 0.1, 0.5]])   # the last inside


def test_vmap_gives_each_example_its_own_multipliers():
    for name in ("constraint_multipliers", "bound_multipliers"):
        f = lambda a: getattr(project(a), name)  # noqa: E731
        np.testing.assert_allclose(cr.vmap(f)(BATCH), [f(a) for a in BATCH], atol=1e-12)
        np.testing.assert_allclose(cr.vmap(cr.jacrev(f))(BATCH),
                                   [cr.jacrev(f)(a) for a in BATCH], atol=1e-12)
    assert np.all(np.asarray(project(BATCH[2]).constraint_multipliers) == 0)


def test_jit_equals_eager_at_two_points():
    fast = cr.jit(lambda a: project(a).constraint_multipliers)
    for a in BATCH[:2]:
        np.testing.assert_allclose(fast(a), project(a).constraint_multipliers, atol=1e-12)


def test_a_tensor_that_requires_grad_gets_the_multipliers_gradient_by_backward():
    a = BATCH[0]
    weights = np.array([1.0, 2.0])
    t = cr.tensor(a, requires_grad=True)
    cr.sum(project(t).constraint_multipliers * weights).backward()
    expected = cr.grad(lambda a: cr.sum(project(a).constraint_multipliers * weights))(a)
    np.testing.assert_allclose(t.grad, expected, atol=1e-12)
    assert np.abs(np.asarray(expected)).max() > 0.5

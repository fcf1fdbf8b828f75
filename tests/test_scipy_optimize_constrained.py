"""chainrule.scipy.optimize.minimize with constraints and bounds (issue 46): the solution
differentiated through the KKT conditions on its active set.

A quadratic program with equality constraints against its closed form (the KKT system
[[Q, A^T], [A, 0]] solved); inequality constraints, some active and some not, and active
bounds against central differences of the problem solved again, to second order; the
projection onto a simplex (LinearConstraint) against its closed form; forward = reverse;
vmap (with examples whose active sets differ) and cr.jit at two points = eager. Where
the KKT conditions do not give a derivative (a zero multiplier on an active constraint
or bound, dependent active gradients, no convergence), the value is still returned and
asking for a derivative raises one line naming the cause."""

import numpy as np
import pytest
import scipy.optimize as so

import chainrule as cr
from chainrule.scipy import optimize as opt
from seeds_and_tolerances import central_differences as central, per_test_generator

RNG = per_test_generator(4646)
METHODS = ["SLSQP", "trust-constr"]
TIGHT = {"SLSQP": {"ftol": 1e-13, "maxiter": 500},
         "trust-constr": {"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000}}




# ---------------------------------------------------------------------------------------
# A quadratic program with equality constraints: the closed form
# ---------------------------------------------------------------------------------------

def equality_qp(n=5, k=2, p=3):
    M = RNG.standard_normal((n, n))
    Q = M @ M.T + n * np.eye(n)
    A = RNG.standard_normal((k, n))
    B, b0 = RNG.standard_normal((n, p)), RNG.standard_normal(n)
    C, c0 = RNG.standard_normal((k, p)), RNG.standard_normal(k)
    kkt = np.block([[Q, A.T], [A, np.zeros((k, k))]])
    D = np.linalg.solve(kkt, np.vstack([B, C]))[:n]            # dx*/dtheta
    e = np.linalg.solve(kkt, np.concatenate([b0, c0]))[:n]     # x*(0)

    def solution(theta, method):
        b = cr.matmul(B, theta) + b0
        c = cr.matmul(C, theta) + c0
        return opt.minimize(lambda x, b: 0.5 * cr.sum(x * cr.matmul(Q, x)) - cr.sum(b * x),
                            np.zeros(n), args=(b,), method=method,
                            constraints=[{"type": "eq", "fun": lambda x, c: cr.matmul(A, x) - c,
                                          "args": (c,)}],
                            options=TIGHT[method]).x

    return solution, D, e, p


@pytest.mark.parametrize("method", METHODS)
def test_equality_qp_matches_the_closed_form_kkt_solution(method):
    solution, D, e, p = equality_qp()
    theta = RNG.standard_normal(p)
    x = lambda t: solution(t, method)  # noqa: E731
    np.testing.assert_allclose(x(theta), D @ theta + e, atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(x)(theta), D, atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(x)(theta), D, atol=1e-10)
    outer = lambda t: cr.sum(x(t) ** 3)  # noqa: E731
    xs = D @ theta + e
    np.testing.assert_allclose(cr.grad(outer)(theta), D.T @ (3 * xs ** 2), atol=1e-9)
    hessian = D.T @ np.diag(6 * xs) @ D
    np.testing.assert_allclose(cr.hessian(outer)(theta), hessian, atol=1e-9)
    np.testing.assert_allclose(cr.jacfwd(cr.jacrev(outer))(theta), hessian, atol=1e-9)
    np.testing.assert_allclose(cr.jacrev(cr.jacfwd(outer))(theta), hessian, atol=1e-9)


# ---------------------------------------------------------------------------------------
# Inequalities, active and not, and active bounds: central differences
# ---------------------------------------------------------------------------------------

def inequality_problem(method):
    w = 1.0 + RNG.random(3)

    def solution(t):
        p = cr.stack([1.2 + t[0], 0.3 * t[1], 0.5 + 0.1 * t[0] * t[1]])
        cons = [{"type": "ineq", "fun": lambda x, s: 1.0 - cr.sum(x * x) - s * x[0],
                 "args": (0.2 * t[1],)},                             # active
                {"type": "ineq", "fun": lambda x: x[0] + x[1] + 5.0}]  # not active
        return opt.minimize(lambda x, p: 0.5 * cr.sum(w * (x - p) ** 2) + 0.1 * cr.sum(x ** 4),
                            np.zeros(3), args=(p,), method=method, constraints=cons,
                            bounds=[(-1, 1), (-1, 1), (-1, 0.1)],   # x[2] <= 0.1 active
                            options=TIGHT[method]).x

    return solution


@pytest.mark.parametrize("method", METHODS)
def test_inequalities_and_bounds_match_central_differences(method):
    solution = inequality_problem(method)
    theta = np.array([0.4, 0.6]) + 0.05 * RNG.standard_normal(2)
    x = np.asarray(solution(theta))
    assert abs(x[2] - 0.1) < 1e-12                                 # at its bound
    assert abs(1.0 - x @ x - 0.2 * theta[1] * x[0]) < 1e-12      # on the constraint
    jac = cr.jacrev(solution)(theta)
    np.testing.assert_allclose(jac, central(solution, theta), atol=1e-7)
    np.testing.assert_allclose(cr.jacfwd(solution)(theta), jac, atol=1e-12)
    assert np.all(np.asarray(jac)[2] == 0)                        # the fixed coordinate
    outer = lambda t: cr.sum(cr.sin(solution(t)))  # noqa: E731
    hessian = cr.hessian(outer)(theta)
    np.testing.assert_allclose(hessian, central(lambda t: cr.grad(outer)(t), theta),
                               atol=1e-7)
    np.testing.assert_allclose(cr.jacrev(cr.jacfwd(outer))(theta), hessian, atol=1e-10)


def test_a_closed_over_parameter_in_a_constraint_is_differentiated():
    def with_args(s):
        return opt.minimize(lambda x: cr.sum((x - 2.0) ** 2), np.zeros(2), method="SLSQP",
                            constraints={"type": "ineq", "fun": lambda x, s: s - cr.sum(x * x),
                                         "args": (s,)}, options=TIGHT["SLSQP"]).x

    def closed(s):
        return opt.minimize(lambda x: cr.sum((x - 2.0) ** 2), np.zeros(2), method="SLSQP",
                            constraints={"type": "ineq", "fun": lambda x: s - cr.sum(x * x)},
                            options=TIGHT["SLSQP"]).x

    s = 1.0 + RNG.random()        # x* = sqrt(s / 2) (1, 1): dx*/ds = 1 / (2 sqrt(2 s))
    expected = np.full(2, 1.0 / (2.0 * np.sqrt(2.0 * s)))
    np.testing.assert_allclose(cr.jacrev(with_args)(s), expected, atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(closed)(s), expected, atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(closed)(s), expected, atol=1e-10)


# ---------------------------------------------------------------------------------------
# The projection onto the simplex (LinearConstraint and bounds): its closed form
# ---------------------------------------------------------------------------------------

def project(a, method="SLSQP"):
    n = np.shape(a)[0]
    return opt.minimize(lambda x, a: 0.5 * cr.sum((x - a) ** 2), np.full(n, 1.0 / n),
                        args=(a,), method=method,
                        constraints=so.LinearConstraint(np.ones((1, n)), 1.0, 1.0),
                        bounds=[(0.0, None)] * n, options=TIGHT[method]).x


def simplex_projection(a):
    """The projection onto {x >= 0, sum x = 1} and its Jacobian, in closed form."""
    u = np.sort(a)[::-1]
    cumulative = np.cumsum(u) - 1.0
    k = np.flatnonzero(u - cumulative / np.arange(1, a.size + 1) > 0)[-1] + 1
    x = np.maximum(a - cumulative[k - 1] / k, 0.0)
    support = (x > 0).astype(float)
    return x, np.diag(support) - np.outer(support, support) / support.sum()


@pytest.mark.parametrize("method", METHODS)
def test_the_projection_onto_a_simplex_matches_its_closed_form(method):
    a = np.array([0.9, 0.5, -0.4, 0.1, 0.05]) + 0.01 * RNG.standard_normal(5)
    x, jac = simplex_projection(a)
    assert 0 < (x == 0).sum() < a.size                      # some bounds active, some not
    np.testing.assert_allclose(project(a, method), x, atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(lambda a: project(a, method))(a), jac, atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(lambda a: project(a, method))(a), jac, atol=1e-10)


@pytest.mark.parametrize("method", METHODS + ["COBYLA"])
def test_a_portfolio_at_the_solvers_default_tolerances(method):
    # trust-constr's interior point stops short of the bound (its multiplier finds it);
    # COBYLA uses no derivatives: the answer is refined on the KKT conditions all the same
    factors = RNG.standard_normal((4, 2))
    cov = factors @ factors.T / 2 + 0.05 * np.eye(4)
    mu = np.array([0.3, 0.2, -3.0, 0.1])

    def weights(mu):
        return opt.minimize(lambda w, mu: 2.0 * cr.sum(w * cr.matmul(cov, w)) - cr.sum(mu * w),
                            np.full(4, 0.25), args=(mu,), method=method,
                            bounds=[(0.0, None)] * 4,
                            constraints={"type": "eq", "fun": lambda w: cr.sum(w) - 1.0}).x

    w = np.asarray(weights(mu))
    held = np.flatnonzero(w > 0)
    assert held.size < 4                               # some weight at its bound
    k = held.size                                      # the KKT system on the assets held
    kkt = np.block([[4.0 * cov[np.ix_(held, held)], np.ones((k, 1))],
                    [np.ones((1, k)), np.zeros((1, 1))]])
    expected = np.zeros((4, 4))
    expected[np.ix_(held, held)] = np.linalg.inv(kkt)[:k, :k]
    np.testing.assert_allclose(w[held], np.linalg.solve(kkt, np.r_[mu[held], 1.0])[:k],
                               atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(weights)(mu), expected, atol=1e-9)


def test_a_nonlinear_constraint_with_two_sides():
    ring = so.NonlinearConstraint(lambda x: cr.sum(x * x), 1.0, 4.0)   # 1 <= |x|^2 <= 4

    def best(a):
        return opt.minimize(lambda x, a: cr.sum((x - a) ** 2), np.array([1.5, 0.0]),
                            args=(a,), method="SLSQP", constraints=[ring],
                            options=TIGHT["SLSQP"]).x

    a = np.array([3.0, 1.0]) * (1.0 + 0.1 * RNG.random())   # outside: x* = 2 a / |a|
    r = np.linalg.norm(a)
    np.testing.assert_allclose(best(a), 2 * a / r, atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(best)(a), 2 / r * (np.eye(2) - np.outer(a, a) / r ** 2),
                               atol=1e-9)
    inside = np.array([1.2, 0.5])                              # no constraint active
    np.testing.assert_allclose(cr.jacrev(best)(inside), np.eye(2), atol=1e-10)


# ---------------------------------------------------------------------------------------
# vmap and cr.jit
# ---------------------------------------------------------------------------------------

def test_vmap_solves_each_example_with_its_own_active_set():
    batch = np.array([[0.9, 0.5, -0.4, 0.1], [0.3, 0.2, 0.25, 0.24],
                      [2.0, -1.0, 0.0, 0.5]]) + 0.01 * RNG.standard_normal((3, 4))
    expected = [simplex_projection(a) for a in batch]
    np.testing.assert_allclose(cr.vmap(project)(batch), [x for x, _ in expected], atol=1e-10)
    np.testing.assert_allclose(cr.vmap(cr.jacrev(project))(batch),
                               [j for _, j in expected], atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(lambda b: cr.sum(cr.vmap(project)(b) ** 2))(batch),
                               [2 * j.T @ x for x, j in expected], atol=1e-10)


def test_jit_equals_eager_at_two_points():
    fast, fast_jacobian = cr.jit(project), cr.jit(cr.jacrev(project))
    for a in (np.array([0.9, 0.5, -0.4, 0.1]), np.array([0.3, 0.2, 0.25, 0.24])):
        a = a + 0.01 * RNG.standard_normal(4)
        x, jac = simplex_projection(a)
        np.testing.assert_allclose(fast(a), project(a), atol=1e-12)
        np.testing.assert_allclose(fast(a), x, atol=1e-10)
        np.testing.assert_allclose(fast_jacobian(a), cr.jacrev(project)(a), atol=1e-12)
        np.testing.assert_allclose(fast_jacobian(a), jac, atol=1e-10)


def test_vmap_and_jit_over_a_parameter_of_a_constraint():
    def closed(s):       # s closed over (a batch under vmap)
        return opt.minimize(lambda x: cr.sum((x - 2.0) ** 2), np.zeros(2), method="SLSQP",
                            constraints={"type": "ineq", "fun": lambda x: s - cr.sum(x * x)},
                            options=TIGHT["SLSQP"]).x

    def passed(s):       # s in the constraint's args
        return opt.minimize(lambda x: cr.sum((x - 2.0) ** 2), np.zeros(2), method="SLSQP",
                            constraints={"type": "ineq", "fun": lambda x, s: s - cr.sum(x * x),
                                         "args": (s,)}, options=TIGHT["SLSQP"]).x

    s = np.array([1.0, 2.0, 9.0]) + 0.1 * RNG.random(3)   # the last inside: (2, 2) feasible
    slope = np.where(s < 8.0, 1.0 / (2.0 * np.sqrt(2.0 * s)), 0.0)
    for f in (closed, passed):
        np.testing.assert_allclose(cr.vmap(cr.jacrev(f))(s), np.stack([slope, slope], 1),
                                   atol=1e-10)
    outer = lambda s: cr.sum(passed(s) ** 3)  # noqa: E731   2 (s / 2)^(3/2) on the circle
    fast = cr.jit(cr.hessian(outer))
    for point in s[:2]:
        np.testing.assert_allclose(fast(point), cr.hessian(outer)(point), atol=1e-12)
        np.testing.assert_allclose(fast(point), 0.75 / np.sqrt(2.0 * point), atol=1e-9)


# ---------------------------------------------------------------------------------------
# Refusals: values still work, a derivative raises one line naming the cause
# ---------------------------------------------------------------------------------------

def squared_distance(x, a):
    return cr.sum((x - a) ** 2)


def test_an_active_constraint_with_a_zero_multiplier_refuses():
    def best(a):      # the unconstrained minimum a lies on the constraint x[0] <= 1
        return opt.minimize(squared_distance, np.zeros(2), args=(a,), method="SLSQP",
                            constraints=[{"type": "ineq", "fun": lambda x: 1.0 - x[0]}],
                            options=TIGHT["SLSQP"]).x

    a = np.array([1.0, RNG.random()])
    np.testing.assert_allclose(best(a), a, atol=1e-9)
    with pytest.raises(ValueError, match=r"^minimize: inequality constraint 0 is active at "
                                         r"the solution with multiplier .* \(strict "
                                         r"complementarity fails"):
        cr.jacrev(best)(a)


def test_an_active_bound_with_a_zero_multiplier_refuses():
    def best(a):
        return opt.minimize(squared_distance, np.zeros(2), args=(a,), method="L-BFGS-B",
                            bounds=[(None, 1.0), (None, None)]).x

    a = np.array([1.0, 0.3])
    np.testing.assert_allclose(best(a), a, atol=1e-7)
    with pytest.raises(ValueError, match=r"the bound on x\[0\] is active at the solution "
                                         r"with multiplier .* \(strict complementarity"):
        cr.jacrev(best)(a)


@pytest.mark.parametrize("method", METHODS)
def test_dependent_active_gradients_refuse(method):
    def best(a):      # x[0] <= 1 twice over, both active
        return opt.minimize(squared_distance, np.zeros(2), args=(a,), method=method,
                            constraints=[{"type": "ineq", "fun": lambda x: 1.0 - x[0]},
                                         {"type": "ineq", "fun": lambda x: 2.0 - 2.0 * x[0]}]).x

    a = np.array([2.0, 0.5])
    np.testing.assert_allclose(best(a), [1.0, 0.5], atol=1e-3)
    with pytest.raises(ValueError, match=r"^minimize: the active constraints' gradients are "
                                         r"linearly dependent .*\(LICQ fails"):
        cr.jacrev(best)(a)


def test_no_convergence_refuses():
    def best(a):
        return opt.minimize(lambda x, a: cr.sum((x - a) ** 4) + cr.sum(cr.exp(x)), np.zeros(2),
                            args=(a,), method="SLSQP", options={"maxiter": 2},
                            constraints=[{"type": "ineq", "fun": lambda x: x[0] + x[1] + 3.0}]).x

    a = np.array([1.0, 0.5])
    assert np.shape(best(a)) == (2,)
    with pytest.raises(ValueError, match=r"^minimize: the solver did not converge \(Iteration "
                                         r"limit reached\)"):
        cr.jacrev(best)(a)
    with pytest.raises(ValueError, match="did not converge"):
        cr.jacfwd(best)(a)


def test_an_error_is_one_line():
    def best(a):
        return opt.minimize(squared_distance, np.zeros(2), args=(a,), method="SLSQP",
                            constraints=[{"type": "ineq", "fun": lambda x: 1.0 - x[0]}]).x

    with pytest.raises(ValueError) as raised:
        cr.jacrev(best)(np.array([1.0, 0.0]))
    assert "\n" not in str(raised.value)

"""Bounds that depend on the parameters (issue 46): where x* lies on a bound, it moves
with that bound, and the other coordinates follow through the optimality conditions.

A bounded quadratic program whose active set is built in, against its closed form to
second order: x_S = the active bounds (functions of theta), x_F = Q_FF^-1 (c_F - Q_FS x_S),
so dx_F = -Q_FF^-1 Q_FS dx_S, and the bounds' multipliers are (Q x - c) on S. Then a
bounded nonlinear least squares against central differences of the problem solved again;
forward = reverse; vmap = a loop; cr.jit = eager; a Tensor bound through backward()."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.scipy import optimize as opt
from seeds_and_tolerances import central_differences as central, per_test_generator

RNG = per_test_generator(4648)
THETA = np.array([0.8, 0.6])
METHODS = ["L-BFGS-B", "SLSQP", "trust-constr", "TNC"]
TOLS = {"L-BFGS-B": {"ftol": 1e-15, "gtol": 1e-12}, "SLSQP": {"ftol": 1e-14},
        "trust-constr": {"gtol": 1e-12, "xtol": 1e-14}, "TNC": {"ftol": 1e-15, "gtol": 1e-12}}


# ---------------------------------------------------------------------------------------
# A quadratic program: x[0] on a lower bound theta0^2, x[2] on an upper bound sin(theta1)
# ---------------------------------------------------------------------------------------

def lower0(theta):
    return theta[0] ** 2


def upper2(theta):
    return cr.sin(theta[1])


def quadratic_program():
    """Q (SPD), c such that at THETA the solution has x[0] at its lower bound with
    multiplier 0.7 and x[2] at its upper bound with multiplier -0.5 (grad f = Q x - c)."""
    B = RNG.standard_normal((4, 4))
    Q = B @ B.T + 4 * np.eye(4)
    x_star = np.array([lower0(THETA), 0.3, np.sin(THETA[1]), -0.2])
    mu = np.array([0.7, 0.0, -0.5, 0.0])
    return Q, Q @ x_star - mu


def solve_qp(theta, Q, c, method):
    bounds = [(lower0(theta), None), (None, None), (-5.0, upper2(theta)), (-5.0, 5.0)]
    return opt.minimize(lambda x: 0.5 * x @ (Q @ x) - c @ x, np.zeros(4), method=method,
                        bounds=bounds, options=TOLS[method])


def closed_form(theta, Q, c):
    """x*, dx*/dtheta and d2x*/dtheta2 (4, 2, 2) on the known active set S = {0, 2}."""
    S, F = [0, 2], [1, 3]
    t0, t1 = theta
    xs = np.array([t0 ** 2, np.sin(t1)])
    dxs = np.array([[2 * t0, 0.0], [0.0, np.cos(t1)]])
    d2xs = np.zeros((2, 2, 2))
    d2xs[0, 0, 0], d2xs[1, 1, 1] = 2.0, -np.sin(t1)
    back = -np.linalg.solve(Q[np.ix_(F, F)], Q[np.ix_(F, S)])  # dx_F / dx_S
    x, dx, d2x = np.zeros(4), np.zeros((4, 2)), np.zeros((4, 2, 2))
    x[S], dx[S], d2x[S] = xs, dxs, d2xs
    x[F] = np.linalg.solve(Q[np.ix_(F, F)], c[F] - Q[np.ix_(F, S)] @ xs)
    dx[F] = back @ dxs
    d2x[F] = np.einsum("fs,sij->fij", back, d2xs)
    return x, dx, d2x


@pytest.mark.parametrize("method", METHODS)
def test_a_quadratic_program_follows_its_moving_bounds_to_second_order(method):
    Q, c = quadratic_program()
    x, dx, d2x = closed_form(THETA, Q, c)
    solution = lambda theta: solve_qp(theta, Q, c, method).x  # noqa: E731
    np.testing.assert_allclose(solution(THETA), x, atol=1e-9)
    np.testing.assert_allclose(cr.jacrev(solution)(THETA), dx, atol=1e-8)
    np.testing.assert_allclose(cr.jacfwd(solution)(THETA), dx, atol=1e-8)
    w = RNG.standard_normal(4)
    np.testing.assert_allclose(cr.hessian(lambda t: w @ solution(t))(THETA),
                               np.einsum("f,fij->ij", w, d2x), atol=1e-7)


def test_the_bounds_multipliers_move_with_the_bounds():
    Q, c = quadratic_program()
    x, dx, _ = closed_form(THETA, Q, c)
    mu = lambda theta: solve_qp(theta, Q, c, "L-BFGS-B").bound_multipliers  # noqa: E731
    on_bounds = np.array([1.0, 0.0, 1.0, 0.0])  # mu = (Q x - c) on S, 0 elsewhere
    np.testing.assert_allclose(mu(THETA), on_bounds * (Q @ x - c), atol=1e-9)
    np.testing.assert_allclose(cr.jacfwd(mu)(THETA), on_bounds[:, None] * (Q @ dx),
                               atol=1e-8)


def test_a_bound_and_an_argument_both_move():
    """d/dc of x* as well: the free coordinates move with c, the bound ones do not."""
    Q, c = quadratic_program()
    F = [1, 3]

    def solution(theta, c):
        bounds = [(lower0(theta), None), (None, None), (-5.0, upper2(theta)), (-5.0, 5.0)]
        return opt.minimize(lambda x, c: 0.5 * x @ (Q @ x) - c @ x, np.zeros(4),
                            args=(c,), method="L-BFGS-B", bounds=bounds,
                            options=TOLS["L-BFGS-B"]).x
    by_c = cr.jacrev(solution, argnums=1)(THETA, c)
    expected = np.zeros((4, 4))
    expected[np.ix_(F, F)] = np.linalg.inv(Q[np.ix_(F, F)])
    np.testing.assert_allclose(by_c, expected, atol=1e-8)
    np.testing.assert_allclose(cr.jacfwd(solution)(THETA, c), closed_form(THETA, Q, c)[1],
                               atol=1e-8)


def test_vmap_and_jit_equal_a_loop_of_eager_solves():
    Q, c = quadratic_program()
    thetas = THETA + 0.01 * RNG.standard_normal((3, 2))
    solution = lambda theta: solve_qp(theta, Q, c, "L-BFGS-B").x  # noqa: E731
    jac = cr.jacrev(solution)
    np.testing.assert_allclose(cr.vmap(solution)(thetas),
                               np.stack([solution(t) for t in thetas]), atol=1e-10)
    np.testing.assert_allclose(cr.vmap(jac)(thetas), np.stack([jac(t) for t in thetas]),
                               atol=1e-10)
    jitted, traced_bounds = cr.jit(jac), cr.jit(solution)  # (the bounds traced values)
    for theta in thetas[:2]:
        np.testing.assert_allclose(jitted(theta), jac(theta), atol=1e-10)
        np.testing.assert_allclose(traced_bounds(theta), solution(theta), atol=1e-10)


def test_a_tensor_bound_gets_its_gradient_from_backward():
    Q, c = quadratic_program()
    theta = cr.tensor(THETA, requires_grad=True)
    w = RNG.standard_normal(4)
    (cr.tensor(w) * solve_qp(theta, Q, c, "L-BFGS-B").x).sum().backward()
    np.testing.assert_allclose(theta.grad, w @ closed_form(THETA, Q, c)[1], atol=1e-8)


# ---------------------------------------------------------------------------------------
# least_squares: an exponential fit whose amplitude is capped by a parameter
# ---------------------------------------------------------------------------------------

T = np.linspace(0.0, 1.0, 8)
DATA = 2.0 * np.exp(-1.3 * T)  # the unconstrained fit's amplitude is 2


def capped_fit(cap, method):
    """(amplitude, rate) with amplitude <= cap (1.5: active) and rate >= cap - 2."""
    residuals = lambda p: p[0] * cr.exp(-p[1] * T) - DATA  # noqa: E731
    lower = cr.stack([-np.inf, cap - 2.0])
    upper = cr.stack([cap, np.inf])
    return opt.least_squares(residuals, np.array([1.0, 1.0]), bounds=(lower, upper),
                             method=method, xtol=1e-15, ftol=1e-15, gtol=1e-15).x


@pytest.mark.parametrize("method", ["trf", "dogbox"])
def test_a_capped_fit_matches_central_differences_to_second_order(method):
    cap = np.array(1.5)
    fit = lambda c: capped_fit(c, method)  # noqa: E731
    assert abs(float(fit(cap)[0]) - 1.5) < 1e-12  # the cap is active
    np.testing.assert_allclose(cr.jit(fit)(np.array(1.4)), fit(np.array(1.4)), atol=1e-12)
    first = cr.jacrev(fit)(cap)
    np.testing.assert_allclose(first, central(fit, cap, h=1e-5), atol=1e-7)
    np.testing.assert_allclose(cr.jacfwd(fit)(cap), first, atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(cr.jacrev(fit))(cap),
                               central(cr.jacrev(fit), cap, h=1e-4), atol=1e-6)

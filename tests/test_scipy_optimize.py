"""chainrule.scipy.optimize: SciPy's solvers, their answers differentiated by the
implicit function theorem with respect to the problem's arguments.

Each derivative is checked against a closed form where one exists (ridge regression,
a linear system, least squares' pseudo-inverse) and against central differences of the
problem solved again, to second order; forward and reverse mode agree; vmap solves
once per example; cr.jit solves at every call. Where the answer is not a root of the
optimality conditions (no convergence), differentiating raises. A value the function
closes over is differentiated as if it were passed in args, under one vmap or two."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.scipy import optimize as opt
from seeds_and_tolerances import central_differences as central, per_test_generator

RNG = per_test_generator(46)
TIGHT = {"gtol": 1e-12}




# ---------------------------------------------------------------------------------------
# minimize
# ---------------------------------------------------------------------------------------

def ridge_problem():
    X = RNG.standard_normal((12, 3))
    y = RNG.standard_normal(12)
    return X, y


def ridge_loss(w, lam, X, y):
    r = X @ w - y
    return 0.5 * cr.sum(r * r) + 0.5 * lam * cr.sum(w * w)


def ridge_closed_form(lam, X, y):
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)


# Each method with options that take it close to the minimum; trust-ncg's ratio of
# predicted to actual decrease stalls near 1e-7 in the gradient on this problem, so it
# is asked for less (and the comparisons allow for it).
METHODS = {"BFGS": ({"gtol": 1e-10}, None, 1e-7), "CG": ({"gtol": 1e-10}, None, 1e-7),
           "L-BFGS-B": (None, 1e-13, 1e-7), "Newton-CG": (None, 1e-13, 1e-7),
           "trust-ncg": ({"gtol": 1e-6}, None, 1e-5), "trust-krylov": ({"gtol": 1e-10}, None, 1e-7),
           "trust-exact": ({"gtol": 1e-10}, None, 1e-7), "dogleg": ({"gtol": 1e-10}, None, 1e-7),
           "trust-constr": ({"gtol": 1e-12, "xtol": 1e-14}, None, 1e-7)}


@pytest.mark.parametrize("method", list(METHODS))
def test_ridge_regressions_weights_and_their_derivative_in_the_penalty(method):
    X, y = ridge_problem()
    options, tol, atol = METHODS[method]

    def weights(lam):
        return opt.minimize(ridge_loss, np.zeros(3), args=(lam, X, y), method=method,
                            tol=tol, options=options).x

    lam = 0.7
    w = weights(lam)
    np.testing.assert_allclose(w, ridge_closed_form(lam, X, y), atol=atol)
    # dw/dlam = -(X^T X + lam I)^-1 w
    expected = -np.linalg.solve(X.T @ X + lam * np.eye(3), ridge_closed_form(lam, X, y))
    np.testing.assert_allclose(cr.jacrev(weights)(lam), expected, atol=10 * atol)
    np.testing.assert_allclose(cr.jacfwd(weights)(lam), expected, atol=10 * atol)


def test_the_gradient_in_every_argument_and_the_data_matches_central_differences():
    X, y = ridge_problem()

    def weights(lam, y):
        return opt.minimize(ridge_loss, np.zeros(3), args=(lam, X, y), method="BFGS",
                            options=TIGHT).x

    lam = 1.3
    dlam, dy = cr.jacrev(weights, argnums=(0, 1))(lam, y)
    np.testing.assert_allclose(dlam, central(lambda l: weights(float(l), y), lam), atol=1e-7)
    np.testing.assert_allclose(dy, central(lambda v: weights(lam, v), y), atol=1e-7)
    fdlam, fdy = cr.jacfwd(weights, argnums=(0, 1))(lam, y)
    np.testing.assert_allclose(fdlam, dlam, atol=1e-12)
    np.testing.assert_allclose(fdy, dy, atol=1e-12)


def validation_loss(lam, X, y, X_val, y_val):
    w = opt.minimize(ridge_loss, np.zeros(X.shape[1]), args=(lam, X, y), method="BFGS",
                     options=TIGHT).x
    r = X_val @ w - y_val
    return cr.sum(r * r)


def test_the_hessian_of_a_validation_loss_through_the_inner_solution():
    X, y = ridge_problem()
    X_val, y_val = RNG.standard_normal((8, 3)), RNG.standard_normal(8)

    def exact(lam):  # the same loss with the closed-form weights, in chainrule's operations
        w = cr.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)
        r = X_val @ w - y_val
        return cr.sum(r * r)

    lam = 0.4
    assert float(validation_loss(lam, X, y, X_val, y_val)) == pytest.approx(
        float(exact(lam)), rel=1e-9)
    first = cr.grad(validation_loss)(lam, X, y, X_val, y_val)
    assert first == pytest.approx(cr.grad(exact)(lam), rel=1e-7)
    second = cr.grad(cr.grad(validation_loss))(lam, X, y, X_val, y_val)
    assert second == pytest.approx(cr.grad(cr.grad(exact))(lam), rel=1e-6)
    assert cr.jacfwd(cr.grad(validation_loss))(lam, X, y, X_val, y_val) == pytest.approx(
        second, rel=1e-9)


def test_a_nonquadratic_minimum_to_second_order_against_differences_of_resolves():
    # argmin_x sum(exp(x) - a * x + 0.1 x^4): the first order condition exp(x) + 0.4x^3 = a
    def best(a):
        return opt.minimize(lambda x, a: cr.sum(cr.exp(x) - a * x + 0.1 * x ** 4),
                            np.zeros(2), args=(a,), method="trust-exact",
                            options={"gtol": 1e-13}).x

    a = np.array([1.5, 3.0])
    J = cr.jacrev(best)(a)
    np.testing.assert_allclose(J, central(best, a), atol=1e-7)
    H = cr.jacfwd(cr.jacrev(best))(a)
    np.testing.assert_allclose(H, central(lambda b: cr.jacrev(best)(b), a), atol=1e-6)


def test_fun_of_the_result_is_differentiable_too():
    X, y = ridge_problem()
    lam = cr.tensor(0.5, requires_grad=True)
    result = opt.minimize(ridge_loss, np.zeros(3), args=(lam, X, y), method="BFGS",
                          options=TIGHT)
    result.fun.backward()          # d min_w L(w, lam) / d lam = 0.5 |w*|^2 (the envelope)
    w = ridge_closed_form(0.5, X, y)
    assert float(lam.grad) == pytest.approx(0.5 * w @ w, rel=1e-8)
    assert result.success and result.nit > 0


def test_a_solve_with_nothing_to_differentiate_is_scipys_answer():
    X, y = ridge_problem()
    ours = opt.minimize(ridge_loss, np.zeros(3), args=(0.5, X, y), method="BFGS")
    import scipy.optimize as so
    theirs = so.minimize(lambda w: 0.5 * np.sum((X @ w - y) ** 2) + 0.25 * w @ w,
                         np.zeros(3), method="BFGS")
    assert isinstance(ours.x, np.ndarray)
    np.testing.assert_allclose(ours.x, theirs.x, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Roots and least squares
# ---------------------------------------------------------------------------------------

def test_a_linear_system_solved_by_root_has_the_inverses_derivatives():
    A0 = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal(3)

    def solution(A):
        return opt.root(lambda x, A: A @ x - b, np.zeros(3), args=(A,), tol=1e-14).x

    x = np.linalg.solve(A0, b)
    np.testing.assert_allclose(solution(A0), x, atol=1e-12)
    # dx/dA[i, j] = -A^-1 e_i x_j
    expected = -np.einsum("ki,j->kij", np.linalg.inv(A0), x)
    np.testing.assert_allclose(cr.jacrev(solution)(A0), expected, atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(solution)(A0), expected, atol=1e-10)


@pytest.mark.parametrize("method", ["hybr", "lm"])
def test_root_and_fsolve_of_a_nonlinear_system_to_second_order(method):
    def residual(x, p):
        return cr.stack([x[0] ** 3 + p[0] * x[1] - 1.0, cr.sin(x[1]) + x[0] - p[1]])

    def by_root(p):
        return opt.root(residual, np.array([0.9, 0.2]), args=(p,), method=method,
                        tol=1e-12).x

    def by_fsolve(p):
        return opt.fsolve(residual, np.array([0.9, 0.2]), args=(p,), xtol=1e-12)

    p = np.array([0.8, 1.1])
    np.testing.assert_allclose(by_root(p), by_fsolve(p), atol=1e-12)
    J = cr.jacrev(by_root)(p)
    np.testing.assert_allclose(J, central(by_root, p), atol=1e-8)
    np.testing.assert_allclose(cr.jacfwd(by_fsolve)(p), J, atol=1e-10)
    H = cr.jacrev(cr.jacfwd(by_root))(p)
    np.testing.assert_allclose(H, central(lambda q: cr.jacfwd(by_root)(q), p), atol=1e-6)


def test_least_squares_answer_has_the_pseudo_inverses_derivative_in_the_data():
    t = np.linspace(0.0, 1.0, 7)
    A = np.stack([np.ones_like(t), t, t * t], axis=1)

    def fit(y):
        return opt.least_squares(lambda c, y: A @ c - y, np.zeros(3), args=(y,),
                                 xtol=1e-15, ftol=1e-15, gtol=1e-15).x

    y = RNG.standard_normal(7)
    np.testing.assert_allclose(fit(y), np.linalg.lstsq(A, y, rcond=None)[0], atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(fit)(y), np.linalg.pinv(A), atol=1e-9)
    np.testing.assert_allclose(cr.jacfwd(fit)(y), np.linalg.pinv(A), atol=1e-9)


def exponential_fit(loss, y, t):
    def fit(scale):
        return opt.least_squares(lambda c, s: c[0] * cr.exp(-c[1] * t) - s * y,
                                 np.array([1.0, 1.0]), args=(scale,), loss=loss,
                                 f_scale=0.1, xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    return fit


def test_a_nonlinear_fit_scaled_data_scales_the_amplitude_alone():
    t = np.linspace(0.0, 2.0, 9)
    y = 2.0 * np.exp(-0.7 * t) + 0.05 * RNG.standard_normal(9)
    fit = exponential_fit("linear", y, t)
    c = fit(1.2)        # s y is fitted by (s c0, c1): dc/ds = (c0 / s, 0)
    np.testing.assert_allclose(cr.jacrev(fit)(1.2), [c[0] / 1.2, 0.0], atol=1e-8)
    np.testing.assert_allclose(cr.jacfwd(fit)(1.2), [c[0] / 1.2, 0.0], atol=1e-8)


@pytest.mark.parametrize("loss", ["soft_l1", "huber", "cauchy", "arctan"])
def test_a_nonlinear_fit_with_each_robust_loss_against_differences(loss):
    # The re-solves are accurate to about 1e-10, so the differences take a wide step.
    t = np.linspace(0.0, 2.0, 9)
    y = 2.0 * np.exp(-0.7 * t) + 0.05 * RNG.standard_normal(9)
    fit = exponential_fit(loss, y, t)
    np.testing.assert_allclose(cr.jacrev(fit)(1.2), central(fit, 1.2, h=1e-3),
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(cr.jacfwd(fit)(1.2), cr.jacrev(fit)(1.2), atol=1e-10)


def test_scalar_roots_agree_with_each_other_and_the_implicit_derivative():
    f = lambda x, k: cr.cos(x) - k * x                       # noqa: E731
    k = 1.0
    x = 0.7390851332151607
    expected = x / (-np.sin(x) - k)                          # -F_k / F_x
    answers = {
        "brentq": lambda k: opt.brentq(f, 0.0, 2.0, args=(k,)),
        "root_scalar": lambda k: opt.root_scalar(f, args=(k,), bracket=[0.0, 2.0]).root,
        "newton": lambda k: opt.newton(f, 0.5, args=(k,), tol=1e-14),
        "halley": lambda k: opt.root_scalar(f, args=(k,), x0=0.5, method="halley").root,
    }
    for name, answer in answers.items():
        assert float(answer(k)) == pytest.approx(x, abs=1e-10), name
        assert cr.grad(answer)(k) == pytest.approx(expected, rel=1e-8), name
        second = cr.grad(cr.grad(answer))(k)
        assert second == pytest.approx(float(central(cr.grad(answer), k)), rel=1e-5), name


def test_newton_on_an_array_solves_each_entry():
    def roots(c):
        return opt.newton(lambda x, c: x * x - c, np.ones(3), args=(c,), tol=1e-14)

    c = np.array([2.0, 3.0, 5.0])
    np.testing.assert_allclose(roots(c), np.sqrt(c), rtol=1e-12)
    np.testing.assert_allclose(cr.jacrev(roots)(c), np.diag(0.5 / np.sqrt(c)), rtol=1e-9)


# ---------------------------------------------------------------------------------------
# Transforms: vmap, jit, Tensors
# ---------------------------------------------------------------------------------------

def test_vmap_solves_once_per_example():
    X, y = ridge_problem()
    lams = np.array([0.1, 1.0, 5.0])

    def weights(lam):
        return opt.minimize(ridge_loss, np.zeros(3), args=(lam, X, y), method="BFGS",
                            options=TIGHT).x

    batched = cr.vmap(weights)(lams)
    np.testing.assert_allclose(batched, np.stack([ridge_closed_form(l, X, y) for l in lams]),
                               atol=1e-7)
    np.testing.assert_allclose(cr.vmap(cr.jacrev(weights))(lams),
                               np.stack([cr.jacrev(weights)(l) for l in lams]), atol=1e-12)


def test_a_jitted_gradient_solves_again_at_each_call():
    X, y = ridge_problem()
    X_val, y_val = RNG.standard_normal((8, 3)), RNG.standard_normal(8)
    jitted = cr.jit(cr.grad(validation_loss))
    for lam in (0.3, 2.0):
        expected = cr.grad(validation_loss)(lam, X, y, X_val, y_val)
        assert float(jitted(np.float64(lam), X, y, X_val, y_val)) == pytest.approx(
            expected, rel=1e-10)


def test_tensors_that_require_grad_get_their_gradients_by_backward():
    X, y = ridge_problem()
    lam = cr.tensor(0.9, requires_grad=True)
    data = cr.tensor(y, requires_grad=True)
    w = opt.minimize(ridge_loss, np.zeros(3), args=(lam, X, data), method="BFGS",
                     options=TIGHT).x
    w.sum().backward()
    expected = cr.grad(lambda l, v: cr.sum(opt.minimize(
        ridge_loss, np.zeros(3), args=(l, X, v), method="BFGS", options=TIGHT).x),
        argnums=(0, 1))(0.9, y)
    assert float(lam.grad) == pytest.approx(expected[0], rel=1e-9)
    np.testing.assert_allclose(data.grad, expected[1], rtol=1e-9)


# ---------------------------------------------------------------------------------------
# Refusals: never the derivative of another problem
# ---------------------------------------------------------------------------------------

def test_an_unconverged_solve_runs_but_refuses_to_be_differentiated():
    X, y = ridge_problem()
    run = lambda lam: opt.minimize(ridge_loss, np.zeros(3), args=(lam, X, y),  # noqa: E731
                                   method="BFGS", options={"maxiter": 1}).x
    assert run(0.5).shape == (3,)              # no derivative asked: SciPy's answer
    with pytest.raises(ValueError, match=r"minimize: the solver did not converge .*"
                                         r"implicit function theorem"):
        cr.jacrev(run)(0.5)


def test_an_active_bound_fixes_its_coordinate():
    # (tests/test_scipy_optimize_constrained.py checks bounds and constraints in full)
    def best(a):
        return opt.minimize(lambda x, a: cr.sum((x - a) ** 2), np.zeros(2), args=(a,),
                            method="L-BFGS-B", bounds=[(0.0, 1.0), (0.0, 1.0)]).x

    np.testing.assert_allclose(best(np.array([0.5, 2.0])), [0.5, 1.0], atol=1e-7)
    np.testing.assert_allclose(cr.jacrev(best)(np.array([0.5, 2.0])), [[1, 0], [0, 0]],
                               atol=1e-12)
    np.testing.assert_allclose(cr.jacrev(best)(np.array([0.5, 0.25])), np.eye(2), atol=1e-6)


def test_a_closed_over_value_is_differentiated_as_if_passed_in_args():
    def closed(a):                     # a is closed over, not passed in args
        return opt.root(lambda x: x ** 3 - a * x - 2 * a, np.full(1, 2.0)).x[0]

    def passed(a):
        return opt.root(lambda x, a: x ** 3 - a * x - 2 * a, np.full(1, 2.0), args=(a,)).x[0]

    a = 3.0
    np.testing.assert_allclose(closed(a), passed(a), rtol=1e-12)
    for transform in (cr.grad, cr.jacfwd, cr.hessian, lambda f: cr.grad(cr.grad(cr.grad(f)))):
        np.testing.assert_allclose(transform(closed)(a), transform(passed)(a), rtol=1e-9)
    np.testing.assert_allclose(cr.grad(closed)(a), central(closed, a), rtol=1e-7)
    np.testing.assert_allclose(cr.hessian(closed)(a), central(cr.grad(closed), a), rtol=1e-6)


def test_closed_over_values_in_minimize_least_squares_and_brentq_against_differences():
    X, y = ridge_problem()
    ridge = lambda lam: opt.minimize(lambda w: ridge_loss(w, lam, X, y), np.zeros(3),  # noqa: E731
                                     method="BFGS", options=TIGHT).x
    expected = -np.linalg.solve(X.T @ X + 0.7 * np.eye(3), ridge_closed_form(0.7, X, y))
    np.testing.assert_allclose(cr.jacrev(ridge)(0.7), expected, atol=1e-7)
    np.testing.assert_allclose(cr.jacfwd(ridge)(0.7), expected, atol=1e-7)

    t = np.array([0.0, 1.0, 2.0])
    fit = lambda s: opt.least_squares(lambda p: p[0] + p[1] * t - s * t ** 2,  # noqa: E731
                                      np.zeros(2)).x
    np.testing.assert_allclose(cr.jacrev(fit)(1.5), central(fit, 1.5), atol=1e-7)

    crossing = lambda k: opt.brentq(lambda x: cr.cos(x) - k * x, 0.0, 2.0)  # noqa: E731
    np.testing.assert_allclose(cr.grad(crossing)(1.0), central(crossing, 1.0), rtol=1e-7)
    np.testing.assert_allclose(cr.hessian(crossing)(1.0), central(cr.grad(crossing), 1.0),
                               rtol=1e-6)


def test_a_tensor_that_requires_grad_closed_over_gets_its_gradient_from_backward():
    target = cr.tensor(np.array([1.0, -2.0]), requires_grad=True)
    x = opt.minimize(lambda x: cr.sum((x - target) ** 2) + cr.sum(x ** 4), np.zeros(2),
                     method="BFGS", options=TIGHT).x
    cr.sum(x * np.array([1.0, 3.0])).backward()

    def passed(c):
        return cr.sum(opt.minimize(lambda x, c: cr.sum((x - c) ** 2) + cr.sum(x ** 4),
                                   np.zeros(2), args=(c,), method="BFGS",
                                   options=TIGHT).x * np.array([1.0, 3.0]))
    np.testing.assert_allclose(target.grad, cr.grad(passed)(np.array([1.0, -2.0])),
                               rtol=1e-8)


def test_vmap_over_args_or_over_a_closed_over_value_solves_each_example():
    def solution(b, a):                 # b in args, a closed over
        return opt.root(lambda x, b: x ** 3 + a * x - b, np.ones(1), args=(b,)).x[0]

    bs = np.array([2.0, 10.0, 30.0])
    by_example = cr.vmap(lambda b: cr.grad(lambda a: solution(b, a))(2.0))(bs)
    one_by_one = [cr.grad(lambda a: solution(b, a))(2.0) for b in bs]
    np.testing.assert_allclose(by_example, one_by_one, rtol=1e-10)
    assert np.all(np.abs(by_example) > 0.01)

    # The batch closed over: each example's solve gets its own row of it.
    a_s = np.array([1.0, 2.0, 3.0, 2.0])
    closing = lambda a: solution(10.0, a)  # noqa: E731
    np.testing.assert_allclose(cr.vmap(closing)(a_s), [closing(a) for a in a_s], rtol=1e-12)
    for transform in (cr.grad, cr.hessian):
        np.testing.assert_allclose(cr.vmap(transform(closing))(a_s),
                                   [transform(closing)(a) for a in a_s], rtol=1e-9)
    np.testing.assert_allclose(cr.jacrev(cr.vmap(closing))(a_s),
                               np.diag([cr.grad(closing)(a) for a in a_s]), atol=1e-12)


def test_values_closed_over_from_two_vmaps_solve_each_example():
    def solution(a, c):                 # a and c closed over, batched by two vmaps
        return opt.root(lambda x: x ** 3 + a * x - c, np.ones(1), tol=1e-14).x[0]

    a_s, c_s = np.array([1.0, 2.0]), np.array([5.0, 6.0])
    np.testing.assert_allclose(
        cr.vmap(lambda a: cr.vmap(lambda c: solution(a, c))(c_s))(a_s),
        [[solution(a, c) for c in c_s] for a in a_s], rtol=1e-12)
    # sin(a) computed apart from x: each example reads it at its place in both batches
    derived = lambda a, c: opt.root(lambda x: x ** 3 + cr.sin(a) * x - c,  # noqa: E731
                                    np.ones(1), tol=1e-14).x[0]
    for transform in (lambda f: f, cr.grad, cr.hessian):
        np.testing.assert_allclose(
            cr.vmap(lambda a: cr.vmap(lambda c: transform(derived)(a, c))(c_s))(a_s),
            [[transform(derived)(a, c) for c in c_s] for a in a_s], rtol=1e-9)
    x = derived(a_s[1], c_s[0])  # x^3 + sin(a) x = c: dx/da = -cos(a) x / (3 x^2 + sin(a))
    np.testing.assert_allclose(
        cr.vmap(lambda a: cr.vmap(lambda c: cr.grad(derived)(a, c))(c_s))(a_s)[1, 0],
        -np.cos(a_s[1]) * x / (3 * x ** 2 + np.sin(a_s[1])), rtol=1e-9)


def test_a_value_traced_by_jit_closed_over_solves_as_passed_in_args():
    passed = lambda a: opt.root(lambda x, a: x ** 3 - a * x - 2 * a, np.full(1, 2.0),  # noqa: E731
                                args=(a,)).x[0]
    closed = lambda a: opt.root(lambda x: x ** 3 - a * x - 2 * a,  # noqa: E731
                                np.full(1, 2.0)).x[0]
    jitted = cr.jit(closed)
    for a in (4.0, 6.0):  # each call solves with its own a
        np.testing.assert_allclose(cr.jit(passed)(a), closed(a), rtol=1e-12)
        np.testing.assert_allclose(jitted(a), closed(a), rtol=1e-12)


def test_the_callers_own_derivatives_go_to_scipy_and_ours_to_the_implicit_rule():
    X, y = ridge_problem()
    calls = {"jac": 0}

    def value_and_gradient(w, lam):           # jac=True: fun returns (f, gradient)
        return ridge_loss(w, lam, X, y), X.T @ (X @ w - y) + lam * w

    def gradient_only(w, lam):
        calls["jac"] += 1
        return X.T @ (X @ w - y) + lam * w

    with_pair = lambda lam: opt.minimize(value_and_gradient, np.zeros(3), args=(lam,),  # noqa: E731
                                         jac=True, method="BFGS", options=TIGHT).x
    with_jac = lambda lam: opt.minimize(lambda w, lam: ridge_loss(w, lam, X, y),  # noqa: E731
                                        np.zeros(3), args=(lam,), jac=gradient_only,
                                        method="BFGS", options=TIGHT).x
    expected = -np.linalg.solve(X.T @ X + 0.7 * np.eye(3), ridge_closed_form(0.7, X, y))
    np.testing.assert_allclose(cr.jacrev(with_pair)(0.7), expected, atol=1e-7)
    np.testing.assert_allclose(cr.jacrev(with_jac)(0.7), expected, atol=1e-7)
    assert calls["jac"] > 0

    def residual_and_jacobian(x, b):           # root with jac=True
        return x ** 3 - b, cr.diag(3 * x ** 2)

    cube_roots = lambda b: opt.root(residual_and_jacobian, np.ones(2), args=(b,),  # noqa: E731
                                    jac=True).x
    b = np.array([8.0, 27.0])
    np.testing.assert_allclose(cube_roots(b), [2.0, 3.0], rtol=1e-10)
    np.testing.assert_allclose(cr.jacrev(cube_roots)(b), np.diag([1 / 12, 1 / 27]), rtol=1e-8)


def test_fsolve_full_output_and_its_refusal_when_it_fails():
    balance = lambda a: opt.fsolve(lambda x, a: x * x + a, np.array([1.0]), args=(a,),  # noqa: E731
                                   full_output=True)
    x, info, ier, message = balance(-4.0)
    assert ier == 1 and float(x[0]) == pytest.approx(2.0, rel=1e-10) and "nfev" in info
    with pytest.raises(ValueError, match="fsolve: the solver did not converge"):
        cr.grad(lambda a: balance(a)[0][0])(1.0)          # x^2 = -1 has no real root

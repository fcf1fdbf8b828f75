"""chainrule.scipy.optimize.least_squares with bounds active at the solution (issue 46):
the answer differentiated through the KKT conditions of the bounded problem.

A box-constrained linear least squares whose active set is built in (the data made so
that the bounds' multipliers are chosen numbers) against its closed form: the free
coordinates solve the normal equations reduced to them, the others stay at their
bounds, and the bounds' multipliers are the gradient there; a nonlinear fit with a
capped amplitude against central differences of the problem solved again, to second
order, by trf and dogbox; forward = reverse; vmap (examples with different active sets)
and cr.jit at two points = eager. Where the conditions do not hold (an active bound
with a zero multiplier, no convergence) the value is returned and a derivative raises
one line naming the cause."""

import numpy as np
import pytest
import scipy.optimize as so

import chainrule as cr
from chainrule.scipy import optimize as opt
from seeds_and_tolerances import central_differences as central, per_test_generator

RNG = per_test_generator(4647)
TIGHT = {"xtol": 1e-15, "ftol": 1e-15, "gtol": 1e-15}
METHODS = ["trf", "dogbox"]




# ---------------------------------------------------------------------------------------
# A box-constrained linear least squares: the closed form on its known active set
# ---------------------------------------------------------------------------------------

LOWER, UPPER = -1.0, 1.0


def box_problem(m=9, n=4):
    """A (m x n), data y whose box-constrained solution has x[2] at its upper bound
    (multiplier -0.5) and x[3] at its lower one (multiplier 0.7): y = A x* - r with
    A^T r the multipliers, plus noise outside A's range (which A^T removes)."""
    A = RNG.standard_normal((m, n))
    x_star = np.array([0.3, -0.2, UPPER, LOWER])
    mu = np.array([0.0, 0.0, -0.5, 0.7])
    noise = RNG.standard_normal(m)
    outside = noise - A @ np.linalg.lstsq(A, noise, rcond=None)[0]
    y = A @ x_star - A @ np.linalg.solve(A.T @ A, mu) + outside
    return A, y, x_star, mu


def closed_form(A, y, free=(0, 1), fixed_values=((2, UPPER), (3, LOWER))):
    """x*, dx*/dy and the bounds' multipliers and their derivative, the active set given:
    x_F = pinv(A_F) (y - A_S x_S), the rest fixed; mu = A^T (A x - y) on S."""
    n = A.shape[1]
    free = list(free)
    fixed = [j for j, _ in fixed_values]
    x = np.zeros(n)
    for j, v in fixed_values:
        x[j] = v
    pinv = np.linalg.pinv(A[:, free])
    x[free] = pinv @ (y - A[:, fixed] @ x[fixed])
    D = np.zeros((n, A.shape[0]))
    D[free] = pinv
    mu = np.zeros(n)
    mu[fixed] = A[:, fixed].T @ (A @ x - y)
    dmu = np.zeros((n, A.shape[0]))
    dmu[fixed] = A[:, fixed].T @ (A @ D - np.eye(A.shape[0]))
    return x, D, mu, dmu


def box_fit(A, method="trf", **options):
    def fit(y):
        return opt.least_squares(lambda x, y: cr.matmul(A, x) - y, np.zeros(A.shape[1]),
                                 args=(y,), bounds=(LOWER, UPPER), method=method,
                                 **{**TIGHT, **options})
    return fit


@pytest.mark.parametrize("method", METHODS)
def test_a_box_constrained_linear_fit_matches_the_reduced_normal_equations(method):
    A, y, x_star, mu = box_problem()
    x, D, mu_closed, dmu = closed_form(A, y)
    np.testing.assert_allclose(x, x_star, atol=1e-12)       # the construction holds
    np.testing.assert_allclose(mu_closed, mu, atol=1e-12)
    fit = box_fit(A, method)
    solution = lambda y: fit(y).x  # noqa: E731
    np.testing.assert_allclose(solution(y), x, atol=1e-12)
    np.testing.assert_allclose(cr.jacrev(solution)(y), D, atol=1e-10)
    np.testing.assert_allclose(cr.jacfwd(solution)(y), D, atol=1e-10)
    assert np.all(np.asarray(cr.jacrev(solution)(y))[2:] == 0)   # the coordinates at bounds
    np.testing.assert_allclose(fit(y).bound_multipliers, mu, atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(lambda y: fit(y).bound_multipliers)(y), dmu,
                               atol=1e-10)
    outer = lambda y: cr.sum(solution(y) ** 3)  # noqa: E731
    hessian = D.T @ np.diag(6 * x) @ D
    np.testing.assert_allclose(cr.hessian(outer)(y), hessian, atol=1e-9)
    np.testing.assert_allclose(cr.jacfwd(cr.jacrev(outer))(y), hessian, atol=1e-9)


def test_the_default_tolerances_give_the_same_derivative():
    A, y, _, _ = box_problem()
    _, D, _, _ = closed_form(A, y)
    fit = lambda y: opt.least_squares(lambda x, y: cr.matmul(A, x) - y, np.zeros(4),  # noqa: E731
                                      args=(y,), bounds=(LOWER, UPPER)).x
    np.testing.assert_allclose(cr.jacrev(fit)(y), D, atol=1e-9)


def test_a_shaped_x_a_bounds_object_and_a_robust_loss():
    # p - y clipped to [0, 1] entry by entry, whatever the loss: dx/dy is 1 where y is
    # inside, and a bound's multiplier is soft_l1's rho'(r^2) r = r / sqrt(1 + r^2)
    y = np.array([0.5, 2.0, -1.0, 0.3]) + 0.05 * RNG.random(4)

    def clip(y):
        return opt.least_squares(lambda p, y: cr.reshape(p, (-1,)) - y, np.full((2, 2), 0.5),
                                 args=(y,), bounds=so.Bounds(0.0, 1.0), loss="soft_l1",
                                 **TIGHT)

    inside = (y > 0) & (y < 1)
    np.testing.assert_allclose(clip(y).x, np.clip(y, 0, 1).reshape(2, 2), atol=1e-12)
    np.testing.assert_allclose(cr.jacrev(lambda y: clip(y).x)(y).reshape(4, 4),
                               np.diag(inside * 1.0), atol=1e-12)
    r = np.clip(y, 0, 1) - y
    np.testing.assert_allclose(clip(y).bound_multipliers,
                               (~inside * r / np.sqrt(1 + r * r)).reshape(2, 2), atol=1e-12)


# ---------------------------------------------------------------------------------------
# A nonlinear fit with a capped amplitude: central differences of the re-solved problem
# ---------------------------------------------------------------------------------------

T = np.linspace(0.0, 2.0, 9)


def capped_fit(method, y):
    """c[0] exp(-c[1] t) fitted to p[0] y + p[1] t, the amplitude c[0] capped at 1.5."""
    def fit(p):
        return opt.least_squares(lambda c, p: c[0] * cr.exp(-c[1] * T) - p[0] * y - p[1] * T,
                                 np.array([1.0, 1.0]), args=(p,),
                                 bounds=([0.0, 0.0], [1.5, 5.0]), method=method, **TIGHT).x
    return fit


@pytest.mark.parametrize("method", METHODS)
def test_a_capped_nonlinear_fit_matches_central_differences_to_second_order(method):
    y = 2.0 * np.exp(-0.7 * T) + 0.05 * RNG.standard_normal(9)
    fit = capped_fit(method, y)
    p = np.array([1.0, 0.05])
    assert np.asarray(fit(p))[0] == 1.5                             # at its bound
    jac = cr.jacrev(fit)(p)
    np.testing.assert_allclose(jac, central(fit, p), atol=1e-8)
    np.testing.assert_allclose(cr.jacfwd(fit)(p), jac, atol=1e-12)
    assert np.all(np.asarray(jac)[0] == 0)
    outer = lambda p: cr.sum(fit(p) ** 3)  # noqa: E731
    hessian = cr.hessian(outer)(p)
    np.testing.assert_allclose(hessian, central(lambda p: cr.grad(outer)(p), p), atol=1e-7)
    np.testing.assert_allclose(cr.jacfwd(cr.jacrev(outer))(p), hessian, atol=1e-10)
    np.testing.assert_allclose(cr.jacrev(cr.jacfwd(outer))(p), hessian, atol=1e-10)


# ---------------------------------------------------------------------------------------
# vmap and cr.jit
# ---------------------------------------------------------------------------------------

def test_vmap_solves_each_example_with_its_own_active_set():
    y = 2.0 * np.exp(-0.7 * T) + 0.05 * RNG.standard_normal(9)
    fit = capped_fit("trf", y)
    batch = np.array([[1.0, 0.05], [0.5, 0.0], [1.1, -0.1]])      # the second inside
    assert [float(np.asarray(fit(p))[0]) == 1.5 for p in batch] == [True, False, True]
    np.testing.assert_allclose(cr.vmap(fit)(batch), [fit(p) for p in batch], atol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.jacrev(fit))(batch),
                               [cr.jacrev(fit)(p) for p in batch], atol=1e-12)


def test_jit_equals_eager_at_two_points():
    y = 2.0 * np.exp(-0.7 * T) + 0.05 * RNG.standard_normal(9)
    fit = capped_fit("trf", y)
    fast, fast_jacobian = cr.jit(fit), cr.jit(cr.jacrev(fit))
    for p in (np.array([1.0, 0.05]), np.array([0.5, 0.0])):        # at the bound, inside
        np.testing.assert_allclose(fast(p), fit(p), atol=1e-12)
        np.testing.assert_allclose(fast_jacobian(p), cr.jacrev(fit)(p), atol=1e-12)


# ---------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, TIGHT], ids=["default", "tight"])
def test_an_active_bound_with_a_zero_multiplier_refuses(options):
    A = RNG.standard_normal((5, 2))
    y = A @ np.array([1.0, 0.4])      # the unconstrained minimum lies on the bound x[0] <= 1

    def fit(y):
        return opt.least_squares(lambda x, y: cr.matmul(A, x) - y, np.full(2, 0.5),
                                 args=(y,), bounds=([0.0, 0.0], [1.0, 1.0]), **options).x

    np.testing.assert_allclose(fit(y), [1.0, 0.4], atol=1e-4)
    with pytest.raises(ValueError, match=r"^least_squares: the bound on x\[0\] is active at "
                                         r"the solution with multiplier .* \(strict "
                                         r"complementarity fails"):
        cr.jacrev(fit)(y)


def test_no_convergence_refuses_in_one_line():
    A, y, _, _ = box_problem()
    fit = lambda y: box_fit(A, max_nfev=1)(y).x  # noqa: E731
    assert np.shape(fit(y)) == (4,)
    with pytest.raises(ValueError, match=r"^least_squares: the solver did not converge "
                                         r"\(The maximum number of function evaluations") as raised:
        cr.jacrev(fit)(y)
    assert "\n" not in str(raised.value)


def test_an_answer_that_is_no_kkt_point_refuses():
    # trf started on a bound stays there (SciPy 1.17), where the gradient points inside:
    # the bound's multiplier has the wrong sign
    def fit(y):
        return opt.least_squares(lambda x, y: x - y, np.zeros(2), args=(y,),
                                 bounds=(0.0, 1.0)).x

    y = np.array([0.5, 2.0])
    assert np.all(np.asarray(fit(y)) < 1e-6)            # SciPy's answer, stuck
    with pytest.raises(ValueError, match=r"^least_squares: the bound on x\[0\] is active at "
                                         r"the solution with a multiplier of the wrong sign "
                                         r"\(-0.5 < 0: the answer is not a KKT point"):
        cr.jacrev(fit)(y)


def test_the_callers_jacobian_gets_args_and_kwargs_as_in_scipy():
    A, y, x_star, _ = box_problem()
    calls = []

    def jacobian(x, y, scale=1.0):
        calls.append(scale)
        return scale * A

    def fit(y):
        return opt.least_squares(lambda x, y, scale=1.0: scale * (cr.matmul(A, x) - y),
                                 np.zeros(4), jac=jacobian, args=(y,), kwargs={"scale": 2.0},
                                 bounds=(LOWER, UPPER), **TIGHT).x

    np.testing.assert_allclose(fit(y), x_star, atol=1e-12)
    np.testing.assert_allclose(cr.jacrev(fit)(y), closed_form(A, y)[1], atol=1e-10)
    assert calls and set(calls) == {2.0}

"""A derivative the caller hands a solver (``jac``, ``hess``, ``hessp``, ``fprime``)
may close over the parameters being differentiated: the solver only reads its numbers,
so the derivative of the solution is the same as without it (the implicit function
theorem reads the equation), eagerly, under cr.jit, and at two calls of one program."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.scipy import optimize

A1 = np.array([1.0, -2.0, 0.5])
A2 = np.array([0.3, 0.1, -1.0])


def _minimum(a, **given):
    f = lambda x: cr.sum((x - a) ** 2) + 0.1 * cr.sum(x ** 4)  # noqa: E731
    return optimize.minimize(f, np.zeros(3), tol=1e-12, **given).x


def _supplied_minimum(a, method):
    jac = lambda x: 2 * (x - a) + 0.4 * x ** 3  # noqa: E731
    hess = lambda x: 2 * np.eye(3) + cr.diag(1.2 * x ** 2 + 0 * a)  # noqa: E731
    hessp = lambda x, p: 2 * p + 1.2 * x ** 2 * p  # noqa: E731
    given = {"BFGS": dict(jac=jac), "Newton-CG": dict(jac=jac, hessp=hessp),
             "trust-exact": dict(jac=jac, hess=hess)}[method]
    return _minimum(a, method=method, **given)


@pytest.mark.parametrize("method", ["BFGS", "Newton-CG", "trust-exact"])
def test_minimize_with_jac_and_hessians_that_close_over_the_parameter(method):
    loss = lambda a: cr.sum(_supplied_minimum(a, method) ** 2)  # noqa: E731
    plain = lambda a: cr.sum(_minimum(a, method=method) ** 2)  # noqa: E731
    jitted = cr.jit(cr.grad(loss))
    for a in (A1, A2):
        expected = cr.grad(plain)(a)
        np.testing.assert_allclose(cr.grad(loss)(a), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jitted(a), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(cr.jit(lambda a: _supplied_minimum(a, method))(a),
                                   _minimum(a, method=method), rtol=1e-6, atol=1e-8)
    step = 1e-4 * np.eye(3)[0]  # (the re-solved problem, central differences)
    central = (float(plain(A1 + step)) - float(plain(A1 - step))) / 2e-4
    assert abs(float(cr.grad(loss)(A1)[0]) - central) < 1e-6


def test_root_least_squares_and_fsolve_with_a_jacobian_that_closes_over_the_parameter():
    def root(a):
        return optimize.root(lambda x: x + x ** 3 - a, np.zeros(3),
                             jac=lambda x: cr.diag(1 + 3 * x ** 2 + 0 * a)).x

    def fit(a):
        return optimize.least_squares(lambda x: x + x ** 3 - a, np.zeros(3),
                                      jac=lambda x: cr.diag(1 + 3 * x ** 2 + 0 * a)).x

    def fsolved(a):
        return optimize.fsolve(lambda x: x + x ** 3 - a, np.zeros(3),
                               fprime=lambda x: cr.diag(1 + 3 * x ** 2 + 0 * a))
    for solve in (root, fit, fsolved):
        jitted = cr.jit(cr.grad(lambda a: cr.sum(solve(a))))
        for a in (A1, A2):
            x = solve(a)
            expected = 1 / (1 + 3 * np.asarray(x) ** 2)  # d x / d a, entry by entry
            np.testing.assert_allclose(cr.grad(lambda a: cr.sum(solve(a)))(a), expected,
                                       rtol=1e-6)
            np.testing.assert_allclose(jitted(a), expected, rtol=1e-6)


def test_newton_and_root_scalar_with_derivatives_that_close_over_the_parameter():
    def cube_root(a):  # x**3 = a
        return optimize.newton(lambda x: x ** 3 - a, 1.0, fprime=lambda x: 3 * x ** 2 + 0 * a,
                               fprime2=lambda x: 6 * x + 0 * a)

    def scalar_root(a):
        return optimize.root_scalar(lambda x: x ** 3 - a, x0=1.0, method="newton",
                                    fprime=lambda x: 3 * x ** 2 + 0 * a).root
    for solve in (cube_root, scalar_root):
        jitted = cr.jit(cr.grad(solve))
        for a in (2.0, 5.0):
            expected = 1 / (3 * a ** (2 / 3))
            assert abs(float(cr.grad(solve)(a)) - expected) < 1e-9
            assert abs(float(jitted(a)) - expected) < 1e-9

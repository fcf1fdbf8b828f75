"""Solvers whose function closes over a value traced by cr.jit (issue 46).

Each program is checked against the same program with the value passed in ``args=``
(under cr.jit), against eager, at two calls with different numbers (a program re-solves
at each call: no numbers kept from the trace), and its derivatives against central
differences of the re-solved problem and a closed form where there is one.
"""

import numpy as np
import pytest
import scipy.optimize as so

import chainrule as cr
from chainrule.scipy import optimize as opt

TIGHT = {"gtol": 1e-12}


def central(fn, a, eps=1e-5):
    """Central differences of fn (an eager solve, re-run at each point) at a."""
    a = np.asarray(a, dtype=float)
    rows = []
    for k in range(a.size):
        step = np.zeros(a.size)
        step[k] = eps
        up = np.asarray(fn((a.ravel() + step).reshape(a.shape)), dtype=float)
        down = np.asarray(fn((a.ravel() - step).reshape(a.shape)), dtype=float)
        rows.append((up - down) / (2 * eps))
    out = np.stack(rows, axis=-1)
    return out.reshape(np.shape(up) + a.shape)


def ridge_problem(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(8, 3))
    y = rng.normal(size=8)
    return X, y


def ridge_closed_form(X, y, lam):
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)


# --- minimize -----------------------------------------------------------------------

@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "Newton-CG", "trust-exact",
                                    "trust-ncg"])
def test_minimize_closing_over_a_jit_value_solves_at_each_call(method):
    X, y = ridge_problem(1)
    options = {"gtol": 1e-10} if method not in ("Newton-CG", "L-BFGS-B") else \
        ({"xtol": 1e-12} if method == "Newton-CG" else {"gtol": 1e-12, "ftol": 1e-15})

    def closed(lam):
        return opt.minimize(lambda w: 0.5 * cr.sum((X @ w - y) ** 2) + 0.5 * lam * cr.sum(w ** 2),
                            np.zeros(3), method=method, options=options).x

    def passed(lam):
        return opt.minimize(lambda w, lam: 0.5 * cr.sum((X @ w - y) ** 2)
                            + 0.5 * lam * cr.sum(w ** 2),
                            np.zeros(3), args=(lam,), method=method, options=options).x

    jitted, jitted_args = cr.jit(closed), cr.jit(passed)
    for lam in (0.5, 2.0, 7.0):
        expected = ridge_closed_form(X, y, lam)
        np.testing.assert_allclose(jitted(lam), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jitted(lam), jitted_args(lam), rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(jitted(lam), closed(lam), rtol=1e-7, atol=1e-9)


def test_minimize_closure_derivatives_under_jit_in_every_order_of_transforms():
    X, y = ridge_problem(2)

    def loss(lam):  # validation-like loss of the ridge solution, lam closed over
        w = opt.minimize(lambda w: 0.5 * cr.sum((X @ w - y) ** 2) + 0.5 * lam * cr.sum(w ** 2),
                         np.zeros(3), method="BFGS", options=TIGHT).x
        return cr.sum(w ** 2)

    def exact(lam):
        return float(np.sum(ridge_closed_form(X, y, lam) ** 2))

    def exact_grad(lam):  # dw/dlam = -(X^T X + lam)^-1 w
        w = ridge_closed_form(X, y, lam)
        dw = -np.linalg.solve(X.T @ X + lam * np.eye(3), w)
        return 2 * w @ dw

    jit_grad, grad_jit = cr.jit(cr.grad(loss)), cr.grad(cr.jit(loss))
    for lam in (0.3, 1.7):
        fd = central(exact, lam)
        eager = float(cr.grad(loss)(lam))
        np.testing.assert_allclose(eager, exact_grad(lam), rtol=1e-6)
        np.testing.assert_allclose(float(jit_grad(lam)), exact_grad(lam), rtol=1e-6)
        np.testing.assert_allclose(float(grad_jit(lam)), exact_grad(lam), rtol=1e-6)
        np.testing.assert_allclose(float(jit_grad(lam)), fd, rtol=1e-6)
        np.testing.assert_allclose(float(jit_grad(lam)), eager, rtol=1e-9)
    np.testing.assert_allclose(float(cr.jit(loss)(0.3)), exact(0.3), rtol=1e-7)


def test_minimize_closure_second_order_under_jit():
    rng = np.random.default_rng(3)
    x0 = np.zeros(2)

    def outer(a):  # a closed over, and a value computed from it apart from x
        s = cr.sin(a)
        return cr.sum(opt.minimize(lambda x: cr.sum((x - s) ** 2) + a[0] * cr.sum(x ** 4),
                                   x0, method="trust-exact",
                                   options={"gtol": 1e-12}).x ** 2)

    hessian = cr.jit(cr.hessian(outer))
    gradient = cr.grad(outer)
    for _ in range(2):
        a = rng.uniform(0.5, 1.5, size=2)
        eager = cr.hessian(outer)(a)
        np.testing.assert_allclose(hessian(a), eager, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(hessian(a), central(gradient, a, eps=1e-4),
                                   rtol=1e-6, atol=1e-6)


def test_minimize_closure_forward_mode_under_jit():
    a0 = np.array([0.4, -1.2, 2.0])

    def solution(a):  # argmin sum((x - a)^2) + sum(x^4) / 4: x + x^3 = a entrywise
        return opt.minimize(lambda x: cr.sum((x - a) ** 2) / 2 + cr.sum(x ** 4) / 4,
                            np.zeros(3), method="trust-exact", options={"gtol": 1e-13}).x

    jacobian = cr.jit(cr.jacfwd(solution))
    for a in (a0, a0 + 0.5):
        x = so.brentq  # closed form: dx/da = 1 / (1 + 3 x^2) on the diagonal
        x = np.array([x(lambda t, ai=ai: t + t ** 3 - ai, -5, 5, xtol=1e-15) for ai in a])
        np.testing.assert_allclose(jacobian(a), np.diag(1 / (1 + 3 * x ** 2)), rtol=1e-6,
                                   atol=1e-9)
        np.testing.assert_allclose(jacobian(a), cr.jacrev(solution)(a), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(jacobian(a), central(solution, a), rtol=1e-6, atol=1e-7)


def test_minimize_constraint_closing_over_a_jit_value():
    def nearest(a):  # the point of x0 + x1 = a[0] nearest to a
        return opt.minimize(lambda x: cr.sum((x - a) ** 2), np.zeros(2),
                            constraints={"type": "eq", "fun": lambda x: x[0] + x[1] - a[0]},
                            options={"ftol": 1e-14}).x

    def exact(a):  # the projection onto x0 + x1 = a0
        return a - (a[0] + a[1] - a[0]) / 2

    jitted, jacobian = cr.jit(nearest), cr.jit(cr.jacrev(nearest))
    for a in (np.array([1.0, 2.0]), np.array([-0.5, 3.0])):
        np.testing.assert_allclose(jitted(a), exact(a), atol=1e-8)
        np.testing.assert_allclose(jitted(a), nearest(a), atol=1e-10)
        np.testing.assert_allclose(jacobian(a), [[1.0, -0.5], [0.0, 0.5]], atol=1e-8)
        np.testing.assert_allclose(jacobian(a), central(exact, a), atol=1e-6)


def test_bounded_solves_closing_over_a_jit_value():
    def clipped(a):  # the nearest point of the box [0, 1]^2 to a
        return opt.minimize(lambda x: cr.sum((x - a) ** 2), np.zeros(2), method="L-BFGS-B",
                            bounds=[(0.0, 1.0), (0.0, 1.0)],
                            options={"gtol": 1e-12, "ftol": 1e-15}).x

    def scaled(s):  # p = s * (0.5, 2) clipped to [0, 1]
        return opt.least_squares(lambda p: p - s * np.array([0.5, 2.0]), np.full(2, 0.5),
                                 bounds=(0.0, 1.0), xtol=1e-15, ftol=1e-15, gtol=1e-15).x

    jitted, jacobian = cr.jit(clipped), cr.jit(cr.jacrev(clipped))
    for a in (np.array([0.5, 2.0]), np.array([0.2, 1.7])):
        np.testing.assert_allclose(jitted(a), np.clip(a, 0.0, 1.0), atol=1e-9)
        np.testing.assert_allclose(jacobian(a), [[1.0, 0.0], [0.0, 0.0]], atol=1e-9)
        np.testing.assert_allclose(jacobian(a), central(clipped, a), atol=1e-6)
    jitted, tangent = cr.jit(scaled), cr.jit(cr.jacfwd(scaled))
    for s in (0.4, 0.45):  # the second entry at its upper bound 1 from s = 0.5 on
        np.testing.assert_allclose(jitted(s), np.clip(s * np.array([0.5, 2.0]), 0, 1),
                                   atol=1e-9)
        np.testing.assert_allclose(tangent(s), [0.5, 2.0], atol=1e-9)
        np.testing.assert_allclose(tangent(s), central(scaled, s), atol=1e-6)
    for s in (0.6, 0.8):
        np.testing.assert_allclose(jitted(s), [0.5 * s, 1.0], atol=1e-9)
        np.testing.assert_allclose(tangent(s), [0.5, 0.0], atol=1e-9)


def test_a_mask_the_function_computes_from_x_is_not_taken_for_a_closed_over_value():
    def objective(x, a):  # x > 1.2 is a traced boolean the function computes from x
        return cr.sum((x - a) ** 2) + cr.sum(cr.where(x > 1.2, (x - 1.2) ** 3, 0.0))

    closed = lambda a: opt.minimize(lambda x: objective(x, a), np.zeros(2),  # noqa: E731
                                    method="trust-exact", options={"gtol": 1e-13}).x
    passed = lambda a: opt.minimize(objective, np.zeros(2), args=(a,),  # noqa: E731
                                    method="trust-exact", options={"gtol": 1e-13}).x
    jacobian = cr.jit(cr.jacrev(closed))
    for a in (np.array([1.0, 3.0]), np.array([0.5, 2.5])):
        x = closed(a)  # x1 > 1.2: 2 (x1 - a1) + 3 (x1 - 1.2)^2 = 0
        exact = np.diag([1.0, 2.0 / (2.0 + 6.0 * (x[1] - 1.2))])
        np.testing.assert_allclose(cr.jit(closed)(a), cr.jit(passed)(a), rtol=1e-12)
        np.testing.assert_allclose(jacobian(a), exact, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(jacobian(a), cr.jit(cr.jacrev(passed))(a), rtol=1e-10)
        np.testing.assert_allclose(jacobian(a), central(closed, a), rtol=1e-6, atol=1e-7)


# --- roots and least squares --------------------------------------------------------

def cube_root_solvers():
    """name -> (closed(c), passed(c)): the root of x^3 = c by each solver."""
    return {
        "root": (lambda c: opt.root(lambda x: x ** 3 - c, np.ones(1), tol=1e-14).x[0],
                 lambda c: opt.root(lambda x, c: x ** 3 - c, np.ones(1), args=(c,),
                                    tol=1e-14).x[0]),
        "fsolve": (lambda c: opt.fsolve(lambda x: x ** 3 - c, np.ones(1), xtol=1e-14)[0],
                   lambda c: opt.fsolve(lambda x, c: x ** 3 - c, np.ones(1), args=(c,),
                                        xtol=1e-14)[0]),
        "brentq": (lambda c: opt.brentq(lambda x: x ** 3 - c, 0.0, 10.0),
                   lambda c: opt.brentq(lambda x, c: x ** 3 - c, 0.0, 10.0, args=(c,))),
        "newton": (lambda c: opt.newton(lambda x: x ** 3 - c, 1.0, tol=1e-14),
                   lambda c: opt.newton(lambda x, c: x ** 3 - c, 1.0, args=(c,), tol=1e-14)),
        "root_scalar": (
            lambda c: opt.root_scalar(lambda x: x ** 3 - c, bracket=[0.0, 10.0],
                                      xtol=1e-15).root,
            lambda c: opt.root_scalar(lambda x, c: x ** 3 - c, args=(c,),
                                      bracket=[0.0, 10.0], xtol=1e-15).root),
        "least_squares": (
            lambda c: opt.least_squares(lambda x: x ** 3 - c, np.ones(1), xtol=1e-15,
                                        ftol=1e-15, gtol=1e-15).x[0],
            lambda c: opt.least_squares(lambda x, c: x ** 3 - c, np.ones(1), args=(c,),
                                        xtol=1e-15, ftol=1e-15, gtol=1e-15).x[0]),
        "custom_root": (
            lambda c: cr.custom_root(lambda x: x ** 3 - c, 1.0, _newton,
                                     lambda g, y: y / g(1.0)),
            None),
    }


def _newton(f, x):
    for _ in range(60):
        value = f(x)
        x = x - value / (3 * x ** 2)
    return x


@pytest.mark.parametrize("name", sorted(cube_root_solvers()))
def test_root_finders_closing_over_a_jit_value(name):
    closed, passed = cube_root_solvers()[name]
    jitted = cr.jit(closed)
    jit_grad, grad_jit = cr.jit(cr.grad(closed)), cr.grad(cr.jit(closed))
    for c in (8.0, 3.0, 27.5):
        exact = c ** (1 / 3)
        exact_grad = 1 / (3 * c ** (2 / 3))
        np.testing.assert_allclose(float(jitted(c)), exact, rtol=1e-10)
        np.testing.assert_allclose(float(jitted(c)), float(closed(c)), rtol=1e-12)
        if passed is not None:
            np.testing.assert_allclose(float(jitted(c)), float(cr.jit(passed)(c)),
                                       rtol=1e-12)
        np.testing.assert_allclose(float(jit_grad(c)), exact_grad, rtol=1e-8)
        np.testing.assert_allclose(float(grad_jit(c)), exact_grad, rtol=1e-8)
        np.testing.assert_allclose(float(jit_grad(c)), central(closed, c), rtol=1e-6)


def test_least_squares_closing_over_data_scaled_by_a_jit_value():
    t = np.linspace(0.0, 1.0, 6)
    data = np.array([0.9, 1.4, 2.2, 2.9, 3.4, 4.1])

    def fit(scale):  # data * scale computed inside the function, apart from p
        return opt.least_squares(lambda p: p[0] + p[1] * t - data * scale, np.zeros(2),
                                 xtol=1e-15, ftol=1e-15, gtol=1e-15).x

    A = np.stack([np.ones_like(t), t], axis=1)
    exact = lambda s: np.linalg.lstsq(A, data * s, rcond=None)[0]  # noqa: E731
    jitted, jacobian = cr.jit(fit), cr.jit(cr.jacfwd(fit))
    for s in (1.0, 2.5):
        np.testing.assert_allclose(jitted(s), exact(s), rtol=1e-9)
        np.testing.assert_allclose(jitted(s), fit(s), rtol=1e-12)
        np.testing.assert_allclose(jacobian(s), exact(1.0), rtol=1e-8)  # linear in s
        np.testing.assert_allclose(jacobian(s), central(fit, s), rtol=1e-6)


def test_root_closing_over_several_jit_values_and_an_argument():
    def solution(a, b):  # x0 = a * x1, x1 = b + args' k: linear
        return opt.root(lambda x, k: cr.stack([x[0] - a * x[1], x[1] - b - k]),
                        np.ones(2), args=(0.5,), tol=1e-14).x

    jitted = cr.jit(solution)
    jac_a, jac_b = cr.jit(cr.jacrev(solution, 0)), cr.jit(cr.jacrev(solution, 1))
    for a, b in ((2.0, 1.0), (-1.5, 3.0)):
        np.testing.assert_allclose(jitted(a, b), [a * (b + 0.5), b + 0.5], rtol=1e-12)
        np.testing.assert_allclose(jac_a(a, b), [b + 0.5, 0.0], atol=1e-10)
        np.testing.assert_allclose(jac_b(a, b), [a, 1.0], atol=1e-10)
        np.testing.assert_allclose(jac_a(a, b), central(lambda u: solution(u, b), a),
                                   atol=1e-6)


# --- vmap inside cr.jit -------------------------------------------------------------

def test_jit_of_vmap_of_a_solve_closing_over_the_example():
    rng = np.random.default_rng(5)

    def solution(a):  # x + x^3 = a entrywise, a closed over
        return opt.minimize(lambda x: cr.sum((x - a) ** 2) / 2 + cr.sum(x ** 4) / 4,
                            np.zeros(2), method="BFGS", options=TIGHT).x

    batched = cr.jit(cr.vmap(solution))
    batched_grad = cr.jit(cr.vmap(cr.grad(lambda a: cr.sum(solution(a)))))
    for _ in range(2):
        A = rng.uniform(-2.0, 2.0, size=(3, 2))
        each = np.stack([solution(a) for a in A])
        np.testing.assert_allclose(batched(A), each, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(batched(A) + batched(A) ** 3, A, atol=1e-8)
        X = batched(A)
        np.testing.assert_allclose(batched_grad(A), 1 / (1 + 3 * X ** 2), rtol=1e-6)
        np.testing.assert_allclose(
            batched_grad(A)[0], central(lambda a: np.sum(solution(a)), A[0]), rtol=1e-6)


def test_jit_of_vmap_with_a_value_computed_from_the_batch_inside_the_function():
    def solution(a):  # a[0] read inside the function, apart from x
        return opt.minimize(lambda x: cr.sum((x - a) ** 2) + a[0] * cr.sum(x ** 4),
                            np.zeros(2), method="BFGS", options=TIGHT).x

    A = np.array([[1.0, 2.0], [0.5, -1.0]])
    batched = cr.jit(cr.vmap(solution))
    for B in (A, A + 1.0):
        np.testing.assert_allclose(batched(B), np.stack([solution(b) for b in B]),
                                   rtol=1e-8, atol=1e-10)


# --- two vmaps ----------------------------------------------------------------------

def test_two_vmaps_over_closures_solve_each_example_eagerly_and_under_jit():
    def solution(a, c):  # a batched by the outer vmap, c by the inner, both closed over
        return opt.root(lambda x: x ** 3 + a * x - c, np.ones(1), tol=1e-14).x[0]

    def exact_grad_a(a, c):  # x^3 + a x = c: dx/da = -x / (3 x^2 + a)
        x = solution(a, c)
        return -x / (3 * x ** 2 + a)

    def grid(fn):
        return lambda A, C: cr.vmap(lambda a: cr.vmap(lambda c: fn(a, c))(C))(A)

    values, jitted = grid(solution), cr.jit(grid(solution))
    gradients = cr.jit(grid(cr.grad(solution)))
    C = np.array([5.0, 6.0, 7.0])
    for A in (np.array([1.0, 2.0]), np.array([0.5, 3.0])):
        loop = np.array([[solution(a, c) for c in C] for a in A])
        np.testing.assert_allclose(values(A, C), loop, rtol=1e-12)
        np.testing.assert_allclose(jitted(A, C), loop, rtol=1e-12)
        np.testing.assert_allclose(loop ** 3 + A[:, None] * loop, np.broadcast_to(C, loop.shape),
                                   rtol=1e-12)
        exact = np.array([[float(exact_grad_a(a, c)) for c in C] for a in A])
        np.testing.assert_allclose(gradients(A, C), exact, rtol=1e-9)
        np.testing.assert_allclose(gradients(A, C)[0, 0],
                                   central(lambda u: solution(u, C[0]), A[0]), rtol=1e-6)


def test_a_value_batched_by_two_vmaps_closed_over():
    both = cr.vmap(cr.vmap(lambda a: opt.minimize(
        lambda x: cr.sum((x - a) ** 2) + cr.sum(x ** 4), np.zeros(1),
        method="trust-exact", options={"gtol": 1e-13}).x))
    B = np.arange(4.0).reshape(2, 2, 1) - 1.5
    X = both(B)
    np.testing.assert_allclose(2 * (X - B) + 4 * X ** 3, 0.0, atol=1e-8)
    np.testing.assert_allclose(cr.jit(both)(B + 1.0), both(B + 1.0), rtol=1e-12)


def test_two_vmaps_over_a_value_computed_apart_from_x_eagerly_and_under_jit():
    def solution(a, c):  # sin(a) computed inside the function, read at each example's place
        return opt.root(lambda x: x ** 3 + cr.sin(a) * x - c, np.ones(1), tol=1e-14).x[0]

    def exact_grad_a(a, c):  # x^3 + sin(a) x = c: dx/da = -cos(a) x / (3 x^2 + sin(a))
        x = solution(a, c)
        return -np.cos(a) * x / (3 * x ** 2 + np.sin(a))

    def grid(fn):
        return lambda A, C: cr.vmap(lambda a: cr.vmap(lambda c: fn(a, c))(C))(A)

    values, gradients = cr.jit(grid(solution)), cr.jit(grid(cr.grad(solution)))
    C = np.array([5.0, 6.0])
    for A in (np.array([1.0, 2.0]), np.array([0.5, 1.5])):
        loop = np.array([[solution(a, c) for c in C] for a in A])
        np.testing.assert_allclose(grid(solution)(A, C), loop, rtol=1e-12)
        np.testing.assert_allclose(values(A, C), loop, rtol=1e-12)
        np.testing.assert_allclose(loop ** 3 + np.sin(A)[:, None] * loop,
                                   np.broadcast_to(C, loop.shape), rtol=1e-12)
        exact = np.array([[exact_grad_a(a, c) for c in C] for a in A])
        np.testing.assert_allclose(grid(cr.grad(solution))(A, C), exact, rtol=1e-9)
        np.testing.assert_allclose(gradients(A, C), exact, rtol=1e-9)
        np.testing.assert_allclose(gradients(A, C)[1, 0],
                                   central(lambda u: solution(u, C[0]), A[1]), rtol=1e-6)


def test_a_solve_in_the_body_of_a_jitted_loop_closes_over_the_carry():
    """fori_loop and scan under cr.jit, each step solving with the carry it closes over:
    the same numbers as the eager loop at two calls, and the same gradient."""
    def stepped(a0):
        return cr.lax.fori_loop(0, 3, lambda i, a: a + 0.1 * opt.root(
            lambda x: x + x ** 3 - a, np.zeros(3)).x, a0)

    def scanned(c0):
        def body(c, w):
            x = opt.minimize(lambda x: cr.sum((x - c * w) ** 2) + cr.sum(x ** 4),
                             np.zeros(3)).x
            return c + 0.1 * x, x
        return cr.lax.scan(body, c0, np.array([1.0, 2.0]))

    loss = lambda a: cr.sum(stepped(a))  # noqa: E731
    jitted, jitted_grad, jitted_scan = cr.jit(stepped), cr.jit(cr.grad(loss)), cr.jit(scanned)
    for a in (np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -1.0])):
        np.testing.assert_allclose(jitted(a), stepped(a), rtol=1e-12)
        np.testing.assert_allclose(jitted_grad(a), cr.grad(loss)(a), rtol=1e-10)
        for ours, eager in zip(jitted_scan(a), scanned(a)):
            np.testing.assert_allclose(ours, eager, rtol=1e-12)

"""Solvers under two nested cr.vmaps whose function computes, apart from x, on values it
closes over that are batched by both (``cr.sin(a) * c``, ``a`` from the outer vmap and
``c`` from the inner): each example is solved with its own numbers, and its answer and
derivatives (cr.grad, cr.jvp, second derivatives) are those of solving it alone.

Every solver here solves one equation, x^3 + s x - t = 0 with s = 2 + sin(a) c and
t = exp(a / 2) + c (the stationary point of x^4 / 4 + s x^2 / 2 - t x for minimize),
whose root SciPy's brentq on plain floats gives independently; its derivatives are
checked against the implicit function theorem's closed form and against central
differences of that independent solve."""

import numpy as np
import pytest
import scipy.optimize as so

import chainrule as cr
from chainrule.scipy import optimize as opt


def reference(a, c):
    """The root on plain floats, by SciPy alone."""
    s, t = 2 + np.sin(a) * c, np.exp(a / 2) + c
    return so.brentq(lambda x: x ** 3 + s * x - t, -10.0, 10.0, xtol=1e-15)


def reference_gradient(a, c):
    """(dx/da, dx/dc) by the implicit function theorem, on the reference root."""
    x = reference(a, c)
    s = 2 + np.sin(a) * c
    fx = 3 * x ** 2 + s
    return ((np.exp(a / 2) / 2 - x * np.cos(a) * c) / fx, (1 - x * np.sin(a)) / fx)


def central(fn, u, eps=1e-5):
    return (fn(u + eps) - fn(u - eps)) / (2 * eps)


def second_central(fn, u, eps=1e-4):
    return (fn(u + eps) - 2 * fn(u) + fn(u - eps)) / eps ** 2


def equation(a, c):
    """The residual, computing on a and c apart from x before it touches x."""
    def residual(x):
        s = 2 + cr.sin(a) * c
        t = cr.exp(a / 2) + c
        return x ** 3 + s * x - t
    return residual


def newton_steps(f, x):
    for _ in range(40):
        x = x - f(x) / cr.jacobian(f)(x)[0, 0]
    return x


SOLVERS = {
    "minimize": lambda a, c: opt.minimize(
        lambda x: cr.sum(x ** 4) / 4 + (2 + cr.sin(a) * c) * cr.sum(x ** 2) / 2
        - (cr.exp(a / 2) + c) * cr.sum(x), np.zeros(1), method="BFGS",
        options={"gtol": 1e-13}).x[0],
    "root": lambda a, c: opt.root(equation(a, c), np.ones(1), tol=1e-14).x[0],
    "fsolve": lambda a, c: opt.fsolve(equation(a, c), np.ones(1), xtol=1e-12)[0],
    "least_squares": lambda a, c: opt.least_squares(
        equation(a, c), np.ones(1), xtol=1e-15, ftol=1e-15, gtol=1e-15).x[0],
    "root_scalar": lambda a, c: opt.root_scalar(
        equation(a, c), bracket=(-10.0, 10.0), method="brentq", xtol=1e-14).root,
    "brentq": lambda a, c: opt.brentq(equation(a, c), -10.0, 10.0, xtol=1e-14),
    "newton": lambda a, c: opt.newton(equation(a, c), 1.0, tol=1e-14),
    "custom_root": lambda a, c: cr.custom_root(
        equation(a, c), np.ones(1), newton_steps, lambda g, y: y / g(np.ones(1)))[0],
}


def grid(fn):
    """fn(a, c) under two nested vmaps: a by the outer, c by the inner."""
    return lambda A, C: cr.vmap(lambda a: cr.vmap(lambda c: fn(a, c))(C))(A)


def loop(fn, A, C):
    """fn(a, c) for each example in turn, in Python."""
    return np.array([[np.asarray(fn(a, c), dtype=float) for c in C] for a in A])


def examples(k):
    rng = np.random.default_rng(k)
    return rng.uniform(-1.5, 1.5, size=2), rng.uniform(0.5, 1.5, size=3)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_each_solver_gives_each_example_its_own_answer_and_gradient(name):
    A, C = examples(1)
    solution = SOLVERS[name]
    expected = loop(reference, A, C)
    np.testing.assert_allclose(grid(solution)(A, C), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grid(solution)(A, C), loop(solution, A, C), rtol=1e-9)
    for argnum in (0, 1):
        gradient = grid(cr.grad(solution, argnums=argnum))(A, C)
        np.testing.assert_allclose(gradient, loop(cr.grad(solution, argnums=argnum), A, C),
                                   rtol=1e-8, atol=1e-12)
        exact = loop(lambda a, c: reference_gradient(a, c)[argnum], A, C)
        np.testing.assert_allclose(gradient, exact, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(grid(cr.grad(solution))(A, C)[1, 2],
                               central(lambda u: reference(u, C[2]), A[1]), rtol=1e-6)


@pytest.mark.parametrize("name", ["minimize", "root", "root_scalar", "brentq", "custom_root"])
def test_forward_mode_and_the_second_derivative_of_each_example(name):
    A, C = examples(2)
    solution = SOLVERS[name]
    tangent = grid(lambda a, c: cr.jvp(lambda u: solution(u, c), (a,), (1.0,))[1])(A, C)
    np.testing.assert_allclose(tangent, loop(lambda a, c: reference_gradient(a, c)[0], A, C),
                               rtol=1e-7)
    second = cr.grad(cr.grad(solution))
    by_vmap = grid(second)(A, C)
    np.testing.assert_allclose(by_vmap, loop(second, A, C), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(
        by_vmap, loop(lambda a, c: second_central(lambda u: reference(u, c), a), A, C),
        rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        by_vmap[0, 1], central(lambda u: reference_gradient(u, C[1])[0], A[0]), rtol=1e-6)
    mixed = grid(cr.hessian(solution, argnums=(0, 1)))(A, C)[0][1]
    np.testing.assert_allclose(
        mixed, loop(lambda a, c: central(lambda v: reference_gradient(a, v)[0], c), A, C),
        rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["minimize", "root", "brentq", "custom_root"])
def test_gradient_through_the_whole_grid(name):
    A, C = examples(3)
    solution = SOLVERS[name]
    total = lambda A, C: cr.sum(grid(solution)(A, C))  # noqa: E731
    dA, dC = cr.grad(total, argnums=(0, 1))(A, C)
    np.testing.assert_allclose(dA, loop(lambda a, c: reference_gradient(a, c)[0], A, C)
                               .sum(axis=1), rtol=1e-7)
    np.testing.assert_allclose(dC, loop(lambda a, c: reference_gradient(a, c)[1], A, C)
                               .sum(axis=0), rtol=1e-7)
    np.testing.assert_allclose(
        dA[0], central(lambda u: sum(reference(u, c) for c in C), A[0]), rtol=1e-6)


@pytest.mark.parametrize("name", ["minimize", "root", "brentq", "custom_root"])
def test_under_jit_each_call_solves_with_its_own_numbers(name):
    rng = np.random.default_rng(4)
    solution = SOLVERS[name]
    values, gradients = cr.jit(grid(solution)), cr.jit(grid(cr.grad(solution)))
    tangents = cr.jit(grid(lambda a, c: cr.jvp(lambda u: solution(u, c), (a,), (1.0,))[1]))
    seconds = cr.jit(grid(cr.grad(cr.grad(solution))))
    C = rng.uniform(0.5, 1.5, size=3)
    for _ in range(2):
        A = rng.uniform(-1.5, 1.5, size=2)
        exact = loop(lambda a, c: reference_gradient(a, c)[0], A, C)
        np.testing.assert_allclose(values(A, C), loop(reference, A, C), rtol=1e-9)
        np.testing.assert_allclose(gradients(A, C), exact, rtol=1e-7)
        np.testing.assert_allclose(tangents(A, C), exact, rtol=1e-7)
        np.testing.assert_allclose(
            seconds(A, C), loop(lambda a, c: second_central(lambda u: reference(u, c), a),
                                A, C), rtol=1e-5, atol=1e-7)


def test_a_value_computed_from_both_batches_before_the_function_is_closed_over():
    A, C = examples(5)

    def solution(a, c):
        s, t = 2 + cr.sin(a) * c, cr.exp(a / 2) + c   # batched by both vmaps
        return opt.root(lambda x: x ** 3 + s * x - t, np.ones(1), tol=1e-14).x[0]

    np.testing.assert_allclose(grid(solution)(A, C), loop(reference, A, C), rtol=1e-9)
    np.testing.assert_allclose(grid(cr.grad(solution, argnums=1))(A, C),
                               loop(lambda a, c: reference_gradient(a, c)[1], A, C),
                               rtol=1e-7)


def test_one_level_maps_a_value_only_the_closure_reads():
    """c passed in args= and batched by one vmap, a read only by the closure and
    batched by the other, in either order."""
    A, C = examples(6)

    def solution(a, c):
        return opt.root(lambda x, c: x ** 3 + (2 + cr.sin(a) * c) * x - cr.exp(a / 2) - c,
                        np.ones(1), args=(c,), tol=1e-14).x[0]

    swapped = lambda C, A: cr.vmap(  # noqa: E731
        lambda c: cr.vmap(lambda a: cr.grad(solution)(a, c))(A))(C)
    exact = loop(lambda a, c: reference_gradient(a, c)[0], A, C)
    np.testing.assert_allclose(grid(solution)(A, C), loop(reference, A, C), rtol=1e-9)
    np.testing.assert_allclose(grid(cr.grad(solution))(A, C), exact, rtol=1e-7)
    np.testing.assert_allclose(swapped(C, A), exact.T, rtol=1e-7)

    # one level maps only a value the closure reads, the other only what args= holds
    def shifted(a, b):  # b in args, a closed over
        return opt.brentq(lambda x, b: x ** 3 + (2 + cr.sin(a)) * x - b, -10.0, 10.0,
                          args=(b,), xtol=1e-14)

    B = np.random.default_rng(7).uniform(1.0, 3.0, size=3)
    x = grid(shifted)(A, B)
    s = 2 + np.sin(A)[:, None]
    np.testing.assert_allclose(x ** 3 + s * x, np.broadcast_to(B, x.shape), rtol=1e-12)
    np.testing.assert_allclose(grid(cr.grad(shifted))(A, B),
                               -np.cos(A)[:, None] * x / (3 * x ** 2 + s), rtol=1e-8)


def test_vector_values_batched_by_both_vmaps_solve_each_example():
    rng = np.random.default_rng(8)
    A, C = rng.uniform(-1.0, 1.0, size=(2, 3)), rng.uniform(0.5, 1.5, size=(4, 3))

    def solution(a, c):  # stationary: x^3 + x = cr.sin(a) * c entrywise
        return opt.minimize(lambda x: cr.sum(x ** 4) / 4 + cr.sum(x ** 2) / 2
                            - cr.sum(cr.sin(a) * c * x), np.zeros(3), method="BFGS",
                            options={"gtol": 1e-13}).x

    X = grid(solution)(A, C)
    rhs = np.sin(A)[:, None, :] * C[None, :, :]
    np.testing.assert_allclose(X ** 3 + X, rhs, atol=1e-10)
    jac = grid(cr.jacrev(solution))(A, C)               # diagonal: cos(a) c / (3 x^2 + 1)
    np.testing.assert_allclose(
        np.diagonal(jac, axis1=2, axis2=3),
        np.cos(A)[:, None, :] * C[None, :, :] / (3 * X ** 2 + 1), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(jac - np.einsum("ijk,kl->ijkl", np.diagonal(
        jac, axis1=2, axis2=3), np.eye(3)), 0.0, atol=1e-10)


def test_a_batch_of_integers_closed_over_solves_each_example():
    rng = np.random.default_rng(9)
    A, N = rng.uniform(0.5, 2.0, size=2), np.array([1, 3, 2])

    def solution(a, n):  # n: integers, batched by the inner vmap
        return opt.root(lambda x: x ** 3 + n * x - cr.sin(a) - 1, np.ones(1), tol=1e-14).x[0]

    X = grid(solution)(A, N)
    np.testing.assert_allclose(X ** 3 + N * X, np.sin(A)[:, None] + 1 + 0 * X, rtol=1e-12)
    np.testing.assert_allclose(grid(cr.grad(solution))(A, N),
                               np.cos(A)[:, None] / (3 * X ** 2 + N), rtol=1e-9)
    np.testing.assert_allclose(cr.vmap(lambda n: solution(A[0], n))(N), X[0], rtol=1e-12)


def test_a_batch_read_only_through_an_operation_at_x_is_refused_in_one_line():
    """An index batched by vmap that the function hands an operation on x: its run at
    the starting point does not meet it as a value it closes over, so the example's
    solve has no numbers of it; in args= it is solved example by example."""
    N = np.array([0, 2, 1])
    weights = np.array([1.0, 2.0, 3.0])

    def closed(n):
        return opt.root(lambda x: x ** 3 + x - cr.take(weights + 0 * x, n), np.ones(1)).x[0]

    def passed(n):
        return opt.root(lambda x, n: x ** 3 + x - cr.take(weights + 0 * x, n), np.ones(1),
                        args=(n,), tol=1e-14).x[0]

    with pytest.raises(TypeError, match=r"^root: the function computes on a value batched "
                                        r"by cr.vmap that its run at the starting point did "
                                        r"not meet .*; pass that value in args="):
        cr.vmap(closed)(N)
    x = cr.vmap(passed)(N)
    np.testing.assert_allclose(x ** 3 + x, weights[N], rtol=1e-12)

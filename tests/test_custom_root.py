"""cr.custom_root and cr.custom_linear_solve against jax.lax's, in float64: the same
problems written once for both libraries (a namespace of the library's functions),
values and derivatives compared (grad, jacrev, jacfwd, second order), and against
central differences where JAX does not go."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)
RNG = per_test_generator(47)

CR = dict(np=cnp, lax=cr.lax, grad=cr.grad, jacrev=cr.jacrev, jacfwd=cr.jacfwd,
          hessian=cr.hessian, jacobian=cr.jacobian, vmap=cr.vmap)
JAX = dict(np=jnp, lax=jax.lax, grad=jax.grad, jacrev=jax.jacrev, jacfwd=jax.jacfwd,
           hessian=jax.hessian, jacobian=jax.jacobian, vmap=jax.vmap)


def central(f, a, h=1e-5):
    return (np.asarray(f(a + h)) - np.asarray(f(a - h))) / (2 * h)


# ---------------------------------------------------------------------------------------
# custom_root
# ---------------------------------------------------------------------------------------

def scalar_sqrt(ns):
    """sqrt(a) by Newton's method, differentiated implicitly (JAX's documented use)."""
    def sqrt(a):
        def newton(f, x):
            for _ in range(40):
                x = x - f(x) / (2 * x)
            return x
        return ns["lax"].custom_root(lambda x: x ** 2 - a, 1.0, newton,
                                     lambda g, y: y / g(1.0))
    return sqrt


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "hessian"])
def test_a_scalar_root_and_its_derivatives_agree_with_jax(transform):
    ours, theirs = scalar_sqrt(CR), scalar_sqrt(JAX)
    np.testing.assert_allclose(ours(3.0), theirs(3.0), rtol=1e-14)
    np.testing.assert_allclose(CR[transform](ours)(3.0), JAX[transform](theirs)(3.0),
                               rtol=1e-12)
    assert abs(float(CR[transform](ours)(3.0))) > 1e-3


def vector_root(ns, m):
    """x with x**3 + M x = p, M and p closed over; a dense Newton solve, and a
    tangent_solve that forms the linear function's matrix."""
    np_ = ns["np"]

    def tangent_solve(g, y):
        return np_.linalg.solve(ns["jacobian"](g)(y), y)

    def newton(f, x):
        for _ in range(30):
            x = x - np_.linalg.solve(ns["jacobian"](f)(x), f(x))
        return x

    def solution(p, scale):
        f = lambda x: x ** 3 + scale * (m @ x) - p  # noqa: E731
        return ns["lax"].custom_root(f, np.zeros(3), newton, tangent_solve)
    return solution


def test_a_vector_root_closing_over_its_parameters_agrees_with_jax_to_second_order():
    rng = RNG
    m = rng.standard_normal((3, 3)) * 0.3 + 2 * np.eye(3)
    p = rng.standard_normal(3)
    ours, theirs = vector_root(CR, m), vector_root(JAX, m)
    np.testing.assert_allclose(ours(p, 1.5), theirs(p, 1.5), rtol=1e-12)
    for transform in ("jacrev", "jacfwd"):
        for argnums in (0, 1):
            np.testing.assert_allclose(CR[transform](ours, argnums)(p, 1.5),
                                       JAX[transform](theirs, argnums)(p, 1.5), rtol=1e-10)
    weights = np.array([1.0, -2.0, 0.5])
    outer = lambda ns, sol: (lambda s: ns["np"].sum(weights * sol(p, s) ** 2))  # noqa: E731
    np.testing.assert_allclose(CR["hessian"](outer(CR, ours))(1.5),
                               JAX["hessian"](outer(JAX, theirs))(1.5), rtol=1e-9)
    np.testing.assert_allclose(CR["grad"](outer(CR, ours))(1.5),
                               central(outer(CR, ours), 1.5), rtol=1e-7)


def test_has_aux_returns_the_solvers_diagnostics_and_the_guess_has_no_derivative():
    def sqrt_with_count(ns, a, guess):
        def newton(f, x):
            for k in range(40):
                x = x - f(x) / (2 * x)
            return x, np.float64(k + 1)  # (JAX wants a float aux)
        return ns["lax"].custom_root(lambda x: x ** 2 - a, guess, newton,
                                     lambda g, y: y / g(1.0), has_aux=True)

    root, count = sqrt_with_count(CR, 2.0, 1.0)
    assert count == 40 and abs(float(root) - np.sqrt(2.0)) < 1e-14
    np.testing.assert_allclose(cr.grad(lambda a: sqrt_with_count(CR, a, 1.0)[0])(2.0),
                               jax.grad(lambda a: sqrt_with_count(JAX, a, 1.0)[0])(2.0),
                               rtol=1e-12)
    # As in JAX, the initial guess does not move the root: its derivative is 0.
    assert float(cr.grad(lambda g: sqrt_with_count(CR, 2.0, g)[0])(1.0)) == 0.0
    assert float(jax.grad(lambda g: sqrt_with_count(JAX, 2.0, g)[0])(1.0)) == 0.0


def test_a_function_that_is_not_callable_is_refused_in_one_line():
    with pytest.raises(TypeError, match=r"custom_root: solve must be a function"):
        cr.custom_root(lambda x: x, 1.0, "newton", lambda g, y: y)


# ---------------------------------------------------------------------------------------
# custom_linear_solve
# ---------------------------------------------------------------------------------------

def linear_problem(ns, a, b_matrix, symmetric):
    """x = (A + t B)^-1 (c + t), matvec closing over t; a dense solver formed from the
    matvec (so that it solves whatever linear function it is handed)."""
    np_ = ns["np"]

    def dense(matvec, rhs):
        return np_.linalg.solve(ns["jacobian"](matvec)(rhs), rhs)

    def solution(c, t):
        matvec = lambda v: a @ v + t * (b_matrix @ v)  # noqa: E731
        return ns["lax"].custom_linear_solve(matvec, c + t, dense,
                                             transpose_solve=None if symmetric else dense,
                                             symmetric=symmetric)
    return solution


@pytest.mark.parametrize("symmetric", [True, False])
def test_a_linear_solve_agrees_with_jax_in_b_and_in_what_matvec_closes_over(symmetric):
    rng = RNG
    a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    b_matrix = rng.standard_normal((4, 4))
    if symmetric:
        a, b_matrix = a + a.T, b_matrix + b_matrix.T
    c = rng.standard_normal(4)
    ours, theirs = linear_problem(CR, a, b_matrix, symmetric), \
        linear_problem(JAX, a, b_matrix, symmetric)
    np.testing.assert_allclose(ours(c, 0.3),
                               np.linalg.solve(a + 0.3 * b_matrix, c + 0.3), rtol=1e-12)
    for transform in ("jacrev", "jacfwd"):
        for argnums in (0, 1):
            np.testing.assert_allclose(CR[transform](ours, argnums)(c, 0.3),
                                       JAX[transform](theirs, argnums)(c, 0.3), rtol=1e-10)
    np.testing.assert_allclose(cr.jacrev(ours)(c, 0.3), np.linalg.inv(a + 0.3 * b_matrix),
                               rtol=1e-10)
    outer = lambda ns, sol: (lambda t: ns["np"].sum(sol(c, t) ** 3))  # noqa: E731
    np.testing.assert_allclose(CR["hessian"](outer(CR, ours))(0.3),
                               JAX["hessian"](outer(JAX, theirs))(0.3), rtol=1e-9)


def test_a_linear_solve_under_vmap_over_b_solves_each_example():
    rng = RNG
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    bs = rng.standard_normal((5, 3))

    def solve(matvec, rhs):
        return cnp.linalg.solve(cr.jacobian(matvec)(rhs), rhs)

    x = lambda b: cr.custom_linear_solve(lambda v: a @ v, b, solve, solve)  # noqa: E731
    np.testing.assert_allclose(cr.vmap(x)(bs), np.linalg.solve(a, bs.T).T, rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.jacrev(x))(bs),
                               np.broadcast_to(np.linalg.inv(a), (5, 3, 3)), rtol=1e-12)


def test_a_linear_solve_under_jit_with_b_an_argument_replays_at_new_numbers():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])

    def solve(matvec, rhs):
        return cnp.linalg.solve(cr.jacobian(matvec)(rhs), rhs)

    x = cr.jit(lambda b: cr.custom_linear_solve(lambda v: a @ v, b, solve, symmetric=True))
    for b in (np.array([1.0, 2.0]), np.array([-3.0, 0.5])):  # traced at the first
        np.testing.assert_allclose(x(b), np.linalg.solve(a, b), rtol=1e-12)
    gradient = cr.jit(cr.grad(lambda b: cr.sum(cr.custom_linear_solve(
        lambda v: a @ v, b, solve, symmetric=True) ** 2)))
    b = np.array([1.0, 2.0])
    np.testing.assert_allclose(gradient(b), 2 * np.linalg.solve(a, np.linalg.solve(a, b)),
                               rtol=1e-12)


def test_reverse_mode_without_a_transpose_solve_is_refused_as_in_jax():
    a = np.array([[3.0, 1.0], [0.0, 2.0]])

    def solve(matvec, rhs):
        return cnp.linalg.solve(cr.jacobian(matvec)(rhs), rhs)

    x = lambda b: cr.custom_linear_solve(lambda v: a @ v, b, solve)  # noqa: E731
    np.testing.assert_allclose(cr.jacfwd(x)(np.ones(2)), np.linalg.inv(a), rtol=1e-12)
    with pytest.raises(TypeError, match=r"custom_linear_solve: reverse mode needs "
                                        r"transpose_solve="):
        cr.jacrev(x)(np.ones(2))


def test_tensor_backward_reaches_what_f_and_matvec_close_over_and_b():
    c = cr.tensor(np.array([10.0, 2.0]), requires_grad=True)

    def newton(f, x):
        for _ in range(30):
            x = x - f(x) / (3 * x ** 2 + 1)
        return x

    x = cr.custom_root(lambda x: x ** 3 + x - c, np.ones(2), newton,
                       lambda g, y: y / g(np.ones(2)))   # a diagonal Jacobian
    cr.sum(x).backward()
    np.testing.assert_allclose(c.grad, 1 / (3 * np.array([2.0, 1.0]) ** 2 + 1), rtol=1e-12)

    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    t = cr.tensor(np.array(0.5), requires_grad=True)
    b = cr.tensor(np.array([1.0, 2.0]), requires_grad=True)
    dense = lambda mv, r: cnp.linalg.solve(cr.jacobian(mv)(r), r)  # noqa: E731
    cr.sum(cr.custom_linear_solve(lambda v: a @ v + t * v, b, dense, symmetric=True)).backward()
    m = a + 0.5 * np.eye(2)
    u = np.linalg.solve(m.T, np.ones(2))
    np.testing.assert_allclose(b.grad, u, rtol=1e-12)
    np.testing.assert_allclose(t.grad, -u @ np.linalg.solve(m, [1.0, 2.0]), rtol=1e-12)


def test_vmap_over_a_value_matvec_closes_over_agrees_with_jax():
    a = RNG.standard_normal((3, 3)) + 4 * np.eye(3)
    b_matrix = RNG.standard_normal((3, 3))
    c = RNG.standard_normal(3)
    ts = np.array([0.1, 0.3, -0.2, 0.3])
    for ns_name in ("values", "jacfwd", "grad"):
        results = []
        for ns in (CR, JAX):
            sol = linear_problem(ns, a, b_matrix, False)
            one = {"values": lambda t: sol(c, t),
                   "jacfwd": ns["jacfwd"](lambda t: sol(c, t)),
                   "grad": ns["grad"](lambda t: ns["np"].sum(sol(c, t) ** 2))}[ns_name]
            results.append(np.asarray(ns["vmap"](one)(ts)))
        np.testing.assert_allclose(results[0], results[1], rtol=1e-10)

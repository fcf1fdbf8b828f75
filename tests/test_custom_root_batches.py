"""jacrev's and jacfwd's rows through a solution (transforms/implicit.py): the rule takes
them as one batch, J formed once for all, where it once ran row by row. Each Jacobian
is compared with one VJP (or one JVP) per row, for a solution of several unknowns, of
an array shape, and of ``cr.custom_root`` with the user's own linear solver, which is
still handed one vector at a time, never a batch."""

import numpy as np

import chainrule as cr
from chainrule.scipy import optimize as opt
from chainrule.transforms.batching import BatchTracer
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(4615)


def row_by_row(f, b):
    """f's Jacobian at b, one VJP per row of it and one JVP per column."""
    out, pullback = cr.vjp(f, b)
    eye = np.eye(out.size)
    rows = np.stack([np.ravel(pullback(eye[i].reshape(out.shape))[0]) for i in range(out.size)])
    columns = np.stack([np.ravel(cr.jvp(f, (b,), (np.eye(b.size)[j].reshape(b.shape),))[1])
                        for j in range(b.size)], axis=-1)
    np.testing.assert_allclose(rows, columns, rtol=1e-10, atol=1e-12)
    return rows.reshape(out.shape + b.shape)


def check(f, b):
    expected = row_by_row(f, b)
    assert np.all(np.isfinite(expected)) and np.abs(expected).max() > 0.01
    for transform in (cr.jacrev, cr.jacfwd):
        np.testing.assert_allclose(transform(f)(b), expected, rtol=1e-10, atol=1e-12)


def test_a_solution_of_several_unknowns():
    a = RNG.standard_normal((4, 4)) + 4 * np.eye(4)

    def solution(b):           # a x + x**3 = b, four unknowns
        return opt.root(lambda x, b: a @ x + x ** 3 - b, np.zeros(4), args=(b,), tol=1e-13).x
    check(solution, RNG.standard_normal(4))


def test_a_solution_shaped_as_a_matrix():
    def solution(b):           # x + x**3 = b entry by entry, x of shape (2, 3)
        return opt.root(lambda x, b: x + x ** 3 - b, np.zeros((2, 3)), args=(b,),
                        tol=1e-13).x
    b = RNG.standard_normal((2, 3))
    check(solution, b)
    x = solution(b)            # the closed form: dx/db = 1 / (1 + 3 x**2), entry by entry
    np.testing.assert_allclose(cr.jacrev(solution)(b),
                               np.diag(np.ravel(1 / (1 + 3 * x ** 2))).reshape(2, 3, 2, 3),
                               rtol=1e-10, atol=1e-12)


def test_a_custom_roots_own_linear_solver_is_handed_one_vector_at_a_time():
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    shapes = []

    def tangent_solve(g, y):   # solves with the matrix of g, built column by column
        shapes.append((np.shape(y), isinstance(y, BatchTracer)))
        matrix = cr.stack([g(e) for e in np.eye(3)], axis=1)
        return cr.linalg.solve(matrix, y)

    def solution(b):
        def newton(f, x):
            for _ in range(40):
                x = x - np.linalg.solve(a + np.diag(3 * x ** 2), f(x))
            return x
        return cr.custom_root(lambda x: a @ x + x ** 3 - b, np.zeros(3), newton, tangent_solve)

    check(solution, RNG.standard_normal(3))
    assert shapes and set(shapes) == {((3,), False)}  # one vector, not a vmap's batch

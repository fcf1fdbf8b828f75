"""The derivative of a solution of one unknown (brentq, newton, root_scalar; root or
minimize in one variable): -dF/da / dF/dx from one VJP of F, a shortcut beside the
general rule of transforms/implicit.py, which forms J = dF/dx and solves with it.

Each derivative of the shortcut is compared with the general rule's on the same root
set as the first unknown of a system of two whose second unknown is decoupled (J is
then a 2 x 2 matrix, solved as one): the same numbers, first and second order, forward
and reverse, with batches of cotangents and tangents (jacrev, jacfwd), under vmap and
cr.jit, in arguments and in a value the function closes over. Where dF/dx is 0 at the
root, both refuse."""

import numpy as np
import pytest
import scipy.optimize as so

import chainrule as cr
from chainrule.scipy import optimize as opt
from chainrule.transforms import implicit
from chainrule.transforms.implicit import implicit_solution
from chainrule.transforms.solver_numbers import plain
from chainrule.transforms.pytrees import tree_flatten
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(4614)


def residual(x, k, c, s):
    """F(x; k, c, s) of x of shape (1,): one root in [0, 2] for the parameters used."""
    return c[0] * cr.cos(x) - k * x - c[1] * s * x ** 3


def root_of(k, c, s):
    """The root on plain numbers (what either rule is handed: the same answer)."""
    f = lambda x: float(plain(residual(np.array([x]), k, c, s), "test")[0])  # noqa: E731
    return so.brentq(f, 0.0, 2.0, xtol=1e-15, rtol=4 * np.finfo(float).eps)


def alone(k, c, s):
    """The root as a solution of one unknown: the shortcut."""
    def solve(tree):
        return np.array([root_of(*tree, s)])
    return implicit_solution(lambda x, k, c: residual(x, k, c, s), solve, (k, c),
                             "alone", at=np.zeros(1))[0]


def paired(k, c, s):
    """The same root as the first unknown of two, the second decoupled (y = k): the
    general rule, with J a 2 x 2 matrix."""
    def solve(tree):
        return np.array([root_of(*tree, s), float(tree[0])])

    def system(x, k, c):
        return cr.concatenate([residual(x[:1], k, c, s), x[1:] - k])
    return implicit_solution(system, solve, (k, c), "paired", at=np.zeros(2))[0]


def params():
    return (float(RNG.uniform(0.8, 1.2)), RNG.uniform([0.9, 0.05], [1.1, 0.2]),
            float(RNG.uniform(0.5, 1.5)))


def assert_same(a, b):
    """Equal to rounding, leaf by leaf (a tuple per argnum), and not trivially: finite
    and not all zero."""
    a, b = tree_flatten(a)[0], tree_flatten(b)[0]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-13)
        assert np.all(np.isfinite(x)) and np.any(np.asarray(x) != 0)


def test_the_shortcut_is_the_general_rule_in_the_arguments_to_second_order():
    k, c, s = params()
    for rule in (alone, paired):
        assert abs(float(plain(residual(np.array([rule(k, c, s)]), k, c, s), "t")[0])) < 1e-14
    for transform in (cr.grad, cr.jacfwd, cr.hessian):
        for argnums in (0, 1, (0, 1)):
            assert_same(transform(alone, argnums=argnums)(k, c, s),
                        transform(paired, argnums=argnums)(k, c, s))
    direction = RNG.standard_normal(2)
    assert_same(cr.jvp(lambda c: alone(k, c, s), (c,), (direction,))[1],
                cr.jvp(lambda c: paired(k, c, s), (c,), (direction,))[1])


def test_batches_of_cotangents_and_tangents_give_the_general_rules_rows():
    k, c, s = params()
    weights = RNG.standard_normal(3)
    for transform in (cr.jacrev, cr.jacfwd):
        assert_same(transform(lambda c: weights * alone(k, c, s))(c),
                    transform(lambda c: weights * paired(k, c, s))(c))
    assert_same(cr.jacfwd(cr.jacrev(lambda c: weights * alone(k, c, s)))(c),
                cr.jacfwd(cr.jacrev(lambda c: weights * paired(k, c, s)))(c))


def test_a_closed_over_value_under_vmap_and_jit_as_the_general_rule():
    k, c, s = params()
    ss = RNG.uniform(0.5, 1.5, size=3)
    for transform in (cr.grad, cr.hessian):
        assert_same(transform(lambda s: alone(k, c, s))(s),
                    transform(lambda s: paired(k, c, s))(s))
        assert_same(cr.vmap(transform(lambda s: alone(k, c, s)))(ss),
                    cr.vmap(transform(lambda s: paired(k, c, s)))(ss))
    assert_same(cr.vmap(cr.grad(alone), in_axes=(None, None, 0))(k, c, ss),
                np.array([cr.grad(paired)(k, c, s) for s in ss]))
    jitted = cr.jit(cr.grad(lambda k, c: alone(k, c, s), argnums=1))
    for k in (0.9, 1.1):
        assert_same(jitted(np.float64(k), c), cr.grad(paired, argnums=1)(k, c, s))


def test_the_public_scalar_solvers_take_the_shortcut_to_the_same_numbers(monkeypatch):
    k, c, s = params()
    expected = {transform: transform(lambda k: paired(k, c, s))(k)
                for transform in (cr.grad, cr.jacfwd, cr.hessian)}

    def no_jacobian(*args, **kwargs):
        raise AssertionError("the general rule's Jacobian was formed")
    monkeypatch.setattr(implicit, "jacfwd", no_jacobian)
    crossing = lambda k: opt.brentq(residual, 0.0, 2.0, args=(k, c, s), xtol=1e-15)  # noqa: E731
    found = lambda k: opt.newton(residual, 0.7, args=(k, c, s), tol=1e-15)  # noqa: E731
    bracketed = lambda k: opt.root_scalar(residual, args=(k, c, s), bracket=[0.0, 2.0],  # noqa: E731
                                          xtol=1e-15).root
    for solver in (crossing, found, bracketed):
        for transform, value in expected.items():
            assert_same(transform(solver)(k), value)


def test_a_root_where_the_derivative_in_x_is_zero_is_refused_by_both():
    def cube(n):               # (x - k)**3 = 0 at x = k, where dF/dx = 0
        def solve(tree):
            return np.full(n, float(tree[0]))

        def f(x, k):
            return (x - k) ** 3 if n == 1 else cr.concatenate([(x[:1] - k) ** 3, x[1:] - k])
        return lambda k: implicit_solution(f, solve, (k,), "cube", at=np.zeros(n))[0]

    assert float(cube(1)(2.0)) == 2.0
    for n in (1, 2):
        with pytest.raises(np.linalg.LinAlgError):
            cr.grad(cube(n))(2.0)
    with pytest.raises(np.linalg.LinAlgError, match="cube: the function's derivative in "
                                                    "x is 0 at the solution"):
        cr.jacfwd(cube(1))(2.0)

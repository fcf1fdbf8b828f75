"""cr.jit of loops whose carry is a Tensor, and of odeint, against the same code run
eagerly (itself checked against JAX and finite differences in test_control.py and
test_scipy_integrate.py)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.scipy.integrate import odeint


def _close(ours, eager):
    for a, b in zip(cr.tree_flatten(ours)[0], cr.tree_flatten(eager)[0]):
        np.testing.assert_allclose(np.asarray(getattr(a, "data", a)),
                                   np.asarray(getattr(b, "data", b)), rtol=1e-12,
                                   atol=1e-12)


def _fill(x):
    """The issue's case: a carry made by cr.zeros, written with .at in the body."""
    return cr.fori_loop(0, 3, lambda i, c: c.at[i].set(x[i] * 2.0 + c[i - 1]), cr.zeros(3))


@pytest.mark.parametrize("f", [
    _fill,
    lambda x: cr.sum(_fill(x) ** 2),
    lambda x: cr.scan(lambda c, xi: (c.at[0].add(xi), c.sum()), cr.zeros(2), x)[1],
    lambda x: cr.fori_loop(0, 2, lambda i, c: (c[0].at[1].set(x[i]), c[1] * 2.0),
                           (cr.zeros(2), cr.ones(1)))[0],
], ids=["fori_loop", "fori_loop then sum", "scan", "pytree carry"])
def test_a_loop_whose_carry_is_a_tensor_gives_the_body_a_tensor_under_jit(f):
    rng = np.random.default_rng(0)
    jitted = cr.jit(f)
    for _ in range(3):
        x = rng.standard_normal(3)
        _close(jitted(x), f(x))


def test_a_loop_whose_carry_is_a_tensor_under_grad_and_jit():
    loss = lambda x: cr.sum(_fill(x) ** 2)  # noqa: E731
    x = np.random.default_rng(1).standard_normal(3)
    _close(cr.jit(cr.grad(loss))(x), cr.grad(loss)(x))
    carry_of_x = lambda x: cr.sum(cr.fori_loop(  # noqa: E731
        0, 3, lambda i, c: c.at[i].set(c[i] * x), cr.zeros(3) + x))
    _close(cr.jit(cr.grad(carry_of_x))(1.5), cr.grad(carry_of_x)(1.5))


def _decay(y0, k, t):
    return odeint(lambda y, t, k: -k * y * cr.cos(t), y0, t, k)


def test_odeint_under_jit_gives_the_eager_solution():
    t = np.linspace(0.0, 2.0, 6)
    jitted = cr.jit(_decay)
    for y0, k, times in (([1.0, 2.0], 0.7, t), ([3.0, -1.0], 0.2, t), ([1.0, 2.0], 1.5, t * 3)):
        y0 = np.array(y0)
        _close(jitted(y0, k, times), _decay(y0, k, times))


def test_odeint_under_jit_differentiates_as_eagerly():
    t = np.linspace(0.0, 1.0, 4)
    loss = lambda y0, k, t: cr.sum(_decay(y0, k, t) ** 2)  # noqa: E731
    grads = cr.grad(loss, argnums=(0, 1, 2))
    jitted = cr.jit(grads)
    for y0, k in (([1.0, 2.0], 0.7), ([0.5, -2.0], 0.3)):
        _close(jitted(np.array(y0), k, t), grads(np.array(y0), k, t))
    tangent = lambda k: cr.jvp(lambda k: _decay(np.ones(2), k, t), (k,), (1.0,))[1]  # noqa
    _close(cr.jit(tangent)(0.4), tangent(0.4))


def test_odeint_under_jit_checks_each_calls_times():
    jitted = cr.jit(_decay)
    jitted(np.ones(2), 0.5, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"odeint: t must be increasing, but t\[1\]=-1.0"):
        jitted(np.ones(2), 0.5, np.array([0.0, -1.0]))

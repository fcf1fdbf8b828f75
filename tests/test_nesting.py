"""Nested transforms whose inner function closes over the outer variable, against JAX
(float64): the inner transform's result stays differentiable by the outer one.

Each case is one program written twice, once with chainrule and once with jax.numpy,
and the two must agree to 1e-12.
"""

import numpy as np
import pytest

import chainrule as cr

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

A = np.array([1.0, 2.0])


def both(make):
    """(chainrule's number, JAX's) for a program given as make(grad, vjp, sum)."""
    ours = make(cr.grad, cr.vjp, cr.sum)
    theirs = make(jax.grad, jax.vjp, jnp.sum)
    return np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)


CASES = {
    "x * grad(y -> x y)(2)": lambda grad, vjp, sum: grad(
        lambda x: x * grad(lambda y: x * y)(2.0))(1.0),
    "grad(y -> x y)(2)": lambda grad, vjp, sum: grad(
        lambda x: grad(lambda y: x * y)(2.0))(1.0),
    "x * grad(y -> x + y)(1)": lambda grad, vjp, sum: grad(
        lambda x: x * grad(lambda y: x + y)(1.0))(1.0),
    "arrays: sum(x * grad(sum(x y)))": lambda grad, vjp, sum: grad(
        lambda x: sum(x * grad(lambda y: sum(x * y))(A)))(A),
    "arrays: sum(grad(sum(sin(x y))))": lambda grad, vjp, sum: grad(
        lambda x: sum(grad(lambda y: sum(x * y * y))(A * 3.0)))(A),
    "three levels": lambda grad, vjp, sum: grad(
        lambda x: grad(lambda y: x * y * grad(lambda z: x * y * z * z)(3.0))(2.0))(1.5),
    "vjp inside grad": lambda grad, vjp, sum: grad(
        lambda x: vjp(lambda y: x * y * y, 2.0)[1](1.0)[0])(1.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_inner_transform_closing_over_the_outer_variable_matches_jax(name):
    ours, theirs = both(CASES[name])
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_a_vjp_with_an_output_that_is_also_the_input_sums_both_paths():
    """vjp of (v + 0, v): the cotangent of the second output reaches v directly."""
    ones = np.ones(2)
    ours = cr.vjp(lambda v: (v + 0.0, v), A)[1]((ones, ones))[0]
    theirs = jax.vjp(lambda v: (v + 0.0, v), A)[1]((ones, ones))[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)


@pytest.mark.parametrize("program, point, expected", [
    ("jvp(grad(max))", lambda: cr.jvp(cr.grad(cr.max), (3.5,), (1.0,)), (1.0, 0.0)),
    ("grad(jvp(abs))", lambda: cr.grad(lambda x: cr.jvp(cr.abs, (x,), (1.0,))[1])(1.1), 0.0),
])
def test_kinks_under_nested_transforms(program, point, expected):
    np.testing.assert_allclose(np.asarray(point(), dtype=float), expected)

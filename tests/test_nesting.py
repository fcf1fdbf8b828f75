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


# ---------------------------------------------------------------------------------------
# What a transform refuses, and what it leaves behind
# ---------------------------------------------------------------------------------------

TRANSFORMS = {
    "grad": lambda f: cr.grad(f)(1.0),
    "value_and_grad": lambda f: cr.value_and_grad(f)(1.0),
    "vjp": lambda f: cr.vjp(f, 1.0),
    "jvp": lambda f: cr.jvp(f, (1.0,), (1.0,)),
    "jacrev": lambda f: cr.jacrev(f)(np.ones(2)),
    "jacfwd": lambda f: cr.jacfwd(f)(np.ones(2)),
    "hessian": lambda f: cr.hessian(f)(np.ones(2)),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("returned, words", [(None, "a missing `return`"),
                                             ("text", "str"), (object(), "object")])
def test_a_function_that_returns_no_number_is_a_type_error(transform, returned, words):
    with pytest.raises(TypeError, match=words):
        TRANSFORMS[transform](lambda x: returned)


def test_an_argument_named_twice_in_argnums_is_refused_as_jax_does():
    with pytest.raises(ValueError, match=r"argnums \(0, 0\) names an argument twice"):
        cr.grad(lambda x, y: x * x * y, argnums=(0, 0))(3.0, 2.0)


def test_values_inside_a_numpy_array_are_refused_not_returned():
    """A float times an array on the scalar engine would be an object array of Values."""
    with pytest.raises(TypeError, match="array of Python objects"):
        cr.jacobian(lambda x: x * np.array([1.0, 2.0]))(2.0)


@pytest.mark.parametrize("call", [
    lambda: cr.grad(lambda x: cr.sum(cr.sin(x) * x))(np.ones(3)),
    lambda: cr.grad(lambda x: x * x)(2.0),
    lambda: cr.hessian(lambda x: cr.sum(x ** 3))(np.ones(3)),
    lambda: cr.vjp(lambda x: x * 2, np.ones(2))[1](np.ones(2)),
    lambda: cr.jvp(lambda x: x * 2, (np.ones(2),), (np.ones(2),)),
    lambda: cr.jacrev(lambda x: x * 2)(np.ones(2)),
    lambda: cr.grad(lambda x: x * cr.grad(lambda y: x * y)(2.0))(1.0),
], ids=["grad", "grad-float", "hessian", "vjp", "jvp", "jacrev", "nested"])
def test_a_transform_leaves_no_reference_cycles(call):
    import gc
    call()  # the first call may fill caches
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        call()
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_the_nesting_depth_belongs_to_each_thread():
    """A transform running in one thread does not make another thread's transform nested
    (which would change what it returns)."""
    import threading
    started, release, seen = threading.Event(), threading.Event(), []

    def outer(x):
        started.set()
        release.wait(5)
        return x * x

    worker = threading.Thread(target=lambda: seen.append(cr.grad(outer)(3.0)))
    worker.start()
    started.wait(5)
    assert type(cr.grad(lambda x: x * x)(2.0)) is float  # not a graph node of a nesting
    release.set()
    worker.join(5)
    assert seen == [6.0]

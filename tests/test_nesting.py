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

# JAX's side of each comparison runs under jax.jit: one XLA compile for the whole
# program, where eager JAX compiles each operation on its own (most of the time here).


def both(make):
    """(chainrule's number, JAX's) for a program given as make(grad, vjp, sum)."""
    ours = make(cr.grad, cr.vjp, cr.sum)
    theirs = jax.jit(lambda: make(jax.grad, jax.vjp, jnp.sum))()
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
    theirs = jax.jit(lambda a: jax.vjp(lambda v: (v + 0.0, v), a)[1]((ones, ones))[0])(A)
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


def test_a_float_follows_the_arrays_it_meets():
    ours = cr.jacobian(lambda x: x * np.array([1.0, 2.0]))(2.0)
    theirs = jax.jit(jax.jacobian(lambda x: x * jnp.array([1.0, 2.0])))(2.0)
    np.testing.assert_array_equal(ours, np.asarray(theirs))


def test_values_inside_a_numpy_array_are_refused_not_returned():
    with pytest.raises(TypeError, match=r"np.asarray\(\) of a value a transform is "
                                        r"differentiating"):
        cr.jacobian(lambda v: np.array([v, 2 * v]))(cr.Value(1.0))
    with pytest.raises(TypeError, match="array of Python objects"):
        cr.jacobian(lambda v: np.array([cr.Value(1.0), cr.Value(2.0)]))(1.0)


@pytest.mark.slow  # (a full garbage collection per call)
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


# ---------------------------------------------------------------------------------------
# Edges: constants, one-element statistics, kinks at second order, complex numbers,
# a user's tensor closed over, SciPy's operators inside a transform
# ---------------------------------------------------------------------------------------

def test_the_jacobian_of_a_constant_has_the_output_and_input_axes():
    np.testing.assert_array_equal(cr.jacrev(lambda x: np.ones(4))(np.ones(3)),
                                  np.zeros((4, 3)))
    np.testing.assert_array_equal(cr.jacfwd(lambda x: np.ones(4))(np.ones(3)),
                                  np.zeros((4, 3)))


@pytest.mark.parametrize("f, jf", [
    (lambda x: cr.sum(2 * x), lambda x: jnp.sum(2 * x)),
    (lambda x: cr.sum(cr.relu(x)), lambda x: jnp.sum(jax.nn.relu(x))),
], ids=["linear", "relu"])
def test_the_hessian_of_a_function_with_a_constant_gradient_is_zero(f, jf):
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(cr.hessian(f)(x), np.asarray(jax.jit(jax.hessian(jf))(x)))


@pytest.mark.parametrize("stat", ["std", "var"])
def test_the_spread_of_one_entry_is_constant_so_its_gradient_is_zero(stat):
    """PyTorch's and autograd's answer (JAX gives nan for std there)."""
    assert cr.grad(lambda x: getattr(cr, stat)(x))(np.array([2.0])).tolist() == [0.0]


@pytest.mark.parametrize("name, f", [
    ("maximum", lambda m: lambda x: m.maximum(x, 1.0) * x * x),
    ("minimum", lambda m: lambda x: m.minimum(x, 1.0) * x * x),
    ("clip", lambda m: lambda x: m.clip(x, 0.0, 1.0) * x * x),
    ("abs", lambda m: lambda x: m.abs(x) * x * x),
])
def test_second_derivatives_through_kinks_on_floats_match_jax(name, f):
    second = jax.jit(jax.grad(jax.grad(f(jnp))))
    for x in (0.5, 1.5, -0.5):
        ours = cr.grad(cr.grad(f(cr)))(x)
        theirs = second(x)
        assert ours == pytest.approx(float(theirs), rel=1e-12), x


def test_complex_numbers_follow_jaxs_rules_for_what_grad_accepts():
    """grad needs a real output (JAX's refusal, with the way around); holomorphic=True
    differentiates a holomorphic function; a complex tensor can require grad."""
    with pytest.raises(TypeError, match="requires real-valued outputs.*holomorphic=True"):
        cr.grad(lambda x: x ** 2)(1 + 2j)
    assert cr.grad(lambda x: x ** 2, holomorphic=True)(1 + 2j) == \
        complex(jax.jit(jax.grad(lambda x: x ** 2, holomorphic=True))(1 + 2j))
    np.testing.assert_allclose(cr.grad(lambda x: cr.sum(cr.abs(x * x)))(np.array([1 + 2j])),
                               jax.jit(jax.grad(lambda x: jnp.sum(jnp.abs(x * x))))(
                                   jnp.array([1 + 2j])), rtol=1e-14)
    assert cr.tensor([1 + 2j], requires_grad=True).requires_grad
    assert cr.norm(np.array([3j, 4.0])) == pytest.approx(5.0)  # a norm is real


def test_a_gradient_closing_over_a_users_tensor_stays_in_its_graph():
    """d/dw sum(w * grad_x sum(w x^2)) = d/dw sum(2 w^2 x) = 4 w x (torch.func, JAX)."""
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    x0 = np.array([1.0, 3.0])
    cr.sum(w * cr.grad(lambda x: cr.sum(w * x * x))(x0)).backward()
    theirs = jax.jit(jax.grad(lambda w: jnp.sum(w * jax.grad(lambda x: jnp.sum(w * x * x))(x0))))(
        np.array([1.0, 2.0]))
    np.testing.assert_allclose(w.grad, np.asarray(theirs), rtol=1e-14)


@pytest.mark.parametrize("make, theirs", [
    (lambda a: cr.linear_operator(lambda x: a * x, np.ones(2)).matvec(np.ones(2)),
     lambda a: jax.jvp(lambda x: a * x, (jnp.ones(2),), (jnp.ones(2),))[1]),
    (lambda a: cr.hessian_operator(lambda x: cr.sum(a * x ** 3), np.ones(2)).matvec(np.ones(2)),
     lambda a: jax.jvp(jax.grad(lambda x: jnp.sum(a * x ** 3)), (jnp.ones(2),),
                       (jnp.ones(2),))[1]),
], ids=["linear_operator", "hessian_operator"])
def test_scipy_operators_inside_a_transform_stay_differentiable(make, theirs):
    """(tests/test_operators.py has the rest: every transform, SciPy's refusal.)"""
    pytest.importorskip("scipy")
    ours = cr.grad(lambda a: cr.sum(make(a)))(np.array(2.0))
    np.testing.assert_allclose(ours, jax.jit(jax.grad(lambda a: jnp.sum(theirs(a))))(2.0),
                               rtol=1e-12)


# ---------------------------------------------------------------------------------------
# Differentiating a vjp function with respect to its cotangent (it is linear there)
# ---------------------------------------------------------------------------------------

def pulled(vjp, sin):
    """g(x, v) = v * 3 cos(x): the VJP of 3 sin at x, applied to the cotangent v."""
    return lambda x, v: vjp(lambda y: 3 * sin(y), x)[1](v)[0]


@pytest.mark.parametrize("point, direction", [
    ((0.5, 0.25), (0.0, 1.0)),                     # the cotangent moves
    ((0.5, 0.25), (1.0, 0.0)),                     # the point moves
    ((0.5, 0.25), (0.7, -2.0)),                    # both
    ((np.array([0.5]), np.array([0.25])), (np.array([0.3]), np.array([1.0]))),
], ids=["cotangent", "point", "both", "one-element arrays"])
def test_jvp_of_a_vjp_function_matches_jax(point, direction):
    ours = cr.jvp(pulled(cr.vjp, cr.sin), point, direction)
    theirs = jax.jit(lambda p, d: jax.jvp(pulled(jax.vjp, jnp.sin), p, d))(point, direction)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b), rtol=1e-12)


def test_jacobians_of_a_vjp_function_in_its_cotangent_match_jax():
    x, v = np.array([0.5, -1.0, 2.0]), np.array([0.25, 1.5, -0.5])
    f = lambda vjp, sin: lambda v: vjp(lambda y: sin(y) * y[::-1], x)[1](v)[0]
    for ours, theirs in [(cr.jacfwd, jax.jacfwd), (cr.jacrev, jax.jacrev)]:
        np.testing.assert_allclose(ours(f(cr.vjp, cr.sin))(v),
                                   np.asarray(jax.jit(theirs(f(jax.vjp, jnp.sin)))(v)),
                                   rtol=1e-12)
    np.testing.assert_allclose(cr.grad(lambda v: cr.sum(f(cr.vjp, cr.sin)(v)))(v),
                               np.asarray(jax.jit(jax.grad(
                                   lambda v: jnp.sum(f(jax.vjp, jnp.sin)(v))))(v)),
                               rtol=1e-12)


# ---------------------------------------------------------------------------------------
# Results that depend on an enclosing transform's variable stay in its graph, whichever
# transform made them (found by the fuzzer, tests/test_fuzz.py)
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, program", [
    ("a vjp function built outside, differentiated in its cotangent",
     lambda grad, vjp, jvp: grad(lambda c: vjp(lambda x: x * x, 3.0)[1](c)[0])(1.0)),
    ("jvp at a constant point whose body closes over the outer variable",
     lambda grad, vjp, jvp: grad(lambda x: jvp(lambda y: x * y, (2.0,), (1.0,))[1])(3.0)),
    ("grad inside jvp inside grad",
     lambda grad, vjp, jvp: grad(lambda x: jvp(
         lambda y: grad(lambda z: y * z * z)(1.0), (x,), (1.0,))[0])(3.0)),
    ("jvp's tangent of a closure, under grad",
     lambda grad, vjp, jvp: grad(lambda x: jvp(
         lambda y: grad(lambda z: y * z * z)(1.0), (x,), (1.0,))[1])(3.0)),
])
def test_results_depending_on_an_outer_variable_are_differentiated_as_jax_does(name, program):
    ours = program(cr.grad, cr.vjp, cr.jvp)
    theirs = jax.jit(lambda: program(jax.grad, jax.vjp, jax.jvp))()
    assert type(ours) is float
    assert ours == pytest.approx(float(theirs), rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------------------------------
# Every pairing: each inner transform, closing over the outer variable, under each outer
# transform, at each kind of point. One program, written for both libraries (``lib`` is
# chainrule, or JAX with jax.numpy's functions), must give JAX's numbers.
# ---------------------------------------------------------------------------------------

def _jax_lib():
    import types
    return types.SimpleNamespace(**{n: getattr(jax, n) for n in (
        "grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian")},
        sin=jnp.sin, sum=jnp.sum, tanh=jnp.tanh, maximum=jnp.maximum)


def _body(lib, x):
    """A function of y that closes over x (elementwise, x and y of one shape)."""
    return lambda y: lib.sin(x * y) + x * y ** 2 + lib.maximum(y, 0.3) * lib.tanh(x)


INNER = {
    "grad": lambda lib, x, y: lib.grad(lambda y: lib.sum(_body(lib, x)(y)))(y),
    "value_and_grad": lambda lib, x, y: lib.value_and_grad(
        lambda y: lib.sum(_body(lib, x)(y)))(y),
    "vjp": lambda lib, x, y: lib.vjp(_body(lib, x), y)[1](x * y)[0],
    "jvp": lambda lib, x, y: lib.jvp(_body(lib, x), (y,), (x + y,)),
    "jacrev": lambda lib, x, y: lib.jacrev(_body(lib, x))(y),
    "jacfwd": lambda lib, x, y: lib.jacfwd(_body(lib, x))(y),
    "hessian": lambda lib, x, y: lib.hessian(lambda y: lib.sum(_body(lib, x)(y)))(y),
}


def _total(lib, tree):
    return sum(lib.sum(leaf) for leaf in jax.tree_util.tree_leaves(tree)) if lib is not cr \
        else sum(lib.sum(leaf) for leaf in cr.tree_flatten(tree)[0])


def _scalar_program(lib, inner):
    return lambda x: _total(lib, INNER[inner](lib, x, x * 0.5 + 0.25))


OUTER = {
    "grad": lambda lib, f, x: lib.grad(f)(x),
    "jacrev": lambda lib, f, x: lib.jacrev(f)(x),
    "jacfwd": lambda lib, f, x: lib.jacfwd(f)(x),
    "hessian": lambda lib, f, x: lib.hessian(f)(x),
    "jvp": lambda lib, f, x: lib.jvp(f, (x,), (x * 0 + 0.75,)),
    "vjp": lambda lib, f, x: lib.vjp(f, x)[1](1.5),
}

POINTS = {
    "float": (0.7, 0.7),
    "0-d array": (np.array(0.7), np.array(0.7)),
    "1-d array": (np.array([0.7, -0.4, 1.3]), np.array([0.7, -0.4, 1.3])),
    "Tensor": (cr.tensor([0.7, -0.4]), np.array([0.7, -0.4])),
}


@pytest.mark.slow  # (168 programs, most of the time in JAX's tracing)
@pytest.mark.parametrize("point", sorted(POINTS))
@pytest.mark.parametrize("outer", sorted(OUTER))
@pytest.mark.parametrize("inner", sorted(INNER))
def test_every_inner_transform_under_every_outer_one_matches_jax(inner, outer, point):
    ours_at, theirs_at = POINTS[point]
    ours = OUTER[outer](cr, _scalar_program(cr, inner), ours_at)
    theirs = jax.jit(lambda x: OUTER[outer](_jax_lib(), _scalar_program(_jax_lib(), inner), x))(
        theirs_at)
    for a, b in zip(cr.tree_flatten(ours)[0], jax.tree_util.tree_leaves(theirs)):
        a = a.data if isinstance(a, cr.Tensor) else a
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b), rtol=1e-12,
                                   atol=1e-12)


def test_a_traced_value_cannot_become_a_plain_number():
    """float(), .item() and np.asarray() of a traced value would drop its derivative."""
    for leave in (float, lambda x: x.item(), np.asarray):
        with pytest.raises(TypeError, match="no derivative"):
            cr.grad(lambda x: leave(x) * x)(2.0)
        with pytest.raises(TypeError, match="no derivative"):
            cr.jvp(lambda x: leave(x) * x, (2.0,), (1.0,))
    assert cr.grad(lambda x: x * x if x > 0 else -x)(2.0) == 4.0  # comparisons are fine


def test_the_refusal_names_the_numpy_function_the_user_called():
    """A NumPy function that converts its input inside is named, not its np.asarray."""
    with pytest.raises(TypeError, match=r"np\.vectorize\.__call__\(\) .*no derivative"):
        cr.grad(lambda x: np.vectorize(lambda a: a * a)(x))(2.0)
    with pytest.raises(TypeError, match=r"^np\.asarray\(\) of a value"):
        cr.grad(lambda x: np.asarray(x))(2.0)

"""cr.custom_jvp and cr.custom_vjp against JAX's, in float64.

The examples are those of JAX's notebook "Custom derivative rules for JAX-transformable
Python functions", each written once as a function of the library (its decorators and
its numpy namespace), so the very same source runs under chainrule and under JAX, and
every number is compared: values, gradients, second derivatives, and the examples
under jit and vmap where JAX allows them.
"""

import functools
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.transforms import custom_jvp, custom_vjp
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(44)
CR = dict(custom_jvp=custom_jvp, custom_vjp=custom_vjp, np=cnp, grad=cr.grad, jvp=cr.jvp,
          vjp=cr.vjp, vmap=cr.vmap, jit=cr.jit, jacfwd=cr.jacfwd, jacrev=cr.jacrev,
          hessian=cr.hessian, while_loop=cr.while_loop)
JAX = dict(custom_jvp=jax.custom_jvp, custom_vjp=jax.custom_vjp, np=jnp, grad=jax.grad,
           jvp=jax.jvp, vjp=jax.vjp, vmap=jax.vmap, jit=jax.jit, jacfwd=jax.jacfwd,
           jacrev=jax.jacrev, hessian=jax.hessian, while_loop=jax.lax.while_loop)
LIBRARIES = [CR, JAX]


def same(ours, theirs, rtol=1e-12):
    """Two pytrees of numbers, equal leaf by leaf (JAX's arrays as NumPy's)."""
    ours_leaves, ours_def = jax.tree_util.tree_flatten(ours)
    theirs_leaves, theirs_def = jax.tree_util.tree_flatten(theirs)
    assert len(ours_leaves) == len(theirs_leaves), (ours, theirs)
    for a, b in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-14)


def both(make, use):
    """``use(library, make(library))`` under chainrule and under JAX, compared."""
    ours, theirs = (use(lib, make(lib)) for lib in LIBRARIES)
    same(ours, theirs)
    return ours


# ---------------------------------------------------------------------------------------
# custom_jvp: numerical stability (log1pexp)
# ---------------------------------------------------------------------------------------

def make_log1pexp(lib):
    np_ = lib["np"]

    @lib["custom_jvp"]
    def log1pexp(x):
        return np_.log(1.0 + np_.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = log1pexp(x)
        return ans, x_dot * (1.0 - 1.0 / (1.0 + np_.exp(x)))

    return log1pexp


def test_log1pexp_has_a_finite_gradient_where_the_plain_formula_gives_nan():
    # the notebook's float32 overflows at 100; float64 at 1000: inf / inf
    plain = lambda x: cnp.log(1.0 + cnp.exp(x))
    with np.errstate(all="ignore"):
        assert np.isnan(cr.grad(plain)(1000.0))
        assert both(make_log1pexp, lambda lib, f: lib["grad"](f)(1000.0)) == 1.0
    assert both(make_log1pexp, lambda lib, f: lib["grad"](f)(100.0)) == 1.0


@pytest.mark.slow  # (JAX's compiles, mostly)
def test_log1pexp_under_every_transform_and_their_nestings():
    x = RNG.normal(size=4) * 3
    x[0] = 100.0
    for use in [lambda lib, f: f(3.0),
                lambda lib, f: lib["jvp"](f, (3.0,), (2.0,)),
                lambda lib, f: lib["grad"](lib["grad"](f))(3.0),
                lambda lib, f: lib["grad"](lib["grad"](lib["grad"](f)))(-1.5),
                lambda lib, f: lib["jacfwd"](lib["grad"](f))(0.7),
                lambda lib, f: lib["jacfwd"](f)(x),
                lambda lib, f: lib["jacrev"](f)(x),
                lambda lib, f: lib["hessian"](lambda v: lib["np"].sum(f(v)))(x),
                lambda lib, f: lib["vmap"](lib["grad"](f))(x),
                lambda lib, f: lib["grad"](lambda v: lib["np"].sum(lib["vmap"](f)(v)))(x),
                lambda lib, f: lib["jit"](lib["grad"](f))(3.0),
                lambda lib, f: lib["jit"](lib["vmap"](lib["grad"](lib["grad"](f))))(x),
                lambda lib, f: lib["vmap"](lib["jit"](lib["grad"](f)))(x),
                lambda lib, f: lib["grad"](lib["jit"](f))(2.0)]:
        both(make_log1pexp, use)


# ---------------------------------------------------------------------------------------
# custom_jvp: a convention at a point where the formula is 0/0 (x / (1 + sqrt(x)) at 0)
# ---------------------------------------------------------------------------------------

def make_f_at_zero(lib, with_defjvps=False):
    np_ = lib["np"]

    @lib["custom_jvp"]
    def f(x):
        return x / (1 + np_.sqrt(x))

    def slope(x):
        return (np_.sqrt(x) + 2) / (2 * (np_.sqrt(x) + 1) ** 2)

    if with_defjvps:
        f.defjvps(lambda x_dot, primal_out, x: slope(x) * x_dot)
    else:
        @f.defjvp
        def f_jvp(primals, tangents):
            x, = primals
            x_dot, = tangents
            return f(x), slope(x) * x_dot
    return f


@pytest.mark.parametrize("with_defjvps", [False, True])
def test_x_over_one_plus_sqrt_x_has_derivative_one_at_zero(with_defjvps):
    make = functools.partial(make_f_at_zero, with_defjvps=with_defjvps)
    assert both(make, lambda lib, f: lib["grad"](f)(0.0)) == 1.0
    both(make, lambda lib, f: lib["jit"](lib["grad"](f))(0.0))
    both(make, lambda lib, f: lib["jvp"](f, (0.0,), (1.0,)))
    both(make, lambda lib, f: lib["vmap"](lib["grad"](f))(np.array([0.0, 1.0, 4.0])))
    both(make, lambda lib, f: lib["grad"](lib["grad"](f))(4.0))


def make_two_argument_jvp(lib, with_defjvps=False):
    np_ = lib["np"]

    @lib["custom_jvp"]
    def f(x, y):
        return np_.sin(x) * y

    if with_defjvps:
        f.defjvps(lambda x_dot, primal_out, x, y: np_.cos(x) * x_dot * y,
                  lambda y_dot, primal_out, x, y: np_.sin(x) * y_dot)
    else:
        @f.defjvp
        def f_jvp(primals, tangents):
            x, y = primals
            x_dot, y_dot = tangents
            return f(x, y), np_.cos(x) * x_dot * y + np_.sin(x) * y_dot
    return f


@pytest.mark.slow  # (JAX's compiles, mostly)
@pytest.mark.parametrize("with_defjvps", [False, True])
def test_a_rule_of_two_arguments_in_both_modes_batched_and_jitted(with_defjvps):
    make = functools.partial(make_two_argument_jvp, with_defjvps=with_defjvps)
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    both(make, lambda lib, f: lib["grad"](f, argnums=(0, 1))(2.0, 3.0))
    both(make, lambda lib, f: lib["jvp"](f, (2.0, 3.0), (1.0, -1.0)))
    both(make, lambda lib, f: lib["jacfwd"](f, argnums=(0, 1))(x, y))
    both(make, lambda lib, f: lib["jacrev"](f, argnums=(0, 1))(x, 1.5))
    both(make, lambda lib, f: lib["vmap"](lib["grad"](f, argnums=(0, 1)), in_axes=(0, None))(
        x, 1.5))
    both(make, lambda lib, f: lib["jit"](lib["hessian"](lambda v: lib["np"].sum(
        f(v, v ** 2))))(x))


def test_which_of_f_and_its_rule_run_is_what_jax_runs():
    calls = []

    def make(lib):
        np_ = lib["np"]

        @lib["custom_jvp"]
        def f(x):
            calls.append("f")
            return np_.sin(x)

        @f.defjvp
        def f_jvp(primals, tangents):
            calls.append("f_jvp")
            x, = primals
            t, = tangents
            return f(x), np_.cos(x) * t
        return f

    for use, expected in [(lambda lib, f: f(3.0), ["f"]),
                          (lambda lib, f: lib["vmap"](f)(np.arange(3.0)), ["f"]),
                          (lambda lib, f: lib["jit"](f)(3.0), ["f"]),
                          (lambda lib, f: lib["jvp"](f, (3.0,), (1.0,)), ["f_jvp", "f"]),
                          (lambda lib, f: lib["grad"](f)(3.0), ["f_jvp", "f"])]:
        for lib in LIBRARIES:
            calls.clear()
            use(lib, make(lib))
            assert calls == expected


def test_python_control_flow_in_the_rule_picks_the_derivative():
    def make(lib):
        @lib["custom_jvp"]
        def f(x):
            return x

        @f.defjvp
        def f_jvp(primals, tangents):
            x, = primals
            x_dot, = tangents
            return (f(x), x_dot) if x > 0 else (f(x), 2 * x_dot)
        return f
    assert both(make, lambda lib, f: (lib["grad"](f)(1.0), lib["grad"](f)(-1.0))) == (1.0, 2.0)


@pytest.mark.slow  # (JAX's compiles, mostly)
def test_the_rule_itself_is_differentiated_for_higher_orders():
    def make(lib):
        np_ = lib["np"]

        @lib["custom_jvp"]
        def f(x):
            return np_.sin(x)

        @f.defjvp
        def f_jvp(primals, tangents):
            x, = primals
            return f(x), 2.0 * np_.cos(x) * tangents[0]   # a "wrong" rule, on purpose
        return f
    # d/dx 2 cos x = -2 sin x: the rule's own derivative, not sin's second
    both(make, lambda lib, f: lib["grad"](lib["grad"](f))(0.5))
    both(make, lambda lib, f: lib["jacfwd"](lib["jacrev"](f))(0.5))
    both(make, lambda lib, f: lib["jacrev"](lib["jacfwd"](f))(0.5))


# ---------------------------------------------------------------------------------------
# custom_vjp: clip_gradient, the fixed point, debugging the backward pass
# ---------------------------------------------------------------------------------------

def make_clip_gradient(lib):
    np_ = lib["np"]

    @lib["custom_vjp"]
    def clip_gradient(lo, hi, x):
        return x

    def clip_gradient_fwd(lo, hi, x):
        return x, (lo, hi)

    def clip_gradient_bwd(res, g):
        lo, hi = res
        return (None, None, np_.clip(g, lo, hi))

    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

    def clip_sin(x):
        return np_.sin(clip_gradient(-0.75, 0.75, x))
    return clip_sin


@pytest.mark.slow  # (JAX's compiles, mostly)
def test_clip_gradient_clips_the_gradient_under_vmap_and_jit():
    t = np.linspace(0.0, 10.0, 50)
    g = both(make_clip_gradient, lambda lib, f: lib["vmap"](lib["grad"](f))(t))
    assert np.max(np.abs(g)) == 0.75
    both(make_clip_gradient, lambda lib, f: lib["jit"](lib["vmap"](lib["grad"](f)))(t))
    both(make_clip_gradient, lambda lib, f: lib["vmap"](lib["jit"](lib["grad"](f)))(t))
    both(make_clip_gradient, lambda lib, f: lib["jacrev"](f)(t[:5]))
    both(make_clip_gradient, lambda lib, f: lib["grad"](lambda v: lib["np"].sum(
        lib["vmap"](f)(v)))(t))
    both(make_clip_gradient, lambda lib, f: lib["vjp"](f, 2.0)[1](3.0))


def make_sin_times(lib):
    np_ = lib["np"]

    @lib["custom_vjp"]
    def f(x, y):
        return np_.sin(x) * y

    def f_fwd(x, y):
        return f(x, y), (np_.cos(x), np_.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    f.defvjp(f_fwd, f_bwd)
    return f


@pytest.mark.slow  # (JAX's compiles, mostly)
def test_second_derivatives_through_a_custom_vjp_differentiate_its_bwd():
    x = RNG.normal(size=3)
    both(make_sin_times, lambda lib, f: lib["grad"](lib["grad"](f), argnums=(0, 1))(0.4, 1.7))
    both(make_sin_times, lambda lib, f: lib["jacrev"](lib["jacrev"](f, argnums=(0, 1)))(x, x))
    both(make_sin_times, lambda lib, f: lib["vmap"](lib["grad"](lib["grad"](f)))(x, 2 * x))
    both(make_sin_times, lambda lib, f: lib["jit"](lib["grad"](lib["grad"](f, 1)))(0.4, 1.7))
    both(make_clip_gradient, lambda lib, f: lib["vmap"](lib["grad"](lib["grad"](f)))(x))


def make_fixed_point(lib):
    np_, vjp = lib["np"], lib["vjp"]

    @functools.partial(lib["custom_vjp"], nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return np_.abs(x_prev - x) > 1e-6

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)

        _, x_star = lib["while_loop"](cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star

    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = vjp(lambda a: f(a, x_star), a)
        a_bar, = vjp_a(fixed_point(functools.partial(rev_iter, f),
                                   (a, x_star, x_star_bar), x_star_bar))
        return a_bar, np_.zeros_like(x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = vjp(f, a, x_star)
        return x_star_bar + vjp_x(u)[1]

    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a):
        update = lambda a, x: 0.5 * (x + a / x)
        return fixed_point(update, a, a)
    return newton_sqrt


def test_the_fixed_point_is_differentiated_implicitly_as_in_jax():
    sqrt = both(make_fixed_point, lambda lib, f: f(2.0))
    assert sqrt == pytest.approx(np.sqrt(2.0), rel=1e-12)
    g = both(make_fixed_point, lambda lib, f: lib["grad"](f)(2.0))
    assert g == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-10)
    # the second derivative differentiates fixed_point_rev, itself a fixed point
    gg = both(make_fixed_point, lambda lib, f: lib["grad"](lib["grad"](f))(2.0))
    assert gg == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-6)
    both(make_fixed_point, lambda lib, f: lib["jit"](lib["grad"](f))(9.0))


def test_a_print_in_bwd_runs_once_per_backward_pass():
    calls = []

    def make(lib):
        @lib["custom_vjp"]
        def debug(x):
            return x

        def debug_fwd(x):
            return x, x

        def debug_bwd(x, g):
            calls.append(lib is CR)   # where JAX's notebook stops in pdb
            return (g,)

        debug.defvjp(debug_fwd, debug_bwd)
        return lambda x: lib["np"].sin(debug(lib["np"].sin(x)))

    both(make, lambda lib, f: lib["grad"](f)(1.0))
    assert calls == [True, False]
    calls.clear()
    both(make, lambda lib, f: lib["jacrev"](f)(np.ones(3)))  # a batch of cotangents,
    assert calls == [True, False]                          # one call (JAX: vmap of bwd)
    calls.clear()
    # the outer pass differentiates what the inner one computed with fwd and bwd (here
    # identities): it calls no bwd of its own, in JAX as here
    both(make, lambda lib, f: lib["grad"](lib["grad"](f))(1.0))
    assert calls == [True, False]


def test_forward_mode_through_a_custom_vjp_is_refused_as_in_jax():
    for lib in LIBRARIES:
        f, g = make_clip_gradient(lib), make_sin_times(lib)
        for transform in (lambda: lib["jvp"](f, (1.0,), (1.0,)),
                          lambda: lib["jacfwd"](f)(1.0),
                          lambda: lib["hessian"](g)(1.0, 2.0),   # forward over bwd's f
                          lambda: lib["jvp"](lib["grad"](g), (1.0, 2.0), (1.0, 0.0))):
            with pytest.raises(TypeError, match="can't apply forward-mode autodiff "
                                                "\\(jvp\\) to a custom_vjp function"):
                transform()


def test_forward_over_reverse_differentiates_fwd_where_it_calls_no_custom_function():
    # clip_gradient's fwd returns x itself: forward mode over its reverse pass meets
    # only fwd's operations and bwd's (JAX's hessian gives this number too)
    both(make_clip_gradient, lambda lib, f: lib["hessian"](f)(1.0))
    both(make_clip_gradient, lambda lib, f: lib["jacfwd"](lib["grad"](f))(0.2))


# ---------------------------------------------------------------------------------------
# nondiff_argnums: a function as an argument (the notebook's app)
# ---------------------------------------------------------------------------------------

def test_a_function_argument_in_nondiff_argnums_custom_vjp():
    def make(lib):
        @functools.partial(lib["custom_vjp"], nondiff_argnums=(0,))
        def app(f, x):
            return f(x)

        def app_fwd(f, x):
            return app(f, x), x

        def app_bwd(f, x, g):
            return (5 * g,)

        app.defvjp(app_fwd, app_bwd)
        return app
    cube = lambda x: x ** 3
    assert both(make, lambda lib, app: app(cube, 3.0)) == 27.0
    assert both(make, lambda lib, app: lib["grad"](app, 1)(cube, 3.0)) == 5.0
    both(make, lambda lib, app: lib["vmap"](lib["grad"](app, 1), in_axes=(None, 0))(
        cube, np.array([1.0, 2.0])))
    both(make, lambda lib, app: lib["jit"](lib["grad"](lambda x: app(cube, x) * x))(2.0))


def test_nondiff_argnames_names_the_same_positions():
    def make(lib):
        @functools.partial(lib["custom_vjp"], nondiff_argnames=("f",))
        def app(f, x):
            return f(x)
        app.defvjp(lambda f, x: (app(f, x), x), lambda f, x, g: (5 * g,))
        return app
    assert both(make, lambda lib, app: lib["grad"](app, 1)(lambda x: x ** 3, 3.0)) == 5.0
    with pytest.raises(ValueError, match="nondiff_argnames names \\['g'\\]"):
        custom_vjp(lambda f, x: f(x), nondiff_argnames=("g",))


def test_a_function_argument_in_nondiff_argnums_custom_jvp():
    def make(lib):
        @functools.partial(lib["custom_jvp"], nondiff_argnums=(0,))
        def app(f, x):
            return f(x)

        @app.defjvp
        def app_jvp(f, primals, tangents):
            x, = primals
            x_dot, = tangents
            return f(x), 2.0 * x_dot
        return app
    cube = lambda x: x ** 3
    assert both(make, lambda lib, app: lib["grad"](app, 1)(cube, 3.0)) == 2.0
    both(make, lambda lib, app: lib["jvp"](lambda x: app(cube, x), (3.0,), (1.5,)))
    both(make, lambda lib, app: lib["vmap"](lib["grad"](app, 1), in_axes=(None, 0))(
        cube, np.array([1.0, 2.0])))


def test_an_array_in_nondiff_argnums_of_a_custom_jvp_is_a_constant():
    def make(lib):
        np_ = lib["np"]

        @functools.partial(lib["custom_jvp"], nondiff_argnums=(1,))
        def scale(x, k):
            return x * k

        @scale.defjvp
        def scale_jvp(k, primals, tangents):
            return scale(primals[0], k), tangents[0] * k
        return lambda x: np_.sum(scale(x, x ** 2))
    x = RNG.normal(size=3)
    both(make, lambda lib, f: lib["grad"](f)(x))       # k = x**2 gets no derivative
    both(make, lambda lib, f: lib["vmap"](lib["grad"](f))(np.stack([x, 2 * x])))


# ---------------------------------------------------------------------------------------
# pytrees in and out
# ---------------------------------------------------------------------------------------

Point = namedtuple("Point", ["x", "y"])


def make_pytree_jvp(lib):
    np_ = lib["np"]

    @lib["custom_jvp"]
    def f(pt):
        x, y = pt.x, pt.y
        return {"a": x ** 2, "b": (np_.sin(x), np_.cos(y))}

    @f.defjvp
    def f_jvp(primals, tangents):
        pt, = primals
        pt_dot, = tangents
        ans = f(pt)
        ans_dot = {"a": 2 * pt.x * pt_dot.x,
                   "b": (np_.cos(pt.x) * pt_dot.x, -np_.sin(pt.y) * pt_dot.y)}
        return ans, ans_dot
    return f


def make_pytree_vjp(lib):
    np_ = lib["np"]

    @lib["custom_vjp"]
    def f(pt):
        x, y = pt.x, pt.y
        return {"a": x ** 2, "b": (np_.sin(x), np_.cos(y))}

    def f_fwd(pt):
        return f(pt), pt

    def f_bwd(pt, g):
        a_bar, (b0_bar, b1_bar) = g["a"], g["b"]
        x_bar = 2 * pt.x * a_bar + np_.cos(pt.x) * b0_bar
        y_bar = -np_.sin(pt.y) * b1_bar
        return (Point(x_bar, y_bar),)

    f.defvjp(f_fwd, f_bwd)
    return f


@pytest.mark.slow  # (JAX's compiles, mostly)
@pytest.mark.parametrize("make", [make_pytree_jvp, make_pytree_vjp])
def test_pytrees_in_and_out(make):
    def fun(lib, f):
        def scalar(pt):
            dct = f(pt)
            return dct["a"] + dct["b"][0] * dct["b"][1]
        return scalar
    pt = Point(1.0, 2.0)
    both(make, lambda lib, f: f(pt))
    grads = both(make, lambda lib, f: lib["grad"](fun(lib, f))(pt))
    assert isinstance(grads, Point)
    both(make, lambda lib, f: lib["jit"](lib["grad"](fun(lib, f)))(pt))
    points = Point(RNG.normal(size=3), RNG.normal(size=3))
    both(make, lambda lib, f: lib["vmap"](lib["grad"](fun(lib, f)))(points))
    both(make, lambda lib, f: lib["vmap"](f)(points))
    both(make, lambda lib, f: lib["grad"](lib["grad"](lambda x: fun(lib, f)(Point(x, x))))(0.3))
    if make is make_pytree_jvp:
        both(make, lambda lib, f: lib["jvp"](f, (pt,), (Point(1.0, -2.0),)))
        both(make, lambda lib, f: lib["hessian"](lambda v: fun(lib, f)(Point(v[0], v[1])))(
            np.array([0.4, -1.1])))


@pytest.mark.slow  # (JAX's compiles, mostly)
def test_the_bwd_may_answer_none_for_a_whole_argument_and_gives_arrays_of_its_shape():
    def make(lib):
        np_ = lib["np"]

        @lib["custom_vjp"]
        def f(w, x):
            return np_.tanh(w @ x)

        def fwd(w, x):
            out = f(w, x)
            return out, (w, x, out)

        def bwd(res, g):
            w, x, out = res
            gw = (g * (1 - out ** 2))[:, None] * x[None, :]
            return gw, None
        f.defvjp(fwd, bwd)
        return f
    w, x, xs = RNG.normal(size=(2, 3)), RNG.normal(size=3), RNG.normal(size=(4, 3))
    both(make, lambda lib, f: lib["grad"](lambda w, x: lib["np"].sum(f(w, x)),
                                          argnums=(0, 1))(w, x))
    both(make, lambda lib, f: lib["jacrev"](f)(w, x))
    both(make, lambda lib, f: lib["vmap"](lib["jacrev"](f), in_axes=(None, 0))(w, xs))
    both(make, lambda lib, f: lib["jacrev"](lib["vmap"](f, in_axes=(None, 0)))(w, xs))


# ---------------------------------------------------------------------------------------
# closures over traced values, and the engines outside the transforms
# ---------------------------------------------------------------------------------------

def test_a_custom_jvp_may_close_over_an_outer_transforms_value():
    def make(lib):
        np_ = lib["np"]

        def outer(y):
            @lib["custom_jvp"]
            def f(x):
                return np_.sin(x) * y

            @f.defjvp
            def f_jvp(primals, tangents):
                x, = primals
                return f(x), np_.cos(x) * y * tangents[0]
            return lib["grad"](f)(0.3) + f(0.5)
        return outer
    both(make, lambda lib, outer: lib["vmap"](outer)(np.array([1.0, 2.0])))
    # JAX 0.10 refuses a derivative with respect to the closed-over y (an
    # UnexpectedTracerError); here it goes through what f and its rule compute with y
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jax.grad(make(JAX))(1.5)
    assert cr.grad(make(CR))(1.5) == pytest.approx(np.cos(0.3) + np.sin(0.5), rel=1e-14)
    assert cr.jvp(make(CR), (1.5,), (2.0,))[1] == pytest.approx(
        2 * (np.cos(0.3) + np.sin(0.5)), rel=1e-14)


def test_a_custom_vjp_may_close_over_the_batch_of_the_vmap_it_runs_in():
    def make(lib):
        np_ = lib["np"]

        def g(x, y):
            @lib["custom_vjp"]
            def f(x):
                return np_.sin(x) * y        # y: the same vmap's batch, closed over
            f.defvjp(lambda x: (f(x), np_.cos(x)), lambda c, ct: (ct * c * y,))
            return f(x)
        return g
    xs, ys = RNG.normal(size=3), RNG.normal(size=3)
    both(make, lambda lib, g: lib["vmap"](g)(xs, ys))
    both(make, lambda lib, g: lib["vmap"](lib["grad"](g))(xs, ys))
    # JAX 0.10 refuses the gradient of the vmapped function (an UnexpectedTracerError)
    g = make(CR)
    np.testing.assert_allclose(cr.grad(lambda x: cnp.sum(cr.vmap(g)(x, ys)))(xs),
                               np.cos(xs) * ys, rtol=1e-14)


def test_a_closure_over_the_value_the_transform_differentiates_is_refused():
    """A custom function, or its rule, that closes over the very value the transform at
    hand differentiates (not an argument, not an outer transform's value): the rule gives
    derivatives for the arguments only, so the result would be wrong (a second
    derivative came out 0) or a tracer. Refused in one line, as JAX refuses each of
    these (an UnexpectedTracerError)."""
    def vjp_closes_in_function(k):
        @custom_vjp
        def g(x):
            return x * k
        g.defvjp(lambda x: (x * k, None), lambda res, ct: (ct * k,))
        return g(k)

    def vjp_closes_in_bwd(k):
        @custom_vjp
        def g(x):
            return x * 2.0
        g.defvjp(lambda x: (x * 2.0, None), lambda res, ct: (ct * k,))
        return g(k)

    def jvp_closes_in_function(k):
        @custom_jvp
        def g(x):
            return cnp.sin(x) * k
        g.defjvp(lambda p, t: (g(p[0]), cnp.cos(p[0]) * k * t[0]))
        return g(k)

    def jvp_closes_in_rule(k):
        @custom_jvp
        def g(x):
            return cnp.sin(x)
        g.defjvp(lambda p, t: (g(p[0]), cnp.cos(p[0]) * k * t[0]))
        return g(k)

    for f in (vjp_closes_in_function, vjp_closes_in_bwd, jvp_closes_in_function,
              jvp_closes_in_rule):
        derivatives = [cr.grad(f), cr.value_and_grad(f), cr.grad(cr.grad(f))]
        if f.__name__.startswith("jvp"):
            derivatives.append(lambda k, f=f: cr.jvp(f, (k,), (1.0,)))
        for derivative in derivatives:
            with pytest.raises(TypeError, match="closes over.*pass that value to the "
                                                "function as an argument"):
                derivative(0.5)
        x = cr.tensor(0.5, requires_grad=True)  # the tensor engine's graph likewise
        with pytest.raises(TypeError, match="closes over it"):
            f(x).backward()
        with pytest.raises(jax.errors.UnexpectedTracerError):
            jax.grad(_in_jax(f))(0.5)
    # an outer transform's value closed over, whose derivative is taken outside, is
    # differentiated through what the function computes with it (JAX refuses it)
    for kind in ("jvp", "vjp"):
        def inner_derivative(k, kind=kind):
            f = (custom_jvp if kind == "jvp" else custom_vjp)(lambda x: cnp.sin(x) * k)
            if kind == "jvp":
                f.defjvp(lambda p, t: (f(p[0]), cnp.cos(p[0]) * k * t[0]))
            else:
                f.defvjp(lambda x: (f(x), cnp.cos(x)), lambda c, ct: (ct * c * k,))
            return cr.grad(f)(k)                     # cos(k) k
        assert cr.grad(inner_derivative)(0.5) == pytest.approx(
            np.cos(0.5) - 0.5 * np.sin(0.5), rel=1e-14)
    # passed as an argument, the value is differentiated through the rule
    g = custom_vjp(lambda x, k: x * k)
    g.defvjp(lambda x, k: (x * k, (x, k)), lambda res, ct: (ct * res[1], ct * res[0]))
    assert cr.grad(lambda k: g(k, k))(0.5) == pytest.approx(1.0, rel=1e-15)


def _in_jax(f):
    """The same function written for JAX (its decorators and numpy)."""
    source = {"vjp_closes_in_function": (lambda k: _jax_custom(k, "vjp", True)),
              "vjp_closes_in_bwd": (lambda k: _jax_custom(k, "vjp", False)),
              "jvp_closes_in_function": (lambda k: _jax_custom(k, "jvp", True)),
              "jvp_closes_in_rule": (lambda k: _jax_custom(k, "jvp", False))}
    return source[f.__name__]


def _jax_custom(k, kind, in_function):
    if kind == "vjp":
        g = jax.custom_vjp(lambda x: x * (k if in_function else 2.0))
        g.defvjp(lambda x: (g(x), None), lambda res, ct: (ct * k,))
    else:
        g = jax.custom_jvp(lambda x: jnp.sin(x) * (k if in_function else 1.0))
        g.defjvp(lambda p, t: (g(p[0]), jnp.cos(p[0]) * k * t[0]))
    return g(k)


def test_tensor_backward_uses_the_rules_too():
    x = cr.tensor([0.5, 100.0], requires_grad=True)
    cr.sum(make_log1pexp(CR)(x)).backward()
    same(x.grad, jax.grad(lambda v: jnp.sum(make_log1pexp(JAX)(v)))(jnp.array([0.5, 100.0])))
    x = cr.tensor([0.5, 3.0], requires_grad=True)
    (make_clip_gradient(CR)(x) * 3.0).sum().backward()
    same(x.grad, jax.grad(lambda v: jnp.sum(3.0 * make_clip_gradient(JAX)(v)))(
        jnp.array([0.5, 3.0])))


def test_without_a_transform_the_function_runs_as_it_is():
    seen = []

    @custom_vjp
    def f(x):
        seen.append("f")
        return x * 2.0

    def fwd(x):
        seen.append("fwd")
        return f(x), None

    f.defvjp(fwd, lambda res, g: (2.0 * g,))
    assert f(1.5) == 3.0 and seen == ["f"]      # as JAX: fwd only when differentiating
    assert cr.grad(f)(1.5) == 2.0 and seen == ["f", "fwd", "f"]


# ---------------------------------------------------------------------------------------
# errors: one line, naming the function
# ---------------------------------------------------------------------------------------

def test_mistakes_are_named():
    @custom_jvp
    def f(x):
        return x ** 2
    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function f"):
        f(1.0)
    f.defjvp(lambda primals, tangents: primals[0] ** 2)
    with pytest.raises(TypeError, match="f: its jvp rule must return a pair"):
        cr.grad(f)(1.0)
    f.defjvp(lambda primals, tangents: (primals[0] ** 2, np.ones(3)))
    with pytest.raises(ValueError, match="f: the jvp rule's tangent has shape \\(3,\\)"):
        cr.jvp(f, (1.0,), (1.0,))

    @custom_vjp
    def g(x, y):
        return x * y
    g.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: ct * res[1])
    with pytest.raises(TypeError, match="g: its bwd must return a tuple"):
        cr.grad(g)(1.0, 2.0)
    g.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (ct * res[1],))
    with pytest.raises(TypeError, match="g: its bwd returned 1 gradients for 2"):
        cr.grad(g)(1.0, 2.0)
    g.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (ct * np.ones(2), None))
    with pytest.raises(ValueError, match="g: bwd's gradient has shape \\(2,\\)"):
        cr.grad(g)(1.0, 2.0)
    with pytest.raises(TypeError, match="nondiff_argnums must be non-negative ints"):
        custom_vjp(lambda x: x, nondiff_argnums=("x",))
    h = custom_vjp(lambda k, x: x * k, nondiff_argnums=(0,))
    h.defvjp(lambda k, x: (x * k, None), lambda k, res, ct: (ct * k,))
    with pytest.raises(TypeError, match="an argument in nondiff_argnums"):
        cr.grad(lambda k: h(k, 2.0))(3.0)

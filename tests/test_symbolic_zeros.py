"""``symbolic_zeros=True`` of cr.custom_jvp and cr.custom_vjp against JAX's, in float64.

Each function is written once against a library (its decorators, its numpy namespace and
its ``SymbolicZero``/``CustomVJPPrimal``), so the same source runs under chainrule and
under JAX. The rules log what they are given (``zero`` for a SymbolicZero,
``perturbed``/``still`` for a CustomVJPPrimal, ``array`` for anything else) and the
logs are compared along with every number: which arguments each transform perturbs,
and which outputs' cotangents reach bwd.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.transforms import custom_derivatives as ccd
from jax import custom_derivatives as jcd

jax.config.update("jax_enable_x64", True)

CR = dict(custom_jvp=cr.custom_jvp, custom_vjp=cr.custom_vjp, np=cnp, grad=cr.grad,
          jvp=cr.jvp, vjp=cr.vjp, vmap=cr.vmap, jit=cr.jit, jacfwd=cr.jacfwd,
          jacrev=cr.jacrev, SymbolicZero=ccd.SymbolicZero, Primal=ccd.CustomVJPPrimal)
JAX = dict(custom_jvp=jax.custom_jvp, custom_vjp=jax.custom_vjp, np=jnp, grad=jax.grad,
           jvp=jax.jvp, vjp=jax.vjp, vmap=jax.vmap, jit=jax.jit, jacfwd=jax.jacfwd,
           jacrev=jax.jacrev, SymbolicZero=jcd.SymbolicZero, Primal=jcd.CustomVJPPrimal)


def kind(lib, x):
    if isinstance(x, lib["SymbolicZero"]):
        return "zero"
    if isinstance(x, lib["Primal"]):
        return "perturbed" if x.perturbed else "still"
    return "array"


def same(ours, theirs):
    ours_leaves = jax.tree_util.tree_leaves(ours)
    theirs_leaves = jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves), (ours, theirs)
    for a, b in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)


def compare(make, use, logs=True):
    """``use(lib, f)`` with ``f, log = make(lib)`` under both libraries: the numbers,
    and (``logs``) what the rules were given, call by call, equal."""
    results = []
    for lib in (CR, JAX):
        f, log = make(lib)
        results.append((use(lib, f), list(log)))
    same(results[0][0], results[1][0])
    if logs:
        assert results[0][1] == results[1][1]
    return results[0]


# ---------------------------------------------------------------------------------------
# custom_jvp
# ---------------------------------------------------------------------------------------

def make_jvp(lib):
    """sin(x) * y, whose rule leaves out the term of a zero tangent."""
    np_, log = lib["np"], []

    @lib["custom_jvp"]
    def f(x, y):
        return np_.sin(x) * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        log.append((kind(lib, tx), kind(lib, ty)))
        terms = []
        if kind(lib, tx) != "zero":
            terms.append(np_.cos(x) * tx * y)
        if kind(lib, ty) != "zero":
            terms.append(np_.sin(x) * ty)
        out = f(x, y)
        if not terms:
            return out, lib["SymbolicZero"].from_primal_value(out)
        return out, functools.reduce(lambda a, b: a + b, terms)
    f.defjvp(f_jvp, symbolic_zeros=True)
    return f, log


X, Y = 0.7, -1.3
XS, YS = np.array([0.3, -0.8, 1.5]), np.array([2.0, 0.5, -1.0])

JVP_CASES = {
    "call": lambda lib, f: f(X, Y),
    "grad x": lambda lib, f: lib["grad"](f)(X, Y),
    "grad y": lambda lib, f: lib["grad"](f, 1)(X, Y),
    "grad both": lambda lib, f: lib["grad"](f, (0, 1))(X, Y),
    "jvp both": lambda lib, f: lib["jvp"](f, (X, Y), (1.0, 0.0)),
    "jvp of x": lambda lib, f: lib["jvp"](lambda a: f(a, Y), (X,), (0.5,)),
    "jvp of y": lambda lib, f: lib["jvp"](lambda b: f(X, b), (Y,), (0.5,)),
    "vmap": lambda lib, f: lib["vmap"](f)(XS, YS),
    "vmap of grad": lambda lib, f: lib["vmap"](lib["grad"](f))(XS, YS),
    "vmap of grad, y shared": lambda lib, f: lib["vmap"](lib["grad"](f), (0, None))(XS, Y),
    "grad of vmap": lambda lib, f: lib["grad"](
        lambda a: lib["np"].sum(lib["vmap"](f)(a, YS)))(XS),
    "jit of grad": lambda lib, f: lib["jit"](lib["grad"](f))(X, Y),
    "grad of jit": lambda lib, f: lib["grad"](lib["jit"](f), 1)(X, Y),
    "grad of grad": lambda lib, f: lib["grad"](lib["grad"](f))(X, Y),
    "grad of grad, mixed": lambda lib, f: lib["grad"](lib["grad"](f), 1)(X, Y),
    "vjp": lambda lib, f: lib["vjp"](lambda a: f(a, Y), X)[1](1.5),
    "jacrev": lambda lib, f: lib["jacrev"](lambda a: f(a, YS))(XS),
    "grad, an integer y": lambda lib, f: lib["grad"](lambda a: f(a, 3))(X),
    "grad, y a constant of x": lambda lib, f: lib["grad"](lambda a: f(2.0, a * 0.0 + Y))(X),
}


@pytest.mark.parametrize("case", list(JVP_CASES))
def test_custom_jvp_symbolic_zeros_as_jax(case):
    compare(make_jvp, JVP_CASES[case])


@pytest.mark.parametrize("case", ["jacfwd", "hessian"])
def test_custom_jvp_symbolic_zeros_numbers(case):
    # jacfwd and hessian: JAX gives the rule batched tangents, chainrule's columns come
    # one at a time or batched by its own means: the numbers are compared, and that y's
    # tangent is symbolic under jacfwd in x
    use = {"jacfwd": lambda lib, f: lib["jacfwd"](lambda a: f(a, YS))(XS),
           "hessian": lambda lib, f: lib["jacfwd"](lib["jacrev"](f, (0, 1)), (0, 1))(X, Y)}
    ours = compare(make_jvp, use[case], logs=False)[1]
    assert case == "hessian" or set(ours) == {("array", "zero")}


def test_custom_jvp_rule_returning_symbolic_zero_gives_zero():
    def make(lib):
        @lib["custom_jvp"]
        def f(x, y):
            return x * y

        @functools.partial(f.defjvp, symbolic_zeros=True)
        def f_jvp(primals, tangents):  # (a rule that ignores y: its tangent is zero)
            x, y = primals
            out = f(x, y)
            if isinstance(tangents[0], lib["SymbolicZero"]):
                return out, lib["SymbolicZero"].from_primal_value(out)
            return out, tangents[0] * y
        return f, []
    for use in (lambda lib, f: lib["grad"](f, (0, 1))(X, Y),
                lambda lib, f: lib["jvp"](lambda b: f(X, b), (Y,), (1.0,)),
                lambda lib, f: lib["vmap"](lib["grad"](f, 1))(XS, YS),
                lambda lib, f: lib["jit"](lib["grad"](f, 1))(X, Y)):
        compare(make, use)


def test_pytree_arguments_are_perturbed_leaf_by_leaf():
    def make(lib):
        log = []

        @lib["custom_jvp"]
        def f(p):
            return p["w"] * p["b"]

        @functools.partial(f.defjvp, symbolic_zeros=True)
        def f_jvp(primals, tangents):
            (p,), (t,) = primals, tangents
            log.append(tuple((k, kind(lib, v)) for k, v in sorted(t.items())))
            dw = 0.0 if kind(lib, t["w"]) == "zero" else t["w"] * p["b"]
            db = 0.0 if kind(lib, t["b"]) == "zero" else p["w"] * t["b"]
            return f(p), dw + db
        return f, log
    compare(make, lambda lib, f: lib["grad"](lambda w: f({"w": w, "b": Y}))(X))
    compare(make, lambda lib, f: lib["grad"](f)({"w": X, "b": Y}))


# ---------------------------------------------------------------------------------------
# custom_vjp
# ---------------------------------------------------------------------------------------

def make_vjp(lib):
    """(sin(x) * y * n, x * y) with n in nondiff_argnums; fwd sees which of x and y are
    perturbed, bwd which outputs' cotangents arrived."""
    np_, log = lib["np"], []

    @functools.partial(lib["custom_vjp"], nondiff_argnums=(2,))
    def g(x, y, n):
        return np_.sin(x) * y * n, x * y

    def g_fwd(x, y, n):
        log.append(("fwd", kind(lib, x), kind(lib, y), kind(lib, n)))
        return g(x.value, y.value, n), (x.value, y.value)

    def g_bwd(n, res, cts):
        x, y = res
        a, b = cts
        log.append(("bwd", kind(lib, a), kind(lib, b)))
        gx, gy = [], []
        if kind(lib, a) != "zero":
            gx.append(np_.cos(x) * y * n * a)
            gy.append(np_.sin(x) * n * a)
        if kind(lib, b) != "zero":
            gx.append(y * b)
            gy.append(x * b)
        total = lambda ts: functools.reduce(lambda p, q: p + q, ts)
        return total(gx), total(gy)
    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    return g, log


VJP_CASES = {
    "call": lambda lib, g: g(X, Y, 3.0),
    "grad x, first output": lambda lib, g: lib["grad"](lambda a, b: g(a, b, 3.0)[0])(X, Y),
    "grad y, second output": lambda lib, g: lib["grad"](
        lambda a, b: g(a, b, 3.0)[1], 1)(X, Y),
    "grad both, both outputs": lambda lib, g: lib["grad"](
        lambda a, b: g(a, b, 3.0)[0] + g(a, b, 3.0)[1] * 0.5, (0, 1))(X, Y),
    "grad, an output times zero": lambda lib, g: lib["grad"](
        lambda a: sum(o * w for o, w in zip(g(a, Y, 2.0), (1.0, 0.0))))(X),
    "vjp, both cotangents": lambda lib, g: lib["vjp"](
        lambda a, b: g(a, b, 3.0), X, Y)[1]((1.0, 0.0)),
    "vmap": lambda lib, g: lib["vmap"](lambda a, b: g(a, b, 3.0))(XS, YS),
    "vmap of grad": lambda lib, g: lib["vmap"](
        lib["grad"](lambda a, b: g(a, b, 3.0)[0]))(XS, YS),
    "jit of grad": lambda lib, g: lib["jit"](
        lib["grad"](lambda a, b: g(a, b, 3.0)[1], 1))(X, Y),
    "grad of vmap": lambda lib, g: lib["grad"](
        lambda a: lib["np"].sum(lib["vmap"](lambda p, q: g(p, q, 3.0)[0])(a, YS)))(XS),
    "jacrev of both": lambda lib, g: lib["jacrev"](
        lambda a: lib["np"].stack(g(a, Y, 3.0)))(X),
    "grad, an integer y": lambda lib, g: lib["grad"](lambda a: g(a, 2, 3.0)[0])(X),
}


@pytest.mark.parametrize("case", list(VJP_CASES))
def test_custom_vjp_symbolic_zeros_as_jax(case):
    compare(make_vjp, VJP_CASES[case])


def test_custom_vjp_symbolic_zeros_grad_of_grad():
    # (the numbers, and the unused output's cotangent symbolic; which of the two passes
    # runs fwd again differs from JAX's)
    ours = compare(make_vjp, lambda lib, g: lib["grad"](
        lib["grad"](lambda a, b: g(a, b, 3.0)[0]))(X, Y), logs=False)[1]
    assert ("bwd", "array", "zero") in ours


@pytest.mark.parametrize("returned", ["none", "symbolic zero"])
def test_bwd_may_return_none_or_a_symbolic_zero(returned):
    def make(lib):
        @lib["custom_vjp"]
        def h(x, y):
            return x * y

        def fwd(x, y):
            return h(x.value, y.value), (x.value, y.value)

        def bwd(res, g):
            zero = None if returned == "none" else lib["SymbolicZero"].from_primal_value(res[1])
            return res[1] * g, zero
        h.defvjp(fwd, bwd, symbolic_zeros=True)
        return h, []
    compare(make, lambda lib, h: lib["grad"](h, (0, 1))(X, Y))
    compare(make, lambda lib, h: lib["vmap"](lib["grad"](h, (0, 1)))(XS, YS))


def test_fwd_sees_pytree_leaves_as_custom_vjp_primals():
    def make(lib):
        log = []

        @lib["custom_vjp"]
        def h(d):
            return d["a"] * d["b"]

        def fwd(d):
            log.append(tuple((k, kind(lib, v)) for k, v in sorted(d.items())))
            return h({k: v.value for k, v in d.items()}), (d["a"].value, d["b"].value)

        def bwd(res, g):
            return ({"a": g * res[1], "b": g * res[0]},)
        h.defvjp(fwd, bwd, symbolic_zeros=True)
        return h, log
    compare(make, lambda lib, h: lib["grad"](lambda a: h({"a": a, "b": Y}))(X))
    compare(make, lambda lib, h: lib["grad"](h)({"a": X, "b": Y}))


def test_a_custom_vjp_primal_kept_as_a_residual_is_refused():
    @cr.custom_vjp
    def h(x):
        return x

    h.defvjp(lambda x: (x.value, x), lambda res, g: (g,), symbolic_zeros=True)
    with pytest.raises(TypeError, match="CustomVJPPrimal among its residuals"):
        cr.grad(h)(1.0)


def test_zero_from_primal_and_symbolic_zero_as_jax():
    tree = (1.0, np.ones((2, 3)), 4)
    ours = ccd.zero_from_primal(tree)
    theirs = jcd.zero_from_primal(tree)
    for a, b in zip(ours, theirs):
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
    for a, b in zip(ccd.zero_from_primal(tree, symbolic_zeros=True),
                    jcd.zero_from_primal(tree, symbolic_zeros=True)):
        assert repr(a) == repr(b) == "SymbolicZero"
        assert (a.shape, a.dtype, a.ndim, a.size) == (b.shape, b.dtype, b.ndim, b.size)
    assert cr.custom_derivatives.SymbolicZero is ccd.SymbolicZero

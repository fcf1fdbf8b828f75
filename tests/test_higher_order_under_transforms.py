"""The functions that take functions (solvers, fixed points, control flow, matrix-free
operators, custom rules, checkpoints) under every transform, and every transform
nested in the others.

The derivative table's cases run through every transform in
tests/test_table_under_transforms.py; the functions here are not rows of that table
(each takes a function and runs it, often in a loop of Python's), so they get the same
generated check here. Each is a scalar function of a scalar ``k`` (what it closes over,
or its argument), and each transform of it must give the eager first or second
derivative at two points, taken per point (``cr.grad``, ``cr.grad(cr.grad)``), which
the functions' own test files check against closed forms, JAX and central differences.
A jitted transform is traced at the first point and replayed at the second.
"""

import warnings

import numpy as np
import pytest

import chainrule as cr

pytest.importorskip("scipy")
from chainrule.scipy import optimize  # noqa: E402
from chainrule.scipy.integrate import odeint  # noqa: E402

POINTS = np.array([0.5, 2.0])


def newton_steps(f, x):
    for _ in range(30):
        x = x - f(x) / (3 * x ** 2 + 1)
    return x


def newton_loop(f, x):
    return cr.fori_loop(0, 40, lambda i, x: x - f(x) / (3 * x ** 2 + 1), x)


def distance(x, y):
    return cr.max(cr.abs(x - y))


@cr.custom_jvp
def softplus(x):
    return cr.log1p(cr.exp(x))


softplus.defjvp(lambda primals, tangents: (softplus(primals[0]),
                                           tangents[0] * cr.sigmoid(primals[0])))


@cr.custom_vjp
def sin_times(x):
    return cr.sin(x) * x


sin_times.defvjp(lambda x: (sin_times(x), x),
                 lambda x, g: (g * (cr.cos(x) * x + cr.sin(x)),))


class Cube(cr.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g


CASES = {
    "minimize": lambda k: cr.sum(optimize.minimize(
        lambda x, k: cr.sum((x - k) ** 2) + cr.sum(x ** 4), np.zeros(2), args=(k,),
        method="BFGS", tol=1e-12).x),
    "root": lambda k: cr.sum(optimize.root(lambda x, k: x ** 3 + x - k, np.ones(2),
                                           args=(k,), tol=1e-13).x),
    "fsolve": lambda k: cr.sum(optimize.fsolve(lambda x, k: x ** 3 + x - k, np.ones(1),
                                               args=(k,), xtol=1e-13)),
    "brentq": lambda k: optimize.brentq(lambda x, k: x ** 3 + x - k, -5.0, 5.0, args=(k,)),
    "newton": lambda k: optimize.newton(lambda x, k: x ** 3 + x - k, 1.0, args=(k,),
                                        tol=1e-13),
    "least_squares": lambda k: cr.sum(optimize.least_squares(
        lambda x, k: x ** 3 + x - k, np.ones(2), args=(k,), xtol=1e-15, ftol=1e-15,
        gtol=1e-15).x),
    "odeint": lambda k: cr.sum(odeint(lambda y, t, k: -k * y, np.ones(2),
                                      np.array([0.0, 0.5, 1.0]), k)),
    "custom_root": lambda k: cr.custom_root(lambda x: x ** 3 + x - k, 1.0, newton_steps,
                                            lambda g, y: y / g(1.0)),
    "custom_root, a fori_loop solve": lambda k: cr.custom_root(
        lambda x: x ** 3 + x - k, 1.0, newton_loop, lambda g, y: y / g(1.0)),
    "custom_linear_solve": lambda k: cr.sum(cr.custom_linear_solve(
        lambda v: v * (k + 1.0), np.ones(2) * k,
        lambda matvec, b: b / matvec(np.ones(2)), symmetric=True)),   # A = (k + 1) I
    "fixed_point": lambda k: cr.fixed_point(lambda a: lambda x: 0.5 * (x + a / x), k,
                                            1.0, distance, 1e-13),
    "while_loop": lambda k: cr.while_loop(lambda c: c[1] < 5, lambda c: (c[0] * k, c[1] + 1),
                                          (k, 0))[0],
    "fori_loop": lambda k: cr.fori_loop(0, 3, lambda i, x: x * k + i, k),
    "scan": lambda k: cr.scan(lambda c, x: (c * k + x, c), k, np.arange(3.0))[0],
    "cond": lambda k: cr.cond(k > 1, lambda k: k ** 2, lambda k: cr.sin(k) * k, k),
    "switch": lambda k: cr.switch((k * 1.5).astype(int), [cr.sin, cr.exp, cr.tanh], k),
    "checkpoint": lambda k: cr.checkpoint(lambda k: cr.sin(k) * k)(k),
    "remat, a policy": lambda k: cr.remat(
        lambda k: cr.sin(k) * cr.exp(k),
        policy=cr.checkpoint_policies.everything_saveable)(k),
    "custom_jvp": lambda k: softplus(k * 2.0),
    "custom_vjp": lambda k: sin_times(k * 2.0),
    "Function": lambda k: Cube.apply(k),
    "stop_gradient": lambda k: k * cr.stop_gradient(k) + k ** 2,
    "hvp": lambda k: cr.sum(cr.hvp(lambda x: cr.sum(x ** 3) * k, np.array([1.0, 2.0]),
                                   np.ones(2))),
    "hessian_operator": lambda k: cr.sum(cr.hessian_operator(
        lambda x: cr.sum(x ** 3) * k, np.array([1.0, 2.0])) @ np.ones(2)),
    "linear_operator": lambda k: cr.sum(cr.linear_operator(
        lambda x: cr.sin(x) * k, np.array([1.0, 2.0])) @ np.ones(2)),
}


def each_point(transform):
    """A transform of f for one point, jitted once and replayed at the next."""
    def run(f):
        one = transform(f)
        found = [one(k) for k in POINTS]
        for value in found:  # a number or NumPy's, never a Tensor or a tracer
            assert type(value) in (float, np.float64, np.ndarray), type(value)
        return np.array(found)
    return run


TRANSFORMS = {  # name -> (transform of f over POINTS, the order of the derivative)
    "vmap(grad)": (lambda f: cr.vmap(cr.grad(f))(POINTS), 1),
    "grad of a vmap": (lambda f: cr.grad(lambda ks: cr.sum(cr.vmap(f)(ks)))(POINTS), 1),
    "jit(grad)": (each_point(lambda f: cr.jit(cr.grad(f))), 1),
    "jit(vmap(grad))": (lambda f: cr.jit(cr.vmap(cr.grad(f)))(POINTS), 1),
    "vmap(jvp)": (lambda f: cr.vmap(lambda k: cr.jvp(f, (k,), (1.0,))[1])(POINTS), 1),
    "vmap(jacfwd)": (lambda f: cr.vmap(cr.jacfwd(f))(POINTS), 1),
    "jit(jacfwd)": (each_point(lambda f: cr.jit(cr.jacfwd(f))), 1),
    "vmap(hessian)": (lambda f: cr.vmap(cr.hessian(f))(POINTS), 2),
    "jit(hessian)": (each_point(lambda f: cr.jit(cr.hessian(f))), 2),
    "jit(grad(grad))": (each_point(lambda f: cr.jit(cr.grad(cr.grad(f)))), 2),
}

# What JAX refuses too: forward mode through a custom_vjp function.
REFUSED = {("custom_vjp", name): (TypeError, "forward-mode")
           for name in ("vmap(jvp)", "vmap(jacfwd)", "jit(jacfwd)", "vmap(hessian)",
                        "jit(hessian)")}
# An ODE's derivatives in forward mode come from its tangent equation, solved with steps
# of their own, and in reverse mode from its adjoint: both to odeint's tolerance only.
RTOL = {"odeint": 1e-6}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def eager(f, order):
    derivative = cr.grad(f) if order == 1 else cr.grad(cr.grad(f))
    return np.array([derivative(k) for k in POINTS])


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("case", CASES)
def test_every_transform_of_a_function_that_takes_functions_gives_the_eager_derivative(
        case, transform):
    f = CASES[case]
    run, order = TRANSFORMS[transform]
    if (case, transform) in REFUSED:
        error, words = REFUSED[case, transform]
        with pytest.raises(error, match=words):
            run(f)
        return
    found = run(f)
    assert type(found) is np.ndarray, type(found)   # NumPy's, never a Tensor or a tracer
    np.testing.assert_allclose(found, eager(f, order), rtol=RTOL.get(case, 1e-9),
                               atol=1e-12)


def test_a_solver_that_closes_over_the_differentiated_value_gives_plain_derivatives():
    """The user's solve (or tangent_solve) runs inside the derivative rules; closing over
    the value being differentiated, it would hand back that transform's value in place
    of a number. Its derivative through the closure is not taken, as in JAX, and the
    answers are the closed forms."""
    for k in POINTS:
        x = lambda k: cr.sum(cr.custom_linear_solve(      # sum(k / (k + 1)) over 2 entries
            lambda v: v * (k + 1.0), np.ones(2) * k, lambda matvec, b: b / (k + 1.0),
            symmetric=True))
        for d in (cr.grad(x)(k), cr.jvp(x, (k,), (1.0,))[1]):
            assert type(d) is float and d == pytest.approx(2 / (k + 1) ** 2, rel=1e-14)
        for d2 in (cr.hessian(x)(k), cr.grad(cr.grad(x))(k)):
            assert np.ndim(d2) == 0 and not isinstance(d2, cr.Tensor)
            assert float(d2) == pytest.approx(-4 / (k + 1) ** 3, rel=1e-13)
        root = lambda k: cr.custom_root(                 # x* = k / (k + 1), J = k + 1
            lambda x: x * (k + 1.0) - k, 1.0, lambda f, x: x - f(x) / (k + 1.0),
            lambda g, y: y / (k + 1.0))
        for d in (cr.grad(root)(k), cr.jvp(root, (k,), (1.0,))[1]):
            assert type(d) is float and d == pytest.approx(1 / (k + 1) ** 2, rel=1e-14)


def test_a_solver_closing_over_a_mapped_value_differentiated_outside_the_map():
    """The derivative of a vmap walks back after the vmap has ended, and the user's
    solver, run inside the rules, still closes over the whole batch of k: each solve is
    read at its own example (the one its operands hold), so the answers are each
    example's closed forms, to second order."""
    K = np.array([0.5, 1.5, 2.0])
    linear = lambda k: cr.sum(cr.custom_linear_solve(      # sum(k / (k + 1)), 2 entries
        lambda v: v * (k + 1.0), np.ones(2) * k, lambda matvec, b: b / (k + 1.0),
        symmetric=True))
    root = lambda k: cr.custom_root(                       # k / (k + 1)
        lambda x: x * (k + 1.0) - k, 1.0, lambda f, x: x - f(x) / (k + 1.0),
        lambda g, y: y / (k + 1.0))
    for f, entries in ((linear, 2), (root, 1)):
        mapped = lambda K, f=f: cr.vmap(f)(K)
        first, second = entries / (K + 1) ** 2, -2 * entries / (K + 1) ** 3
        np.testing.assert_allclose(cr.grad(lambda K: cr.sum(mapped(K)))(K), first,
                                   rtol=1e-14)
        np.testing.assert_allclose(cr.jvp(mapped, (K,), (np.ones(3),))[1], first, rtol=1e-14)
        for jacobian in (cr.jacrev, cr.jacfwd):
            np.testing.assert_allclose(jacobian(mapped)(K), np.diag(first), rtol=1e-14)
        hessian = cr.hessian(lambda K: cr.sum(mapped(K)))(K)
        assert type(hessian) is np.ndarray
        np.testing.assert_allclose(hessian, np.diag(second), rtol=1e-13)
        # under cr.jit the example of each solve is not known when the rules are traced:
        # refused in one line, where the derivative inside the vmap runs
        with pytest.raises(TypeError, match="take the derivative inside the vmap"):
            cr.jit(cr.grad(lambda K: cr.sum(mapped(K))))(K)
        np.testing.assert_allclose(cr.jit(cr.vmap(cr.grad(f)))(K), first, rtol=1e-14)


@pytest.mark.parametrize("case", CASES)
def test_the_tensor_engines_backward_through_each_gives_the_eager_derivative(case):
    f = CASES[case]
    for k in POINTS:
        leaf = cr.tensor(k, requires_grad=True)
        out = f(leaf)
        (out if isinstance(out, cr.Tensor) else cr.tensor(out)).backward()
        assert float(leaf.grad) == pytest.approx(cr.grad(f)(k), rel=RTOL.get(case, 1e-9))


# SciPy's solvers and odeint compute with NumPy's arrays, and chainrule turns no torch
# array into NumPy's behind the user's back: given torch's, they refuse in one line.
ON_NUMPY_ONLY = {"minimize", "root", "fsolve", "brentq", "newton", "least_squares",
                 "odeint", "custom_root", "custom_root, a fori_loop solve",
                 "custom_linear_solve"}


@pytest.mark.parametrize("case", CASES)
def test_torchs_arrays_give_torchs_derivatives_or_a_one_line_refusal(case):
    torch = pytest.importorskip("torch")
    f, point = CASES[case], torch.tensor(POINTS[0], dtype=torch.float64)
    if case in ON_NUMPY_ONLY:
        with pytest.raises(TypeError, match="computes with NumPy's arrays.*not turned into"):
            cr.grad(f)(point)
        return
    want = cr.grad(f)(POINTS[0])
    for got in (cr.grad(f)(point), cr.jit(cr.grad(f))(point),
                cr.vmap(cr.grad(f))(point[None])[0]):
        assert isinstance(got, torch.Tensor)
        assert float(got) == pytest.approx(want, rel=RTOL.get(case, 1e-9))

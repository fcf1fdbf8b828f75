"""chainrule.scipy.integrate.odeint: its values against SciPy's odeint, JAX's and closed
forms (one with a right-hand side that jumps); its gradients (in y0, in every time, in
args; by the adjoint method) against JAX's odeint, autograd's and central differences;
its tangents (forward mode) against JAX; a tape that does not grow with the solver's
steps; and the errors it raises instead of computing (bad times, a closure over a
traced value); second and third derivatives against closed forms, central differences
and JAX."""

import gc
import tracemalloc

import numpy as np
import pytest

import chainrule as cr
from chainrule.graph import topological_order
from chainrule.scipy.integrate import odeint

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax_ode = pytest.importorskip("jax.experimental.ode")
scipy_integrate = pytest.importorskip("scipy.integrate")

TIGHT = dict(rtol=1e-11, atol=1e-11)


@pytest.fixture(autouse=True)
def _float64_jax():
    jax.config.update("jax_enable_x64", True)  # (conftest puts the switch back)


def predator_prey(numpy):
    """A forced Lotka-Volterra system in the given namespace: nonlinear in y, in t and in
    both arguments (an array and a float)."""
    def f(y, t, a, b):
        return numpy.stack([a[0] * y[0] - b * y[0] * y[1],
                            -a[1] * y[1] + b * y[0] * y[1] + 0.1 * numpy.sin(2.0 * t)])
    return f


Y0 = np.array([1.0, 0.5])
TIMES = np.array([0.0, 0.4, 1.1, 2.0, 3.0])
A, B = np.array([1.1, 0.4]), 0.7
WEIGHTS = np.random.default_rng(0).normal(size=(len(TIMES), 2))


def loss(y0, t, a, b, **tolerances):
    return cr.sum(odeint(predator_prey(cr), y0, t, a, b, **(tolerances or TIGHT)) * WEIGHTS)


def jax_loss(y0, t, a, b):
    return jnp.sum(jax_ode.odeint(predator_prey(jnp), y0, t, a, b, **TIGHT) * WEIGHTS)


# ---------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------

def test_the_values_are_scipys_odeint_at_tight_tolerances():
    ours = odeint(predator_prey(cr), Y0, TIMES, A, B, **TIGHT)
    f = predator_prey(np)
    theirs = scipy_integrate.odeint(lambda y, t: f(y, t, A, B), Y0, TIMES,
                                    rtol=1e-13, atol=1e-13)
    assert ours.shape == (len(TIMES), 2)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


def test_the_values_are_jaxs_odeint_with_the_same_tolerances():
    for tolerances in (dict(rtol=1e-6, atol=1e-6), TIGHT):
        ours = odeint(predator_prey(cr), Y0, TIMES, A, B, **tolerances)
        theirs = jax_ode.odeint(predator_prey(jnp), Y0, TIMES, A, B, **tolerances)
        tol = 100 * tolerances["rtol"]  # two solvers' errors, each a few tolerances
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=tol, atol=tol)


def test_the_error_follows_the_tolerance_on_a_closed_form():
    """An oscillator, x = cos t, v = sin t, over ten periods: the global error shrinks
    as the tolerances do, and stays within a small multiple of them."""
    times = np.linspace(0.0, 20 * np.pi, 11)
    rotate = lambda y, t: cr.stack([-y[1], y[0]])
    exact = np.stack([np.cos(times), np.sin(times)], axis=1)
    errors = [np.abs(odeint(rotate, np.array([1.0, 0.0]), times, rtol=tol, atol=tol)
                     - exact).max() for tol in (1e-6, 1e-9, 1e-12)]
    assert errors[0] < 1e-4 and errors[1] < 1e-7 and errors[2] < 1e-10
    assert errors[0] > errors[1] > errors[2]


@pytest.mark.parametrize("tol", [1e-6, 1e-8, 1e-10])
def test_a_right_hand_side_that_jumps_keeps_the_error_within_the_tolerance(tol):
    """y' = +-1 + cos(3t) / 10, the sign flipping at t = 1/3: a step across the jump is
    found by the third-order estimate and bisected to (the pair's own estimate, blind
    to a jump in the first 80% of a step, left an error of 2e-4 at rtol=1e-6)."""
    jumps = lambda y, t: y * 0.0 + (1.0 if t < 1 / 3 else -1.0) + 0.1 * np.cos(3 * t)
    exact = 1 / 3 - 2 / 3 + 0.1 * np.sin(3.0) / 3
    end = odeint(jumps, 0.0, np.array([0.0, 1.0]), rtol=tol, atol=tol)[1]
    assert abs(float(end) - exact) < 3 * tol


@pytest.mark.slow
def test_a_tree_of_states_and_arguments_gives_jaxs_tree_of_solutions():
    def f(state, t, params, power):
        x, v = state["x"], state["v"]
        return {"x": v, "v": -params["k"] * x ** power - params["c"][0] * v}

    y0 = {"x": np.array([1.0, -0.5]), "v": np.array([0.0, 0.3])}
    params = {"k": np.array([2.0, 3.0]), "c": (np.array([0.1]),)}
    times = np.linspace(0.0, 2.0, 4)
    ours = odeint(f, y0, times, params, 1)
    theirs = jax_ode.odeint(lambda s, t, p: f(s, t, p, 1), y0, times, params)
    assert set(ours) == {"x", "v"} and ours["x"].shape == (4, 2)
    for key in ours:
        np.testing.assert_allclose(ours[key], np.asarray(theirs[key]), rtol=1e-6, atol=1e-7)

    L = lambda y0, p: cr.sum(odeint(f, y0, times, p, 1, **TIGHT)["x"] ** 2)
    jL = lambda y0, p: jnp.sum(jax_ode.odeint(lambda s, t, p: f(s, t, p, 1), y0, times, p,
                                              **TIGHT)["x"] ** 2)
    (dy0, dparams), (jax_dy0, jax_dparams) = (cr.grad(L, argnums=(0, 1))(y0, params),
                                              jax.jit(jax.grad(jL, argnums=(0, 1)))(y0, params))
    pairs = [(dy0["x"], jax_dy0["x"]), (dy0["v"], jax_dy0["v"]),
             (dparams["k"], jax_dparams["k"]), (dparams["c"][0], jax_dparams["c"][0])]
    for mine, jaxs in pairs:
        np.testing.assert_allclose(mine, np.asarray(jaxs), rtol=1e-7, atol=1e-9)


def test_one_time_is_the_start_itself():
    ys = odeint(predator_prey(cr), Y0, np.array([0.5]), A, B)
    np.testing.assert_array_equal(ys, Y0[None])
    gradients = cr.grad(lambda y0, t, a: cr.sum(odeint(predator_prey(cr), y0, t, a, B) * 2),
                        argnums=(0, 1, 2))(Y0, np.array([0.5]), A)
    np.testing.assert_array_equal(gradients[0], [2.0, 2.0])
    np.testing.assert_array_equal(gradients[1], [0.0])
    np.testing.assert_array_equal(gradients[2], [0.0, 0.0])


# ---------------------------------------------------------------------------------------
# Gradients: the adjoint method
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jax_gradients():
    """JAX's gradient of the loss in (y0, t, a, b): computed once (JAX's odeint takes
    seconds to trace)."""
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        return [np.asarray(g) for g in
                jax.jit(jax.grad(jax_loss, argnums=(0, 1, 2, 3)))(Y0, TIMES, A, B)]
    finally:
        jax.config.update("jax_enable_x64", x64)


@pytest.mark.slow  # (JAX takes seconds to trace its odeint)
def test_the_gradients_in_y0_every_time_and_the_args_are_jaxs(jax_gradients):
    ours = cr.grad(loss, argnums=(0, 1, 2, 3))(Y0, TIMES, A, B)
    for mine, jaxs in zip(ours, jax_gradients):
        np.testing.assert_allclose(mine, np.asarray(jaxs), rtol=1e-7, atol=1e-9)
    assert isinstance(ours[3], float)   # a float argument's gradient is a float


def test_the_gradients_are_central_differences():
    point = [Y0, TIMES, A, B]
    gradients = cr.grad(loss, argnums=(0, 1, 2, 3))(*point)
    h = 1e-4
    for argnum in range(4):
        base = np.atleast_1d(np.asarray(point[argnum], dtype=float))
        numeric = np.empty(base.shape)
        for i in range(base.size):
            shifted = []
            for sign in (1, -1):
                moved = base.copy()
                moved[i] += sign * h
                args = list(point)
                args[argnum] = moved if np.ndim(point[argnum]) else float(moved[0])
                shifted.append(float(loss(*args, rtol=1e-13, atol=1e-13)))
            numeric[i] = (shifted[0] - shifted[1]) / (2 * h)
        np.testing.assert_allclose(np.atleast_1d(gradients[argnum]), numeric, rtol=1e-6,
                                   atol=1e-7)


def test_a_repeated_time_has_the_gradients_of_central_differences():
    """t = [t0, 1, 1, 2]: an interval of length 0 (where JAX's odeint gives NaN)."""
    f = lambda y, t: cr.stack([-y[1] * (1 + 0.1 * t), y[0]])
    weights = np.arange(1.0, 5.0)

    def L(y0, t0, **tolerances):
        ys = odeint(f, y0, cr.concatenate([cr.reshape(t0, (1,)), np.array([1.0, 1.0, 2.0])]),
                    **(tolerances or TIGHT))
        return cr.sum(ys[:, 0] * weights)
    y0, t0, h = np.array([1.0, 0.2]), 0.0, 1e-5
    dy0, dt0 = cr.grad(L, argnums=(0, 1))(y0, t0)
    exact = dict(rtol=1e-13, atol=1e-13)
    numeric = [(float(L(y0 + h * e, t0, **exact)) - float(L(y0 - h * e, t0, **exact))) / (2 * h)
               for e in np.eye(2)]
    numeric.append((float(L(y0, t0 + h, **exact)) - float(L(y0, t0 - h, **exact))) / (2 * h))
    np.testing.assert_allclose(list(dy0) + [dt0], numeric, rtol=1e-6)


def test_autograds_odeint_gives_the_same_gradients():
    pytest.importorskip("autograd")
    import autograd.builtins  # (binds autograd too)
    import autograd.numpy as anp
    from autograd.scipy.integrate import odeint as autograds_odeint
    import chainrule.autograd as cag
    import chainrule.autograd.builtins
    import chainrule.autograd.numpy as cnp
    from chainrule.autograd.scipy.integrate import odeint as our_odeint

    def L(odeint, numpy, pack, y0, t, a, b):
        f = lambda y, t, a, b: numpy.array([a * y[0] - b * y[0] * y[1],
                                            -y[1] + b * y[0] * y[1]])
        return numpy.sum(odeint(f, y0, t, pack((a, b)), rtol=1e-11, atol=1e-11) ** 2)

    point = (Y0, np.linspace(0.0, 2.0, 4), 1.1, 0.7)
    for argnum in range(4):
        theirs = autograd.grad(lambda *x: L(autograds_odeint, anp, autograd.builtins.tuple,
                                            *x), argnum)(*point)
        ours = cag.grad(lambda *x: L(our_odeint, cnp, chainrule.autograd.builtins.tuple,
                                     *x), argnum)(*point)
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)


def test_value_and_grad_vjp_jacrev_and_a_tensors_backward_agree():
    value, gradient = cr.value_and_grad(loss, argnums=2)(Y0, TIMES, A, B)
    assert float(value) == pytest.approx(float(loss(Y0, TIMES, A, B)), rel=1e-14)
    out, pullback = cr.vjp(lambda a: odeint(predator_prey(cr), Y0, TIMES, a, B, **TIGHT), A)
    np.testing.assert_allclose(pullback(WEIGHTS)[0], gradient, rtol=1e-12)
    a = cr.tensor(A, requires_grad=True)
    (odeint(predator_prey(cr), Y0, TIMES, a, B, **TIGHT) * WEIGHTS).sum().backward()
    np.testing.assert_allclose(a.grad, gradient, rtol=1e-12)


def test_the_tape_holds_one_node_for_the_solve_whatever_its_number_of_steps():
    evaluations = []

    def f(y, t, k):
        evaluations.append(t)
        return cr.stack([y[1], -k * y[0]])

    nodes = {}
    for tol in (1e-4, 1e-11):
        evaluations.clear()
        y0 = cr.tensor([1.0, 0.0], requires_grad=True)
        out = cr.sum(odeint(f, y0, np.array([0.0, 5.0]), 2.0, rtol=tol, atol=tol))
        nodes[tol] = (len(topological_order(out)), len(evaluations))
    (loose_nodes, loose_steps), (tight_nodes, tight_steps) = nodes[1e-4], nodes[1e-11]
    assert tight_steps > 20 * loose_steps
    assert tight_nodes == loose_nodes <= 10


@pytest.mark.slow
def test_the_backward_passs_memory_does_not_grow_with_the_number_of_steps():
    """The peak memory of a gradient through a solve 10 times as long (10 times the
    evaluations of func, each one a cr.vjp) grows by far less than a tape of those
    evaluations would take: what one evaluation records is dropped before the next."""
    evaluations = []

    def f(y, t, k):
        evaluations.append(t)
        return cr.stack([y[1], -k * y[0]])

    def peak(compute):
        gc.collect()
        tracemalloc.start()
        try:
            compute()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    def gradient(span):
        return cr.grad(lambda k: cr.sum(odeint(f, np.array([1.0, 0.0]),
                                               np.array([0.0, span]), k)))(2.0)

    gradient(1.0)  # (imports, caches)
    evaluations.clear()
    short = peak(lambda: gradient(1.0))
    count = len(evaluations)
    evaluations.clear()
    long = peak(lambda: gradient(10.0))
    extra = len(evaluations) - count
    assert extra > 5 * count

    def taped(k):  # the same number of evaluations of f, all on one tape
        y = np.array([1.0, 0.0])
        for _ in range(extra):
            y = y + 1e-3 * f(y, 0.0, k)
        return cr.sum(y)
    tape = peak(lambda: cr.grad(taped)(2.0))
    assert long - short < tape / 20, (short, long, tape)


# ---------------------------------------------------------------------------------------
# Forward mode: the sensitivity equations
# ---------------------------------------------------------------------------------------

@pytest.mark.slow  # (JAX takes seconds to trace its odeint)
def test_the_tangents_are_jaxs_derivative_along_them(jax_gradients):
    """JAX's odeint has no forward mode (a custom VJP): the reference is its reverse
    mode, by the identity WEIGHTS . (J v) = (J^T WEIGHTS) . v, with JAX's gradient."""
    tangents = (np.array([0.3, -1.0]), np.array([0.1, -0.2, 0.3, 0.0, 0.5]),
                np.array([1.0, 0.5]), -0.4)
    solve = lambda y0, t, a, b: odeint(predator_prey(cr), y0, t, a, b, **TIGHT)
    values, tangent = cr.jvp(solve, (Y0, TIMES, A, B), tangents)
    np.testing.assert_allclose(values, solve(Y0, TIMES, A, B), rtol=1e-14)
    expected = sum(np.sum(g * t) for g, t in zip(jax_gradients, tangents))
    assert np.sum(WEIGHTS * tangent) == pytest.approx(expected, rel=1e-8)
    for argnum in range(4):  # each argument's tangent alone
        alone = [np.zeros_like(np.asarray(t, dtype=float)) for t in tangents]
        alone[argnum] = tangents[argnum]
        tangent = cr.jvp(solve, (Y0, TIMES, A, B), tuple(alone))[1]
        expected = np.sum(jax_gradients[argnum] * tangents[argnum])
        assert np.sum(WEIGHTS * tangent) == pytest.approx(expected, rel=1e-7, abs=1e-9)


def test_jacfwd_and_jacrev_agree():
    solve = lambda a: odeint(predator_prey(cr), Y0, TIMES[:3], a, B, rtol=1e-9, atol=1e-9)
    forward, reverse = cr.jacfwd(solve)(A), cr.jacrev(solve)(A)
    assert forward.shape == (3, 2, 2)
    np.testing.assert_allclose(forward, reverse, rtol=1e-6, atol=1e-8)


def test_the_tangents_of_a_linear_system_are_jaxs_jvp_of_its_matrix_exponential():
    """y' = M y, y(t) = expm(M (t - t0)) y0: JAX's own jvp of the closed form."""
    m = np.array([[-0.5, 1.0], [-1.0, -0.2]])
    times = np.array([0.2, 0.7, 1.5])
    solve = lambda y0, t, m: odeint(lambda y, t, m: m @ y, y0, t, m, **TIGHT)

    def expm_times(a, y):  # its Taylor series: 40 terms of norm <= 2 reach 1e-30
        term, total = y, y
        for k in range(1, 40):
            term = a @ term / k
            total = total + term
        return total

    def closed_form(y0, t, m):
        return jnp.stack([expm_times(m * (s - t[0]), y0) for s in t])
    primals = (Y0, times, m)
    tangents = (np.array([1.0, 2.0]), np.array([0.3, -0.1, 0.2]), np.array([[0.1, 0.0],
                                                                           [0.2, -0.3]]))
    ours = cr.jvp(solve, primals, tangents)
    # Eager: under jax.jit the 120 unrolled Taylor terms make one program that XLA takes
    # far longer to compile (38 s) than the eager operations take to run (7 s).
    theirs = jax.jvp(closed_form, primals, tangents)
    np.testing.assert_allclose(ours[0], np.asarray(theirs[0]), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ours[1], np.asarray(theirs[1]), rtol=1e-8, atol=1e-10)
    gradients = cr.grad(lambda *x: cr.sum(solve(*x) ** 2), argnums=(0, 1, 2))(*primals)
    jax_gradients = jax.grad(lambda *x: jnp.sum(closed_form(*x) ** 2), argnums=(0, 1, 2))(
        *primals)
    for mine, jaxs in zip(gradients, jax_gradients):
        np.testing.assert_allclose(mine, np.asarray(jaxs), rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------------------------------
# What raises instead of computing
# ---------------------------------------------------------------------------------------

def test_second_and_third_derivatives_are_the_closed_forms_in_every_mode():
    """y' = -k y: y(t) = y0 e^(-k t). Every way of taking a derivative of a derivative
    (reverse over reverse, forward over reverse, reverse over forward, forward over
    forward, a Tensor's graph) differentiates the adjoint or sensitivity solve, which
    is odeint again; a third derivative goes one level further."""
    f = lambda y, t, k: -k * y
    times = np.array([0.0, 1.0])
    y0 = np.array([1.0, 2.0])
    L = lambda k: cr.sum(odeint(f, y0, times, k, **TIGHT) ** 2)     # 5 + 5 e^(-2k)
    Ly = lambda y: cr.sum(odeint(f, y, times, 0.3, **TIGHT) ** 2)   # |y|^2 (1 + e^(-0.6))
    second = 20 * np.exp(-1.0)                                     # L''(0.5)
    for value in (cr.hessian(L)(0.5), cr.grad(cr.grad(L))(0.5), cr.jacfwd(cr.grad(L))(0.5),
                  cr.grad(lambda k: cr.jvp(L, (k,), (1.0,))[1])(0.5),
                  cr.jvp(lambda k: cr.jvp(L, (k,), (1.0,))[1], (0.5,), (1.0,))[1]):
        np.testing.assert_allclose(value, second, rtol=1e-8)
    np.testing.assert_allclose(cr.hessian(Ly)(y0), 2 * (1 + np.exp(-0.6)) * np.eye(2),
                               rtol=1e-8, atol=1e-12)
    inner = lambda k: cr.sum(cr.grad(lambda y: cr.sum(odeint(f, y, times, k, **TIGHT)))(y0))
    np.testing.assert_allclose(cr.grad(inner)(0.5), -2 * np.exp(-0.5), rtol=1e-8)
    np.testing.assert_allclose(cr.grad(cr.grad(cr.grad(L)))(0.5), -40 * np.exp(-1.0),
                               rtol=1e-7)
    hessian_at = cr.jit(cr.hessian(L))  # (each call solves again: a call of the program)
    np.testing.assert_allclose([hessian_at(0.5), hessian_at(0.7)],
                               20 * np.exp([-1.0, -1.4]), rtol=1e-8)
    np.testing.assert_allclose(cr.vmap(cr.hessian(L))(np.array([0.5, 0.7])),
                               20 * np.exp([-1.0, -1.4]), rtol=1e-8)
    k = cr.tensor(0.5, requires_grad=True)  # a Tensor's own graph, then its backward
    L(k).backward(create_graph=True)
    first, k.grad = k.grad, None
    first.backward()
    np.testing.assert_allclose(k.grad, second, rtol=1e-8)


@pytest.mark.slow  # (about a minute: ten gradients at tight tolerances, and two Hessians)
def test_the_hessian_in_y0_every_time_and_the_args_is_central_differences():
    """The predator-prey loss's Hessian in (y0, t, a, b) at once, forward over reverse
    and reverse over reverse, against central differences of its gradient."""
    def packed(x):
        return loss(x[:2], x[2:7], x[7:9], x[9])
    x = np.concatenate([Y0, TIMES, A, [B]])
    forward_over_reverse = cr.hessian(packed)(x)
    reverse_over_reverse = cr.jacrev(cr.grad(packed))(x)
    gradient = cr.grad(packed)
    h = 1e-5
    central = np.stack([(gradient(x + h * e) - gradient(x - h * e)) / (2 * h)
                        for e in np.eye(x.size)])
    scale = np.abs(central).max()
    np.testing.assert_allclose(forward_over_reverse, central, atol=1e-6 * scale)
    np.testing.assert_allclose(reverse_over_reverse, forward_over_reverse, atol=1e-8 * scale)
    np.testing.assert_allclose(forward_over_reverse, forward_over_reverse.T, atol=1e-8 * scale)


@pytest.mark.slow  # (JAX takes seconds to trace its odeint twice over)
def test_the_hessian_in_the_args_is_jaxs():
    ours = cr.hessian(lambda a: loss(Y0, TIMES, a, B))(A)
    # (reverse over reverse: JAX's odeint is a custom_vjp, which refuses forward mode)
    jaxs = jax.jit(jax.jacrev(jax.grad(lambda a: jax_loss(Y0, TIMES, a, B))))(A)
    np.testing.assert_allclose(ours, np.asarray(jaxs), rtol=1e-7, atol=1e-9)


def test_a_closure_over_a_differentiated_value_is_refused():
    with pytest.raises(TypeError, match="odeint: func's result depends on a value being "
                                        "differentiated.*pass that value to odeint in args"):
        cr.grad(lambda k: cr.sum(odeint(lambda y, t: -k * y, np.ones(2),
                                        np.array([0.0, 1.0]))))(0.5)


@pytest.mark.parametrize("times, message", [
    (np.array([0.0, 1.0, 0.5]),
     r"odeint: t must be increasing, but t\[2\]=0.5 comes after t\[1\]=1.0"),
    (np.array([[0.0, 1.0]]), r"odeint: t must be a 1-d array .* got shape \(1, 2\)"),
    (np.array([]), r"odeint: t must be a 1-d array .* got shape \(0,\)"),
    (np.array([0.0, np.nan]), r"odeint: t must be finite"),
])
def test_bad_times_are_refused_in_one_line(times, message):
    with pytest.raises(ValueError, match=message) as raised:
        odeint(lambda y, t: -y, 1.0, times)
    assert "\n" not in str(raised.value)


def test_a_func_whose_result_is_not_shaped_like_y_is_refused():
    with pytest.raises(ValueError, match=r"odeint: func must return dy/dt shaped like y, "
                                         r"with leaves of shapes \[\(2,\)\], got .*\(3,\)"):
        odeint(lambda y, t: cr.concatenate([y, y[:1]]), np.ones(2), np.array([0.0, 1.0]))


def test_a_solve_that_needs_more_than_mxstep_steps_raises():
    with pytest.raises(ValueError, match="odeint: more than mxstep=5 steps from t=0.0"):
        odeint(lambda y, t: cr.stack([y[1], -100.0 * y[0]]), np.array([1.0, 0.0]),
               np.array([0.0, 10.0]), mxstep=5)
    ys = odeint(lambda y, t: -y, 1.0, np.array([0.0, 1.0]), hmax=0.01, mxstep=101)
    assert float(ys[1]) == pytest.approx(np.exp(-1.0), rel=1e-10)
    with pytest.raises(ValueError, match="mxstep=99"):
        odeint(lambda y, t: -y, 1.0, np.array([0.0, 1.0]), hmax=0.01, mxstep=99)


def test_the_autograd_path_takes_scipys_arguments_and_refuses_the_others():
    from chainrule.autograd.scipy import integrate
    f = lambda y, t, k: -k * y
    times = np.array([0.0, 1.0])
    ys = integrate.odeint(f, np.array([1.0]), times, (0.5,), mxstep=0, hmax=0.0)
    np.testing.assert_allclose(ys, [[1.0], [np.exp(-0.5)]], rtol=1e-7)
    np.testing.assert_allclose(scipy_integrate.odeint(f, np.array([1.0]), times, (0.5,)), ys,
                               rtol=1e-7)
    with pytest.raises(TypeError, match=r"odeint: keyword\(s\) \['Dfun'\]"):
        integrate.odeint(f, np.array([1.0]), times, (0.5,), Dfun=None)


def test_under_jit_the_solve_and_its_adjoint_run_at_every_call():
    def loss(y0, k):
        ys = odeint(lambda y, t, k: -k * y + cr.sin(t), y0, np.linspace(0.0, 1.0, 4), k)
        return cr.sum(ys ** 2)
    step = cr.value_and_grad(loss, argnums=(0, 1))
    jitted = cr.jit(step)
    for y0, k in ((np.array([1.0, 2.0]), 0.5), (np.array([-1.0, 0.5]), 1.5)):
        (value, grads), (jit_value, jit_grads) = step(y0, k), jitted(y0, k)
        np.testing.assert_allclose(jit_value, value, rtol=1e-12)
        for g, j in zip(grads, jit_grads):
            np.testing.assert_allclose(j, g, rtol=1e-12)

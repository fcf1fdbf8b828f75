"""cr.scan, cr.fori_loop and cr.while_loop under cr.jit: one loop of the program each;
cr.cond and cr.switch choosing at each replay.

The body is traced once into a program of its own, and the loop is one call of the
program (chainrule/jit/loops.py): ``make_program`` lists the body once, so a program's
length does not grow with the number of steps. The results are the eager ones, for
values and for derivatives (scan's reverse and forward rules are loops too), and a
replay computes anew: with other inputs, another number of while steps, a random key
that moves from step to step.
"""

import numpy as np
import pytest

import chainrule as cr
from chainrule.jit.errors import TracingError
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(7)
W, U = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((2, 3)) * 0.5


def rnn_loss(h0, xs, reverse=False):
    """A tanh cell scanned over xs; the loss reads the last carry and every y."""
    def cell(h, x):
        h = cr.tanh(h @ W + x @ U)
        return h, cr.sum(h * h)
    h, ys = cr.scan(cell, h0, xs, reverse=reverse)
    return cr.sum(ys) + cr.sum(h)


def listing_length(f, *args):
    return len(str(cr.make_program(f)(*args)).splitlines())


def same(jitted, eager, rtol=1e-12):
    jitted, eager = cr.tree_leaves(jitted), cr.tree_leaves(eager)
    assert len(jitted) == len(eager)
    for a, b in zip(jitted, eager):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("reverse", [False, True])
def test_a_jitted_scan_gives_the_eager_value_gradients_tangents_and_hessian(reverse):
    h0, xs, v = RNG.standard_normal(3), RNG.standard_normal((6, 2)), RNG.standard_normal(3)
    loss = lambda h0, xs: rnn_loss(h0, xs, reverse)
    for f in (loss,
              cr.grad(loss, argnums=(0, 1)),
              lambda h0, xs: cr.jvp(lambda h: loss(h, xs), (h0,), (v,))[1],
              lambda h0, xs: cr.hessian(loss)(h0, xs)):
        same(cr.jit(f)(h0, xs), f(h0, xs))


def test_a_scan_is_listed_once_whatever_its_number_of_steps():
    h0 = RNG.standard_normal(3)
    short, long = RNG.standard_normal((10, 2)), RNG.standard_normal((1000, 2))
    grad = cr.grad(rnn_loss)
    assert listing_length(rnn_loss, h0, short) == listing_length(rnn_loss, h0, long)
    assert listing_length(grad, h0, short) == listing_length(grad, h0, long) < 150
    listing = str(cr.make_program(rnn_loss)(h0, long))
    assert listing.count("np.tanh") == 1 and "# body, 1000 steps:" in listing
    same(cr.jit(grad)(h0, long), grad(h0, long))


def test_a_jitted_fori_loop_is_one_loop_with_the_eager_derivatives():
    def f(y):
        return cr.fori_loop(0, 20, lambda i, v: v + 0.05 * (cr.sin(v) - 0.1 * i), y)
    y, t = np.array([0.3, -1.2]), np.array([1.0, 0.5])
    loss = lambda y: cr.sum(f(y) ** 2)
    for g in (f, cr.grad(loss), lambda y: cr.jvp(f, (y,), (t,))[1], cr.hessian(loss)):
        same(cr.jit(g)(y), g(y))
    many = lambda y: cr.fori_loop(0, 1000, lambda i, v: cr.sin(v) + 0.001 * i, y)
    few = lambda y: cr.fori_loop(0, 10, lambda i, v: cr.sin(v) + 0.001 * i, y)
    assert listing_length(cr.grad(lambda y: cr.sum(many(y))), y) == \
        listing_length(cr.grad(lambda y: cr.sum(few(y))), y)
    assert "body, 1000 steps" in str(cr.make_program(many)(y))


def test_a_fori_loop_index_is_traced_so_slices_at_it_stay_one_loop():
    """As in JAX, the index is a traced integer in the body: slices that start at it
    (cr.dynamic_slice, lax.dynamic_slice_in_dim, dynamic_update_slice) are gathers and
    scatters of the program, clamped as eagerly, and the loop stays one loop."""
    from chainrule import lax
    x = RNG.standard_normal((4, 6))

    def reads(x, steps):
        return cr.fori_loop(0, steps, lambda i, c: c + cr.sum(
            lax.dynamic_slice_in_dim(x, 2 * i, 2, axis=1) ** 2) + cr.sum(
            cr.dynamic_slice(x, [i - 1, i], [2, 3]) * c), 0.5)

    def writes(x, steps):
        return cr.fori_loop(0, steps, lambda i, c: cr.dynamic_update_slice(
            c, cr.sin(c[:2, :2]) + i, [i, 2 * i]), x)
    for f in (lambda x: reads(x, 5), lambda x: cr.sum(writes(x, 5) ** 2)):
        same(cr.jit(f)(x), f(x))
        same(cr.jit(cr.grad(f))(x), cr.grad(f)(x))
    assert listing_length(lambda x: reads(x, 50), x) == listing_length(lambda x: reads(x, 5), x)
    assert listing_length(lambda x: writes(x, 50), x) == \
        listing_length(lambda x: writes(x, 5), x)


def test_an_optimizers_state_is_a_carry_of_a_jitted_fori_loop():
    """JAX's VAE example: the optimizer's state (a pytree whose structure is static
    data) is the carry, a key is split at each step, the batch read at the index."""
    from chainrule import lax
    from chainrule.example_libraries import optimizers
    data = RNG.standard_normal((40, 3))
    init, update, get_params = optimizers.momentum(0.05, mass=0.9)

    def epoch(key, state):
        def body(i, carry):
            key, state = carry
            key, noise_key = cr.random.split(key)
            batch = lax.dynamic_slice_in_dim(data, i * 8, 8)
            noise = 0.01 * cr.random.normal(noise_key, (3,))
            loss = lambda p: cr.sum((batch @ p["w"] + noise - 1.0) ** 2)
            return key, update(i, cr.grad(loss)(get_params(state)), state)
        return cr.fori_loop(0, 5, body, (key, state))[1]
    state = init({"w": np.zeros((3, 3))})
    key = cr.random.key(0)
    same(get_params(cr.jit(epoch)(key, state)), get_params(epoch(key, state)))
    assert "body, 5 steps" in str(cr.make_program(epoch)(key, state))


def test_a_jitted_while_loop_computes_its_condition_at_each_call():
    def f(x):
        return cr.while_loop(lambda v: cr.sum(v) < 100.0, lambda v: v * 2.0 + 0.5, x)
    jitted = cr.jit(f)
    for x in (np.array([1.0, 2.0]), np.array([0.01, 0.02]), np.array([300.0, 1.0])):
        np.testing.assert_array_equal(jitted(x), f(x))   # 6 steps, 11 steps, none
    listing = str(cr.make_program(f)(np.array([1.0, 2.0])))
    assert "while_loop" in listing and "# condition:" in listing
    assert listing.count("np.sum") == 1


def test_a_while_loop_with_a_counter_in_its_carry_and_a_closed_over_bound():
    def f(x, limit):
        return cr.while_loop(lambda c: c[1] < limit, lambda c: (c[0] * x, c[1] + 1),
                             (np.ones(2), 0))
    jitted = cr.jit(f)
    for limit in (3, 5):
        value, count = jitted(np.array([2.0, 3.0]), np.float64(limit))
        np.testing.assert_array_equal(value, [2.0 ** limit, 3.0 ** limit])
        assert count == limit


def test_a_body_reads_a_traced_value_of_the_enclosing_program():
    def f(w, h0, xs):
        scale = cr.exp(w)  # computed once, outside the loop, and read by the body
        return cr.scan(lambda h, x: (cr.tanh(h * scale + x), h), h0, xs)
    w, h0, xs = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal((5, 3))
    for g in (f, cr.grad(lambda w, h0, xs: cr.sum(f(w, h0, xs)[1]))):
        same(cr.jit(g)(w, h0, xs), g(w, h0, xs), rtol=1e-11)
    listing = str(cr.make_program(f)(w, h0, xs))
    assert listing.count("np.exp") == 1 and "read[0]" in listing


def test_a_replay_computes_anew_from_its_inputs():
    jitted = cr.jit(cr.grad(rnn_loss, argnums=(0, 1)))
    for _ in range(3):
        h0, xs = RNG.standard_normal(3), RNG.standard_normal((4, 2))
        same(jitted(h0, xs), cr.grad(rnn_loss, argnums=(0, 1))(h0, xs))


def test_random_draws_in_a_jitted_scan_move_with_the_key_as_eagerly():
    def noisy(key, h):
        def step(carry, _):
            key, h = carry
            key, sub = cr.random.split(key)
            return (key, h + cr.random.normal(sub, h.shape)), h
        return cr.scan(step, (key, h), None, length=5)
    jitted = cr.jit(noisy)
    for seed in (0, 1):
        (key, h), hs = jitted(cr.random.key(seed), np.zeros(3))
        (e_key, e_h), e_hs = noisy(cr.random.key(seed), np.zeros(3))
        np.testing.assert_array_equal(key, e_key)
        np.testing.assert_array_equal(hs, e_hs)
        assert len({tuple(row) for row in np.diff(hs, axis=0)}) == 4   # a new draw a step
    assert str(cr.make_program(noisy)(cr.random.key(0), np.zeros(3))).count("normal") <= 1


def test_loops_nest():
    def f(a, xs):
        inner = lambda c, x: (c + cr.fori_loop(0, 3, lambda i, v: v * a + x, c), None)
        return cr.scan(inner, np.zeros(2), xs)[0]
    a, xs = np.array([0.5, -0.25]), RNG.standard_normal((4, 2))
    same(cr.jit(f)(a, xs), f(a, xs))
    assert listing_length(f, a, xs) == listing_length(f, a, RNG.standard_normal((40, 2)))


def test_a_body_that_changes_its_carrys_kind_is_traced_step_by_step():
    # a Python float carry becomes a NumPy float: the body is not the same program at
    # every step, so the steps are recorded one by one (the eager result all the same)
    f = lambda x: cr.fori_loop(0, 3, lambda i, v: cr.tanh(v) + i, x)
    assert cr.jit(f)(0.5) == f(0.5)
    assert str(cr.make_program(f)(0.5)).count("tanh") == 3


def test_a_body_that_branches_on_data_raises_at_the_trace():
    f = lambda x: cr.scan(lambda c, x: (c + x if cr.sum(c) > 0 else c - x, None), x, x)
    with pytest.raises(TracingError, match="truth value"):
        cr.jit(f)(np.ones((2, 2)))


def test_a_while_loop_that_cannot_be_one_loop_says_why():
    f = lambda x: cr.while_loop(lambda v: v < 3.0, lambda v: cr.tanh(v) + 1.0, x)
    with pytest.raises(TypeError, match="cr.while_loop under cr.jit: .* carry"):
        cr.jit(f)(0.5)


# cond and switch with a choice computed from the data: the program runs every branch and
# chooses with where (as under cr.vmap), so each replay makes its own choice, for values
# and derivatives. The references are jax.jit of lax.cond / lax.switch.

def piecewise(x):
    return cr.cond(cr.sum(x) > 1.0, lambda x: cr.sin(x) * x, lambda x: x ** 3, x)


def three_ways(x):
    index = cr.sum(x).astype(int)          # clamped to the branches, as JAX clamps it
    return cr.switch(index, [lambda x: x * 2.0, cr.exp, lambda x: cr.cos(x) / 3.0], x)


@pytest.mark.parametrize("f, name", [(piecewise, "cond"), (three_ways, "switch")])
def test_cond_and_switch_choose_at_each_replay_as_jax_jit_does(f, name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    if name == "cond":
        theirs = lambda x: jax.lax.cond(jnp.sum(x) > 1.0, lambda x: jnp.sin(x) * x,
                                        lambda x: x ** 3, x)
    else:
        theirs = lambda x: jax.lax.switch(jnp.sum(x).astype(int), [
            lambda x: x * 2.0, jnp.exp, lambda x: jnp.cos(x) / 3.0], x)
    total, their_total = (lambda x: cr.sum(f(x))), (lambda x: jnp.sum(theirs(x)))
    ours = [cr.jit(f), cr.jit(cr.grad(total)), cr.jit(cr.hessian(total)),
            cr.jit(lambda x: cr.jvp(f, (x,), (np.ones(2),))[1])]
    reference = [jax.jit(theirs), jax.jit(jax.grad(their_total)),
                 jax.jit(jax.hessian(their_total)),
                 jax.jit(lambda x: jax.jvp(theirs, (x,), (jnp.ones(2),))[1])]
    # one trace, then replays on either side of each choice (switch: below 0 and past
    # the last branch too)
    for x in ([0.2, 0.3], [0.9, 0.8], [1.5, 0.7], [-2.0, 0.5], [4.0, 3.0]):
        x = np.array(x)
        for mine, its in zip(ours, reference):
            np.testing.assert_allclose(mine(x), np.asarray(its(x)), rtol=1e-13, atol=1e-15)
        np.testing.assert_array_equal(ours[0](x), f(x))     # the eager choice's numbers


def test_a_choice_from_the_data_needs_branches_of_one_structure_under_jit():
    with pytest.raises(TypeError, match="cond: with a choice made from the data.*same structure"):
        cr.jit(lambda x: cr.cond(x > 1.0, lambda x: (x, x), lambda x: x, x))(np.float64(2.0))
    # a choice the trace knows (a Python bool) still runs one branch
    assert cr.jit(lambda x: cr.cond(True, lambda x: (x, x), lambda x: x, x))(
        np.float64(2.0)) == (2.0, 2.0)

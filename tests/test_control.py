"""JAX's structured control flow (chainrule/transforms/control.py) against jax.lax
(float64): values, gradients, forward mode and second derivatives of loops written
with fori_loop and scan; while_loop, cond and switch; the dynamic slices."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import chainrule as cr
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(31)
W, U = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((2, 3)) * 0.5
XS = RNG.standard_normal((5, 2))


def rnn(lib, np_like, reverse=False):
    """A tanh RNN cell scanned over XS; the loss is the sum of squared hidden states."""
    def loss(h0):
        def cell(h, x):
            h = np_like.tanh(h @ W + x @ U)
            return h, np_like.sum(h * h)
        h, ys = lib.scan(cell, h0, XS, reverse=reverse)
        return np_like.sum(ys) + np_like.sum(h)
    return loss


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_of_an_rnn_cell_matches_jax_to_second_order(reverse):
    ours, theirs = rnn(cr, cr, reverse), rnn(lax, jnp, reverse)
    h0 = RNG.standard_normal(3)
    np.testing.assert_allclose(ours(h0), jax.jit(theirs)(h0), rtol=1e-12)
    np.testing.assert_allclose(cr.grad(ours)(h0), jax.jit(jax.grad(theirs))(h0), rtol=1e-11)
    np.testing.assert_allclose(cr.hessian(ours)(h0), jax.jit(jax.hessian(theirs))(h0),
                               rtol=1e-10)
    v = RNG.standard_normal(3)
    np.testing.assert_allclose(cr.jvp(ours, (h0,), (v,))[1],
                               jax.jit(lambda h0, v: jax.jvp(theirs, (h0,), (v,))[1])(h0, v),
                               rtol=1e-11)


def test_fori_loop_of_an_ode_step_matches_jax():
    def ours(k):
        return cr.fori_loop(0, 20, lambda i, y: y + 0.05 * (-k * y + cr.sin(0.1 * i)),
                            np.array([1.0, 2.0]))

    def theirs(k):
        return lax.fori_loop(0, 20, lambda i, y: y + 0.05 * (-k * y + jnp.sin(0.1 * i)),
                             jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(ours(0.7), jax.jit(theirs)(0.7), rtol=1e-13)
    np.testing.assert_allclose(cr.jacrev(ours)(0.7), jax.jit(jax.jacrev(theirs))(0.7),
                               rtol=1e-11)
    np.testing.assert_allclose(cr.jacfwd(cr.jacrev(ours))(0.7),
                               jax.jit(jax.jacfwd(jax.jacrev(theirs)))(0.7), rtol=1e-10)


def test_scan_over_a_tree_with_length_and_no_xs():
    carry, ys = cr.scan(lambda c, _: ((c[0] + 1, c[1] * 2), {"c": c[1]}), (0, 1.0), None,
                        length=4)
    j_carry, j_ys = lax.scan(lambda c, _: ((c[0] + 1, c[1] * 2), {"c": c[1]}), (0, 1.0),
                             None, length=4)
    assert carry == (4, 16.0) and tuple(map(float, j_carry)) == (4.0, 16.0)
    np.testing.assert_array_equal(ys["c"], j_ys["c"])
    xs = {"a": np.arange(3.0), "b": np.ones((3, 2))}
    _, out = cr.scan(lambda c, x: (c, x["a"] * x["b"]), 0.0, xs)
    _, j_out = lax.scan(lambda c, x: (c, x["a"] * x["b"]), 0.0, xs)
    np.testing.assert_array_equal(out, j_out)
    with pytest.raises(ValueError, match=r"scan: the leading axes of xs and length must agree"):
        cr.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=4)


def test_while_loop_cond_and_switch_as_jax():
    assert cr.while_loop(lambda v: v[0] < 5, lambda v: (v[0] + 1, v[1] * 1.5), (0, 1.0)) == \
        tuple(float(a) for a in lax.while_loop(lambda v: v[0] < 5,
                                               lambda v: (v[0] + 1, v[1] * 1.5), (0, 1.0)))
    for x in (-1.0, 2.0):
        assert cr.cond(x > 0, cr.exp, cr.sin, x) == pytest.approx(
            float(lax.cond(x > 0, jnp.exp, jnp.sin, x)), rel=1e-15)
        assert cr.grad(lambda x: cr.cond(x > 0, cr.exp, cr.sin, x))(x) == pytest.approx(
            float(jax.jit(jax.grad(lambda x: lax.cond(x > 0, jnp.exp, jnp.sin, x)))(x)),
            rel=1e-15)
    branches = [lambda x: x, lambda x: x * x, lambda x: -x]
    for index in (-3, 0, 1, 2, 9):  # clamped to the branches, as JAX
        assert cr.switch(index, branches, 3.0) == float(lax.switch(index, branches, 3.0))


def test_dynamic_slices_as_jax():
    x = np.arange(24.0).reshape(4, 6)
    for starts in ([1, 2], [3, 5], [-1, 0]):  # the starts clamped so that the slice fits
        np.testing.assert_array_equal(cr.dynamic_slice(x, starts, [2, 3]),
                                      lax.dynamic_slice(x, starts, [2, 3]))
        np.testing.assert_array_equal(
            cr.dynamic_update_slice(x, -np.ones((2, 3)), starts),
            lax.dynamic_update_slice(x, -jnp.ones((2, 3)), starts))
    grads = cr.grad(lambda x, u: cr.sum(cr.dynamic_update_slice(x, u, [1, 1]) ** 2),
                    argnums=(0, 1))(x, np.ones((2, 2)))
    j_grads = jax.jit(jax.grad(lambda x, u: jnp.sum(lax.dynamic_update_slice(x, u, [1, 1]) ** 2),
                               argnums=(0, 1)))(x, np.ones((2, 2)))
    for a, b in zip(grads, j_grads):
        np.testing.assert_allclose(a, b)
    with pytest.raises(ValueError, match="dynamic_slice: expected one start and one size per "
                                         "axis of the operand"):
        cr.dynamic_slice(x, [1], [2])


def test_under_jit_a_loop_with_python_bounds_is_traced_and_replayed():
    step = cr.jit(lambda y: cr.fori_loop(0, 3, lambda i, v: v * y + i, y))
    for y in (np.array([2.0]), np.array([0.5])):
        expected = y
        for i in range(3):
            expected = expected * y + i
        np.testing.assert_allclose(step(y), expected)


def test_xlas_precision_keyword_is_accepted_and_changes_nothing():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 2))
    np.testing.assert_array_equal(cr.dot(a, b, precision="highest"), cr.dot(a, b))
    np.testing.assert_array_equal(cr.matmul(a, b, precision=lax.Precision.HIGHEST), a @ b)
    np.testing.assert_allclose(cr.grad(lambda a: cr.sum(cr.dot(a, b, precision=None)))(a),
                               np.ones((2, 2)) @ b.T)


def test_scan_is_one_operation_of_the_graph_unless_f_closes_over_a_traced_value():
    h0 = cr.tensor(RNG.standard_normal(3), requires_grad=True)
    cell = lambda h, x: (cr.tanh(h @ W + x @ U), h.sum())
    h, ys = cr.scan(cell, h0, XS)
    names, stack = [], [ys.grad_fn]
    while stack:
        fn = stack.pop()
        names.append(fn.name())
        stack.extend(nxt for nxt, _ in fn.next_functions if nxt.name() != "AccumulateGrad")
    assert names.count("scan") == 1 and "tanh" not in names   # the steps are not nodes
    (ys.sum() + h.sum()).backward()
    j_grad = jax.jit(jax.grad(lambda h0: (lambda out: jnp.sum(out[1]) + jnp.sum(out[0]))(
        lax.scan(lambda h, x: (jnp.tanh(h @ W + x @ U), h.sum()), h0, XS))))(h0.data)
    np.testing.assert_allclose(h0.grad, j_grad, rtol=1e-12)

    def loss(w):  # the cell closes over w, which is differentiated: recorded step by step
        return cr.sum(cr.scan(lambda h, x: (cr.tanh(h @ w + x @ U), h), np.ones(3), XS)[1])

    def j_loss(w):
        return jnp.sum(lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ U), h), jnp.ones(3), XS)[1])
    np.testing.assert_allclose(cr.grad(loss)(W), jax.jit(jax.grad(j_loss))(W), rtol=1e-11)
    np.testing.assert_allclose(cr.hessian(loss)(W), jax.jit(jax.hessian(j_loss))(W),
                               rtol=1e-10)


def test_scan_in_xs_and_forward_mode_through_the_operation():
    def ours(xs):
        return cr.scan(lambda c, x: (c * cr.cos(x) + x, c * x), 0.5, xs)[1]

    def theirs(xs):
        return lax.scan(lambda c, x: (c * jnp.cos(x) + x, c * x), 0.5, xs)[1]
    xs = RNG.standard_normal(6)
    np.testing.assert_allclose(cr.jacrev(ours)(xs), jax.jit(jax.jacrev(theirs))(xs), rtol=1e-12)
    np.testing.assert_allclose(cr.jacfwd(ours)(xs), jax.jit(jax.jacfwd(theirs))(xs), rtol=1e-12)
    np.testing.assert_allclose(cr.hessian(lambda x: cr.sum(ours(x)))(xs),
                               jax.jit(jax.hessian(lambda x: jnp.sum(theirs(x))))(xs),
                               rtol=1e-10)


def test_a_scan_of_no_steps_gives_empty_stacks_as_jax_does():
    """The body is run once (on zeros) for the shapes and dtypes of its ys."""
    body = lambda c, x: (c + x, (c * x, cr.ones(2) * c))
    jbody = lambda c, x: (c + x, (c * x, jnp.ones(2) * c))
    carry, (a, b) = cr.scan(body, 1.5, np.zeros((0,)))
    j_carry, (ja, jb) = lax.scan(jbody, 1.5, jnp.zeros((0,)))
    assert float(carry) == float(j_carry) == 1.5
    assert np.shape(a) == ja.shape == (0,) and np.shape(b) == jb.shape == (0, 2)
    assert cr.grad(lambda c: cr.scan(body, c, np.zeros((0,)))[0])(1.5) == 1.0
    _, ys = cr.scan(lambda c, _: (c, c), np.ones(3), None, length=0)
    assert np.shape(ys) == (0, 3)

"""Indexed updates whose index names one entry more than once, against JAX (float64).

``x.at[i].set(v)`` writes each value in turn, so where ``i`` repeats an entry only the
last write stays in the result, and only that value has a derivative: the others are
overwritten and reach nothing (JAX's semantics, and NumPy's order of writes).
``x.at[i].add(v)`` adds every value, so each one's derivative is whatever reaches its
entry. Both are checked in every way a derivative is asked for: VJPs, JVPs, both
Jacobians, a Hessian through a nonlinearity, under ``vmap`` (the values, the array or
the index mapped; a gradient inside and outside the map) and under ``cr.jit``.
"""

import zlib

import numpy as np
import pytest

import chainrule as cr

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

S = slice(None)
# (shape of x, index, shape of the values written): each index repeats an entry
CASES = {
    "one entry twice": ((5,), (np.array([3, 3]),), ()),
    "interleaved": ((5,), (np.array([0, 2, 0, 2, 2]),), (5,)),
    "pairs of arrays": ((3, 4), (np.array([0, 2, 0]), np.array([1, 1, 1])), (3,)),
    "rows twice": ((3, 4), (np.array([1, 1]), S), (2, 4)),
    "columns twice": ((3, 4), (S, np.array([3, 0, 3])), (3, 3)),
    "arrays apart": ((2, 3, 4), (np.array([[0, 1], [0, 1]]), S, np.array([2, 2])),
                     (2, 2, 3)),
    "a list of indices": ((4,), ([1, 1, 2],), (3,)),
}
UPDATES = ["set", "add"]


def rng_for(*parts):
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def functions(update, index):
    """The update as a function of (x, v), in chainrule and in JAX."""
    index = index if len(index) > 1 else index[0]
    jindex = tuple(jnp.asarray(p) if isinstance(p, (np.ndarray, list)) else p
                   for p in (index if isinstance(index, tuple) else (index,)))
    jindex = jindex if isinstance(index, tuple) else jindex[0]

    def mine(x, v):
        x = x if hasattr(x, "at") else cr.tensor(x)  # (a tracer has .at too)
        return getattr(x.at[index], update)(v)

    def theirs(x, v):
        return getattr(jnp.asarray(x).at[jindex], update)(v)
    return mine, theirs


def inputs(name, update):
    shape, _, value_shape = CASES[name]
    rng = rng_for(name, update)
    return rng.standard_normal(shape), rng.standard_normal(value_shape), rng


def close(mine, theirs):
    mine = [np.asarray(getattr(m, "data", m)) for m in cr.tree_flatten(mine)[0]]
    theirs = [np.asarray(t) for t in jax.tree_util.tree_leaves(theirs)]
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert m.shape == t.shape, (m.shape, t.shape)
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("name", CASES)
def test_value_vjp_and_jvp(name, update):
    x, v, rng = inputs(name, update)
    mine, theirs = functions(update, CASES[name][1])
    out, pullback = cr.vjp(mine, x, v)
    j_out, j_pullback = jax.vjp(theirs, x, v)
    close(out, j_out)
    w = rng.standard_normal(np.shape(j_out))
    close(pullback(w), j_pullback(w))
    tx, tv = rng.standard_normal(x.shape), rng.standard_normal(v.shape)
    close(cr.jvp(mine, (x, v), (tx, tv)), jax.jvp(theirs, (x, v), (tx, tv)))


@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("name", CASES)
def test_jacobians_and_a_hessian(name, update):
    x, v, _ = inputs(name, update)
    mine, theirs = functions(update, CASES[name][1])
    for argnums in (0, 1):
        expected = jax.jacrev(theirs, argnums)(x, v)
        close(cr.jacrev(mine, argnums)(x, v), expected)
        close(cr.jacfwd(mine, argnums)(x, v), expected)
    curved = lambda f, sin, total: lambda x, v: total(sin(f(x, v ** 2)) * f(x ** 3, v))
    close(cr.hessian(curved(mine, cr.sin, cr.sum), (0, 1))(x, v),
          jax.hessian(curved(theirs, jnp.sin, jnp.sum), (0, 1))(x, v))


@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("name", CASES)
def test_under_vmap_with_the_values_or_the_array_mapped(name, update):
    x, v, rng = inputs(name, update)
    mine, theirs = functions(update, CASES[name][1])
    xs = np.stack([x, 2 * x, -x])
    vs = np.stack([v, 0.5 * v, v + 1])
    for in_axes, args in (((None, 0), (x, vs)), ((0, None), (xs, v)), ((0, 0), (xs, vs))):
        close(cr.vmap(mine, in_axes)(*args), jax.vmap(theirs, in_axes)(*args))
        w = rng.standard_normal(np.shape(jax.vmap(theirs, in_axes)(*args)))
        loss = lambda f, vmap, total: lambda *a: total(vmap(f, in_axes)(*a) * w)
        close(cr.grad(loss(mine, cr.vmap, cr.sum), (0, 1))(*args),
              jax.grad(loss(theirs, jax.vmap, jnp.sum), (0, 1))(*args))
        per_example = lambda f, total, k: lambda a, b: total(f(a, b) * w[k])
        close(cr.vmap(cr.grad(per_example(mine, cr.sum, 0), (0, 1)), in_axes)(*args),
              jax.vmap(jax.grad(per_example(theirs, jnp.sum, 0), (0, 1)), in_axes)(*args))


@pytest.mark.parametrize("update", UPDATES)
def test_under_vmap_with_the_index_mapped(update):
    """Each example writes at its own places, repeated within the example."""
    rng = rng_for("mapped index", update)
    x, v = rng.standard_normal(5), rng.standard_normal((3, 4))
    index = np.array([[1, 1, 4, 1], [0, 2, 2, 0], [3, 3, 3, 3]])

    def mine(v, i):
        return getattr(cr.tensor(x).at[i], update)(v)

    def theirs(v, i):
        return getattr(jnp.asarray(x).at[i], update)(v)
    close(cr.vmap(mine)(v, index), jax.vmap(theirs)(v, index))
    w = rng.standard_normal((3, 5))
    close(cr.grad(lambda v: cr.sum(cr.vmap(mine)(v, index) * w))(v),
          jax.grad(lambda v: jnp.sum(jax.vmap(theirs)(v, index) * w))(v))
    close(cr.vmap(cr.grad(lambda v, i: cr.sum(cr.sin(mine(v, i)))))(v, index),
          jax.vmap(jax.grad(lambda v, i: jnp.sum(jnp.sin(theirs(v, i)))))(v, index))


@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("name", CASES)
def test_under_jit(name, update):
    x, v, rng = inputs(name, update)
    mine, theirs = functions(update, CASES[name][1])
    w = rng.standard_normal(np.shape(theirs(x, v)))
    loss = lambda f, total: lambda x, v: total(f(x, v) * w)
    jitted = cr.jit(cr.value_and_grad(loss(mine, cr.sum), (0, 1)))
    expected = jax.value_and_grad(loss(theirs, jnp.sum), (0, 1))
    for scale in (1.0, -2.0):  # a trace, then a replay on new numbers
        close(jitted(scale * x, scale * v), expected(scale * x, scale * v))


def test_the_tensor_engine_gives_the_last_write_its_gradient():
    """backward() through x.at[i].set(v), as the functional transforms do."""
    v = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = cr.zeros(4).at[np.array([2, 0, 2])].set(v)
    (y * cr.tensor([10.0, 20.0, 30.0, 40.0])).sum().backward()
    assert v.grad.tolist() == [0.0, 10.0, 30.0]
    assert y.data.tolist() == [2.0, 0.0, 3.0, 0.0]

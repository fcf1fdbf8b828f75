"""cr.vmap against jax.vmap (float64, 1e-10), and nested with every other transform."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.transforms import batching

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

TOL = 1e-10
rng = np.random.default_rng(0)


def close(ours, theirs):
    ours_leaves, theirs_leaves = cr.tree_flatten(ours)[0], jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=TOL, atol=TOL)


def both(f_cr, f_jax, *args, **options):
    close(cr.vmap(f_cr, **options)(*args), jax.vmap(f_jax, **options)(*args))


X = rng.normal(size=(4, 3))
Y = rng.normal(size=(4, 3))
M = rng.normal(size=(4, 3, 5))
W52 = rng.normal(size=(5, 2))

ELEMENTWISE = [
    (lambda x, y: x * y + x / (1.5 + y ** 2), None),
    (lambda x, y: cr.exp(x) - cr.tanh(y) * cr.sin(x), lambda x, y: jnp.exp(x) - jnp.tanh(y) * jnp.sin(x)),
    (lambda x, y: cr.maximum(x, y) + cr.where(x > y, x, 2 * y), lambda x, y: jnp.maximum(x, y) + jnp.where(x > y, x, 2 * y)),
    (lambda x, y: cr.relu(x) * cr.abs(y) + cr.sqrt(x ** 2 + 1), lambda x, y: jax.nn.relu(x) * jnp.abs(y) + jnp.sqrt(x ** 2 + 1)),
]


@pytest.mark.parametrize("k", range(len(ELEMENTWISE)))
def test_elementwise(k):
    f, g = ELEMENTWISE[k]
    both(f, g or f, X, Y)
    both(f, g or f, X, Y[0], in_axes=(0, None))
    both(f, g or f, X[:, 0], Y[0], in_axes=(0, None))   # a scalar example with a vector


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reductions(name, axis, keepdims):
    both(lambda m: getattr(cr, name)(m, axis=axis, keepdims=keepdims),
         lambda m: getattr(jnp, name)(m, axis=axis, keepdims=keepdims), M)


@pytest.mark.parametrize("axis", [0, -1])
def test_softmax_logsumexp_cumsum(axis):
    both(lambda m: cr.softmax(m, axis=axis), lambda m: jax.nn.softmax(m, axis=axis), M)
    both(lambda m: cr.log_softmax(m, axis=axis), lambda m: jax.nn.log_softmax(m, axis=axis), M)
    both(lambda m: cr.logsumexp(m, axis=axis), lambda m: jax.nn.logsumexp(m, axis=axis), M)
    both(lambda m: cr.cumsum(m, axis=axis), lambda m: jnp.cumsum(m, axis=axis), M)


SHAPES = {"s": (), "v": (3,), "m": (3, 3), "t": (2, 3, 3)}


@pytest.mark.parametrize("a", list(SHAPES))
@pytest.mark.parametrize("b", list(SHAPES))
@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0)])
def test_matmul_ranks(a, b, axes):
    if a == "s" or b == "s":
        return
    A = rng.normal(size=(4,) + SHAPES[a]) if axes[0] == 0 else rng.normal(size=SHAPES[a])
    B = rng.normal(size=(4,) + SHAPES[b]) if axes[1] == 0 else rng.normal(size=SHAPES[b])
    both(lambda p, q: p @ q, lambda p, q: p @ q, A, B, in_axes=axes)
    both(lambda p, q: cr.einsum("...ij,...jk->...ik", p, q) if False else cr.matmul(p, q),
         jnp.matmul, A, B, in_axes=axes)


def test_einsum_and_dot():
    both(lambda a, b: cr.einsum("ij,jk->ik", a, b), lambda a, b: jnp.einsum("ij,jk->ik", a, b),
         M, rng.normal(size=(5, 2)), in_axes=(0, None))
    both(lambda a, b: cr.einsum("ij,ij", a, b), lambda a, b: jnp.einsum("ij,ij", a, b), M, M)
    both(lambda a, b: cr.dot(a, b), jnp.dot, X, Y)
    both(lambda a, b: cr.outer(a, b), jnp.outer, X, Y)


INDICES = [1, -1, slice(1, None), (Ellipsis, 0), (None, slice(None), 1), np.array([2, 0]),
           (np.array([0, 2]), slice(None), np.array([1, 3])), (1, slice(None), np.array([0, 4])),
           (slice(None), np.array([True, False, True, True, False]))]


@pytest.mark.parametrize("k", range(len(INDICES)))
def test_indexing(k):
    T = rng.normal(size=(4, 3, 2, 5))
    index = INDICES[k]
    if k == 8:
        T = rng.normal(size=(4, 3, 5))
    both(lambda t: t[index], lambda t: t[index], T)
    both(lambda t: t.at[index].set(0.0), lambda t: t.at[index].set(0.0), T)
    both(lambda t: t.at[index].add(t[index] * 2), lambda t: t.at[index].add(t[index] * 2), T)


def test_shapes():
    T = rng.normal(size=(4, 3, 2, 5))
    both(lambda t: t.reshape(6, 5), lambda t: t.reshape(6, 5), T)
    both(lambda t: t.reshape(-1), lambda t: t.reshape(-1), T)
    both(lambda t: t.T, lambda t: t.T, T)
    both(lambda t: cr.transpose(t, (1, 2, 0)), lambda t: jnp.transpose(t, (1, 2, 0)), T)
    both(lambda t: cr.swapaxes(t, 0, -1), lambda t: jnp.swapaxes(t, 0, -1), T)
    both(lambda t: cr.expand_dims(t, (0, -1)), lambda t: jnp.expand_dims(t, (0, -1)), T)
    both(lambda t: cr.squeeze(t[:, :1]), lambda t: jnp.squeeze(t[:, :1]), T)
    both(lambda t: cr.broadcast_to(t[0, 0], (2, 3, 5)), lambda t: jnp.broadcast_to(t[0, 0], (2, 3, 5)), T)
    both(lambda a, b: cr.concatenate([a, b, a], axis=-1), lambda a, b: jnp.concatenate([a, b, a], axis=-1), X, Y)
    both(lambda a, b: cr.concatenate([a, b], axis=None), lambda a, b: jnp.concatenate([a, b], axis=None), M, M)
    both(lambda a, b: cr.stack([a, b], axis=1), lambda a, b: jnp.stack([a, b], axis=1), X, Y[0], in_axes=(0, None))
    both(lambda a: cr.flip(a, 0) + cr.roll(a, 1), lambda a: jnp.flip(a, 0) + jnp.roll(a, 1), X)


def test_linear_algebra():
    A = rng.normal(size=(4, 3, 3)) + 3 * np.eye(3)
    S = A @ np.swapaxes(A, -1, -2)
    both(cr.linalg.inv, jnp.linalg.inv, A)
    both(cr.linalg.det, jnp.linalg.det, A)
    both(lambda a: cr.linalg.slogdet(a)[1], lambda a: jnp.linalg.slogdet(a)[1], A)
    both(cr.linalg.cholesky, jnp.linalg.cholesky, S)
    both(cr.linalg.eigvalsh, jnp.linalg.eigvalsh, S)
    both(lambda a, b: cr.linalg.solve(a, b), jnp.linalg.solve, A, X[:, :3] if False else rng.normal(size=(4, 3)))
    both(lambda a, b: cr.linalg.solve(a, b), jnp.linalg.solve, A, rng.normal(size=3), in_axes=(0, None))
    both(lambda a, b: cr.linalg.solve(a, b), jnp.linalg.solve, A[0], rng.normal(size=(4, 3)), in_axes=(None, 0))


def test_in_axes_and_out_axes():
    T = rng.normal(size=(3, 4, 5))
    both(lambda t: t.sum(0), lambda t: t.sum(0), T, in_axes=1)
    both(lambda t: t.sum(0), lambda t: t.sum(0), T, in_axes=-1)
    both(lambda t, u: t * u, lambda t, u: t * u, T, T[:, :, 0], in_axes=(2, None))
    both(lambda t: t * 2, lambda t: t * 2, T, out_axes=1)
    both(lambda t: (t, t.sum()), lambda t: (t, t.sum()), T, out_axes=(-1, 0))
    tree = {"a": T, "b": (T[0], T[:, :, 0])}
    both(lambda d: d["a"].sum(0) * d["b"][0] + d["b"][1][0],
         lambda d: d["a"].sum(0) * d["b"][0] + d["b"][1][0], tree,
         in_axes=({"a": 1, "b": (0, 1)},))
    both(lambda t, c: t * c, lambda t, c: t * c, T, 2.0, in_axes=(0, None))
    close(cr.vmap(lambda: 1.0 * np.ones(2), axis_size=3)(),
          jax.vmap(lambda: jnp.ones(2), axis_size=3)())
    close(cr.vmap(lambda t: (t, 5.0 * np.ones(2)), out_axes=(0, None))(T),
          jax.vmap(lambda t: (t, 5.0 * jnp.ones(2)), out_axes=(0, None))(T))


def mlp_loss(params, x, y, np_=cr):
    (w1, b1), (w2, b2) = params
    h = np_.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np_.mean((out - y) ** 2) + 0.1 * np_.sum(np_.maximum(out, 0.0))


def test_per_example_gradients_of_an_mlp():
    params = [(rng.normal(size=(3, 8)), rng.normal(size=8)), (rng.normal(size=(8, 2)), rng.normal(size=2))]
    xs, ys = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    ours = cr.vmap(cr.grad(mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
    theirs = jax.vmap(jax.grad(lambda p, x, y: mlp_loss(p, x, y, jnp)), in_axes=(None, 0, 0))(
        params, xs, ys)
    close(ours, theirs)
    norms = cr.vmap(lambda x, y: sum(cr.sum(g ** 2) for g in cr.tree_flatten(
        cr.grad(mlp_loss)(params, x, y))[0]))(xs, ys)
    assert norms.shape == (6,)


def f_scalar(x):
    return cr.sum(cr.sin(x) * x ** 2) if not isinstance(x, jax.Array) else jnp.sum(jnp.sin(x) * x ** 2)


def fj(x):
    return jnp.sum(jnp.sin(x) * x ** 2)


def fc(x):
    return cr.sum(cr.sin(x) * x ** 2)


def test_nesting_orders():
    close(cr.vmap(cr.grad(fc))(X), jax.vmap(jax.grad(fj))(X))
    close(cr.grad(lambda x: cr.sum(cr.vmap(fc)(x)))(X), jax.grad(lambda x: jnp.sum(jax.vmap(fj)(x)))(X))
    close(cr.vmap(cr.vmap(lambda a: a * cr.sum(a)))(M), jax.vmap(jax.vmap(lambda a: a * jnp.sum(a)))(M))
    close(cr.vmap(cr.vmap(lambda a, b: a @ b, in_axes=(0, None)), in_axes=(0, None))(M, W52),
          jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(0, None)), in_axes=(0, None))(M, W52))
    g = lambda x: cr.tanh(x) * cr.sum(x)
    gj = lambda x: jnp.tanh(x) * jnp.sum(x)
    close(cr.vmap(cr.jacfwd(g))(X), jax.vmap(jax.jacfwd(gj))(X))
    close(cr.vmap(cr.jacrev(g))(X), jax.vmap(jax.jacrev(gj))(X))
    close(cr.vmap(cr.hessian(fc))(X), jax.vmap(jax.hessian(fj))(X))
    close(cr.jacfwd(cr.vmap(g))(X[:2]), jax.jacfwd(jax.vmap(gj))(X[:2]))
    close(cr.vmap(lambda x, t: cr.jvp(g, (x,), (t,))[1])(X, Y),
          jax.vmap(lambda x, t: jax.jvp(gj, (x,), (t,))[1])(X, Y))


def test_jacrev_as_vmap_of_vjp():
    g = lambda x: cr.tanh(x) * cr.sum(x ** 2)
    x = X[0]
    out, f_vjp = cr.vjp(g, x)
    jac = cr.vmap(lambda v: f_vjp(v)[0])(np.eye(3))
    close(jac, jax.jacrev(lambda x: jnp.tanh(x) * jnp.sum(x ** 2))(x))


def test_jit_and_vmap():
    g = lambda x: cr.tanh(x) @ cr.ones(3) + cr.sum(x ** 2)
    gj = lambda x: jnp.tanh(x) @ jnp.ones(3) + jnp.sum(x ** 2)
    jitted = cr.jit(cr.vmap(g))
    close(jitted(X), jax.vmap(gj)(X))
    close(jitted(Y), jax.vmap(gj)(Y))
    # a jitted function without constants of its own traces the batch eagerly: correct
    close(cr.vmap(cr.jit(lambda x: cr.sum(x ** 2) * x))(X),
          jax.vmap(lambda x: jnp.sum(x ** 2) * x)(X))
    with pytest.raises(TypeError, match=r"write cr.jit\(cr.vmap\(f\)\)"):
        cr.vmap(cr.jit(g))(X)
    close(cr.jit(cr.vmap(cr.grad(g)))(X), jax.vmap(jax.grad(gj))(X))


def test_fallback_is_counted_and_correct():
    cube = cr.Primitive(lambda x: np.sort(x) ** 3, "sorted_cube")
    cube.defvjp(lambda g, ans, x: g)
    before = batching.fallbacks["sorted_cube"]
    out = cr.vmap(cube)(X)
    assert batching.fallbacks["sorted_cube"] == before + 1
    np.testing.assert_allclose(out, np.sort(X, axis=1) ** 3, rtol=TOL)
    counts = batching.batching_rules()
    assert counts["rule"] > 90 and counts["fallback"] < 10


def test_comparisons_stay_batched():
    close(cr.vmap(lambda x: cr.where(x > 0, x, 0.0) + (x < 0.5) * 1.0)(X),
          jax.vmap(lambda x: jnp.where(x > 0, x, 0.0) + (x < 0.5) * 1.0)(X))
    with pytest.raises(TypeError, match="vmap"):
        cr.vmap(lambda x: x if x.sum() > 0 else -x)(X)


def test_random_draws_are_shared():
    draws = cr.vmap(lambda x: x * 0 + np.random.default_rng(1).normal(size=x.shape))(X)
    assert np.all(draws == draws[0])


def test_errors():
    with pytest.raises(ValueError, match=r"vmap: the mapped axes have different sizes.*4.*5"):
        cr.vmap(lambda a, b: a + b)(X, np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"vmap: in_axes 2 for an input of shape \(4, 3\)"):
        cr.vmap(lambda a: a, in_axes=2)(X)
    with pytest.raises(ValueError, match="vmap: in_axes has 1 entries .* 2 positional"):
        cr.vmap(lambda a, b: a, in_axes=(0,))(X, X)
    with pytest.raises(ValueError, match="vmap: in_axes .* does not match"):
        cr.vmap(lambda d: d, in_axes=({"x": 0},))({"y": X})
    with pytest.raises(ValueError, match="vmap: no input is mapped"):
        cr.vmap(lambda a: a, in_axes=None)(X)
    with pytest.raises(ValueError, match="vmap: out_axes None"):
        cr.vmap(lambda a: a, out_axes=None)(X)
    with pytest.raises(ValueError, match="axis_size=7"):
        cr.vmap(lambda a: a, axis_size=7)(X)
    with pytest.raises(ValueError, match="vmap: in_axes must be"):
        cr.vmap(lambda a: a, in_axes={"a": 0})

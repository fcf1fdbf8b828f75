"""cr.vmap against jax.vmap (float64, 1e-10), and nested with every other transform."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.transforms import batching
from seeds_and_tolerances import per_test_generator

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

TOL = 1e-10
rng = per_test_generator(0)


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


@pytest.mark.parametrize("subscripts", ["...j,jk->...k", "...j,jk", "...ij,...j->...i",
                                        "...ii->...i", "i...,i..."])
def test_einsum_with_an_ellipsis_is_one_call_on_the_batch(subscripts):
    """'...' is spelled out one example at a time (its axes right-aligned, a 1 broadcast),
    then the batch gets a label of its own: one einsum, no loop over the examples."""
    a = np.arange(4 * 2 * 3 * 3, dtype=float).reshape(4, 2, 3, 3) / 10
    b = np.linspace(-1.0, 1.0, 3 * 3).reshape(1, 3, 3)[0] if subscripts.startswith("...j,") \
        else np.linspace(-1.0, 1.0, 4 * 3).reshape(4, 1, 3) if "...ij" in subscripts \
        else a
    operands = (a,) if subscripts == "...ii->...i" else (a, b)
    in_axes = (0, None) if subscripts.startswith("...j,") else 0
    before = dict(batching.fallbacks)
    both(lambda *xs: cr.einsum(subscripts, *xs),
         lambda *xs: jnp.einsum(subscripts, *xs), *operands, in_axes=in_axes)
    assert dict(batching.fallbacks) == before


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
          jax.jit(jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(0, None)), in_axes=(0, None)))(M, W52))
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
    # a jit inside a map runs its function for the map (as jax.vmap(jax.jit(f)) does)
    close(cr.vmap(cr.jit(g))(X), jax.vmap(jax.jit(gj))(X))
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


# ---------------------------------------------------------------------------------------
# A batched index: one index per example (an embedding lookup, a gather, the scatter of
# indexing's backward pass), the indexed array mapped too or shared
# ---------------------------------------------------------------------------------------

# (name, f(x, i) in the same words for both libraries, one example's x shape, the batch
# of indices); B = 4 examples. Negative indices, slices, Ellipsis and None among them.
B = 4
GATHERS = [
    ("rows", lambda x, i: x[i], (5, 3), np.array([[0, 4], [2, 2], [-1, 3], [1, -5]])),
    ("one row", lambda x, i: x[i], (5, 3), np.array([3, 0, -2, 4])),
    ("rows 2-d", lambda x, i: x[i], (5, 3), rng.integers(-5, 5, size=(B, 2, 3))),
    ("columns", lambda x, i: x[:, i], (3, 5), np.array([[0, 4], [2, 2], [-1, 3], [1, 1]])),
    ("rows then a slice", lambda x, i: x[i, 1:3], (5, 4), np.array([[0, 4], [2, 2], [-1, 3], [1, 1]])),
    ("pairs", lambda x, i: x[i, np.array([1, 0])], (5, 3), np.array([[0, 4], [2, 2], [-1, 3], [1, 1]])),
    ("apart", lambda x, i: x[1, :, i], (3, 4, 5), np.array([[0, 4], [2, 2], [-1, 3], [1, 1]])),
    ("middle", lambda x, i: x[:, i, :], (2, 5, 3), np.array([[0, 4, 1], [2, 2, 0], [-1, 3, 3], [1, 1, 1]])),
    ("ellipsis", lambda x, i: x[..., i], (2, 3, 5), np.array([[0, 4], [2, 2], [-1, 3], [1, 1]])),
    ("new axis", lambda x, i: x[None, i], (5, 3), np.array([[0, 4], [2, 2], [-1, 3], [1, 1]])),
]


def _gather(case, mapped_x):
    name, f, shape, index = case
    x = rng.normal(size=((B,) if mapped_x else ()) + shape)
    return f, x, index, (0 if mapped_x else None, 0)


@pytest.mark.parametrize("mapped_x", [False, True])
@pytest.mark.parametrize("case", GATHERS, ids=[c[0] for c in GATHERS])
def test_a_batched_index_gathers_as_jax_does(case, mapped_x):
    f, x, index, in_axes = _gather(case, mapped_x)
    before = dict(batching.fallbacks)
    close(cr.vmap(f, in_axes=in_axes)(cr.tensor(x), index),
          jax.vmap(f, in_axes=in_axes)(jnp.asarray(x), index))
    weights = rng.normal(size=np.shape(jax.vmap(f, in_axes=in_axes)(jnp.asarray(x), index)))

    def loss(np_):
        return lambda x, i, w: np_.sum(f(x, i) ** 2 * w)

    w_axes = in_axes + (0,)
    # per-example gradients, Jacobians and Hessian-vector products of the indexed array
    close(cr.vmap(cr.grad(loss(cr)), in_axes=w_axes)(x, index, weights),
          jax.jit(jax.vmap(jax.grad(loss(jnp)), in_axes=w_axes))(x, index, weights))
    close(cr.vmap(cr.jacfwd(f), in_axes=in_axes)(x, index),
          jax.jit(jax.vmap(jax.jacfwd(f), in_axes=in_axes))(x, index))
    close(cr.vmap(cr.jacrev(f), in_axes=in_axes)(x, index),
          jax.jit(jax.vmap(jax.jacrev(f), in_axes=in_axes))(x, index))
    close(cr.vmap(cr.hessian(loss(cr)), in_axes=w_axes)(x, index, weights),
          jax.jit(jax.vmap(jax.hessian(loss(jnp)), in_axes=w_axes))(x, index, weights))
    # the gradient of a mapped function, through the batched index
    close(cr.grad(lambda x: cr.sum(cr.vmap(f, in_axes=in_axes)(x, index) ** 2 * weights))(x),
          jax.jit(jax.grad(lambda x: jnp.sum(jax.vmap(f, in_axes=in_axes)(x, index) ** 2 * weights)))(x))
    # one gather (or one scatter for the gradient), never a loop over the examples
    assert dict(batching.fallbacks) == before


def test_an_embedding_lookup_per_example():
    W = rng.normal(size=(6, 3))
    tokens = np.array([[0, 5, 5], [1, 2, 3], [4, 0, 0], [-1, 2, 1]])
    close(cr.vmap(cr.grad(lambda W, i: cr.sum(W[i] ** 2)), in_axes=(None, 0))(W, tokens),
          jax.jit(jax.vmap(jax.grad(lambda W, i: jnp.sum(W[i] ** 2)), in_axes=(None, 0)))(W, tokens))
    _, tangents = cr.vmap(lambda i: cr.jvp(lambda W: W[i] ** 2, (W,), (np.ones_like(W),)))(tokens)
    _, expected = jax.vmap(lambda i: jax.jvp(lambda W: W[i] ** 2, (W,), (jnp.ones_like(W),)))(tokens)
    close(tangents, expected)


TAKES = [
    ("take", lambda np_: lambda x, i: np_.take(x, i, axis=1), np.array([[0, 3], [2, 2], [1, 0], [3, 3]])),
    ("take flat", lambda np_: lambda x, i: np_.take(x, i), np.array([[0, 11], [7, 7], [1, 0], [5, 3]])),
    ("take_along_axis", lambda np_: lambda x, i: np_.take_along_axis(x, i, axis=1),
     rng.integers(0, 4, size=(B, 3, 2))),
    ("take_along_axis 0", lambda np_: lambda x, i: np_.take_along_axis(x, i, axis=0),
     rng.integers(0, 3, size=(B, 2, 4))),
]


@pytest.mark.parametrize("mapped_x", [False, True])
@pytest.mark.parametrize("case", TAKES, ids=[c[0] for c in TAKES])
def test_take_with_batched_indices(case, mapped_x):
    _, f, index = case
    x = rng.normal(size=((B,) if mapped_x else ()) + (3, 4))
    in_axes = (0 if mapped_x else None, 0)
    close(cr.vmap(f(cr), in_axes=in_axes)(cr.tensor(x), index),
          jax.vmap(f(jnp), in_axes=in_axes)(jnp.asarray(x), index))
    close(cr.vmap(cr.jacrev(f(cr)), in_axes=in_axes)(x, index),
          jax.jit(jax.vmap(jax.jacrev(f(jnp)), in_axes=in_axes))(x, index))
    close(cr.vmap(cr.jacfwd(f(cr)), in_axes=in_axes)(x, index),
          jax.jit(jax.vmap(jax.jacfwd(f(jnp)), in_axes=in_axes))(x, index))
    close(cr.grad(lambda x: cr.sum(cr.vmap(f(cr), in_axes=in_axes)(x, index) ** 3))(x),
          jax.jit(jax.grad(lambda x: jnp.sum(jax.vmap(f(jnp), in_axes=in_axes)(x, index) ** 3)))(x))


SCATTERS = [  # x.at[i] updates, the index batched (unique per example for set)
    ("add", lambda x, i, v: x.at[i].add(v), np.array([[0, 4, 0], [2, 2, 2], [-1, 3, 1], [1, -5, 0]])),
    ("set", lambda x, i, v: x.at[i].set(v), np.array([[0, 4, 1], [2, 3, 1], [-1, 3, 1], [1, 0, 2]])),
    ("add columns", lambda x, i, v: x.at[:, i].add(v.T), np.array([[0, 2, 0], [2, 2, 2], [-1, 1, 1], [1, 0, 0]])),
    ("set apart", lambda x, i, v: x.at[i, :, 1].set(v),  # region: (i's 3, x's 3)
     np.array([[0, 4, 1], [2, 3, 1], [-1, 3, 2], [1, 0, 2]])),
    ("add apart", lambda x, i, v: x.at[i, :, -1].add(v[0]),
     np.array([[0, 4, 0], [2, 2, 2], [-1, 3, 1], [1, -5, 0]])),
]


@pytest.mark.parametrize("axes", [(0, 0, 0), (None, 0, 0), (0, 0, None), (None, 0, None)])
@pytest.mark.parametrize("case", SCATTERS, ids=[c[0] for c in SCATTERS])
def test_a_batched_index_scatters_as_jax_does(case, axes):
    name, f, index = case
    shape = {"set apart": (5, 3, 2), "add apart": (5, 3, 2), "add columns": (3, 5)}.get(name, (5, 3))
    x = rng.normal(size=((B,) if axes[0] == 0 else ()) + shape)
    v = rng.normal(size=((B,) if axes[2] == 0 else ()) + (3, 3))
    before = dict(batching.fallbacks)
    close(cr.vmap(f, in_axes=axes)(cr.tensor(x), index, cr.tensor(v)),
          jax.vmap(f, in_axes=axes)(jnp.asarray(x), index, jnp.asarray(v)))
    for argnums in (0, 2):  # per-example derivatives of the array and the values
        ours, theirs = (cr.tensor(x), index, cr.tensor(v)), (jnp.asarray(x), index, v)
        close(cr.vmap(cr.jacrev(f, argnums=argnums), in_axes=axes)(*ours),
              jax.jit(jax.vmap(jax.jacrev(f, argnums=argnums), in_axes=axes))(*theirs))
        close(cr.vmap(cr.jacfwd(f, argnums=argnums), in_axes=axes)(*ours),
              jax.jit(jax.vmap(jax.jacfwd(f, argnums=argnums), in_axes=axes))(*theirs))
    close(cr.grad(lambda x, v: cr.sum(cr.vmap(f, in_axes=axes)(x, index, v) ** 2), (0, 1))(x, v),
          jax.jit(jax.grad(lambda x, v: jnp.sum(jax.vmap(f, in_axes=axes)(x, index, v) ** 2), (0, 1)))(x, v))
    assert dict(batching.fallbacks) == before


def test_an_index_computed_from_batched_data():
    """argsort and argmax of each example, then indexing with them: sort's backward
    scatters at an index that differs from example to example."""
    def top(np_):
        return lambda x: x[np_.argmax(x)] * np_.sort(x)[::-1][:2]

    before = dict(batching.fallbacks)
    close(cr.vmap(top(cr))(X), jax.vmap(top(jnp))(X))
    close(cr.vmap(cr.grad(lambda x: cr.sum(top(cr)(x) ** 2)))(X),
          jax.jit(jax.vmap(jax.grad(lambda x: jnp.sum(top(jnp)(x) ** 2))))(X))
    close(cr.vmap(cr.jacfwd(top(cr)))(X), jax.vmap(jax.jacfwd(top(jnp)))(X))
    close(cr.vmap(cr.hessian(lambda x: cr.sum(top(cr)(x) ** 3)))(X),
          jax.jit(jax.vmap(jax.hessian(lambda x: jnp.sum(top(jnp)(x) ** 3))))(X))
    close(cr.grad(lambda x: cr.sum(cr.vmap(top(cr))(x) ** 3))(X),
          jax.grad(lambda x: jnp.sum(jax.vmap(top(jnp))(x) ** 3))(X))
    close(cr.vmap(cr.grad(lambda x: cr.max(x) ** 2 + cr.sum(cr.sort(x) * x)))(X),
          jax.vmap(jax.grad(lambda x: jnp.max(x) ** 2 + jnp.sum(jnp.sort(x) * x)))(X))
    # argmax and argsort of a batch are one call each, never a loop over the examples
    assert dict(batching.fallbacks) == before
    for name in ("argmax", "argmin", "argsort"):
        for axis in (None, 0, -1):
            close(cr.vmap(lambda m: getattr(cr, name)(m, axis=axis))(M),
                  jax.vmap(lambda m: getattr(jnp, name)(m, axis=axis))(M))
    close(cr.vmap(lambda m: cr.take_along_axis(m, cr.argsort(m, axis=0), axis=0) ** 2)(M),
          jax.vmap(lambda m: jnp.take_along_axis(m, jnp.argsort(m, axis=0), axis=0) ** 2)(M))
    assert dict(batching.fallbacks) == before


def test_vmap_of_vmap_with_batched_indices():
    x = rng.normal(size=(2, 3, 5))
    index = rng.integers(-5, 5, size=(2, 3, 4))
    f = lambda x, i: x[i] ** 2  # noqa: E731
    close(cr.vmap(cr.vmap(f))(x, index), jax.vmap(jax.vmap(f))(x, index))
    close(cr.vmap(cr.vmap(f, in_axes=(None, 0)), in_axes=(0, 0))(x[:, 0], index),
          jax.vmap(jax.vmap(f, in_axes=(None, 0)), in_axes=(0, 0))(x[:, 0], index))
    close(cr.vmap(cr.vmap(f, in_axes=(0, None)), in_axes=(None, 0))(x[0], index[:, 0]),
          jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(None, 0))(x[0], index[:, 0]))
    close(cr.vmap(cr.vmap(cr.grad(lambda x, i: cr.sum(f(x, i)))))(x, index),
          jax.vmap(jax.vmap(jax.grad(lambda x, i: jnp.sum(f(x, i)))))(x, index))


def test_a_batched_boolean_mask_runs_example_by_example():
    """A mask computed from each example selects its own entries: no one gather can
    hold them, so the operation loops (counted), and where the examples' counts
    differ, a batch cannot hold their results (JAX refuses such a mask too)."""
    before = batching.fallbacks["getitem"]
    x = np.array([[1.0, -2.0, 3.0], [-1.0, 5.0, 6.0]])
    np.testing.assert_allclose(cr.vmap(lambda x: x[x > 0.0])(x), [[1.0, 3.0], [5.0, 6.0]])
    assert batching.fallbacks["getitem"] == before + 1
    with pytest.raises(ValueError, match=r"getitem gives results of different shapes.*"
                                         r"\(1,\), \(2,\).*cr.where"):
        cr.vmap(lambda x: cr.sum(x[x > 0.0]))(np.array([[1.0, -2.0, -3.0], [1.0, 2.0, -1.0]]))


def test_jacobians_of_an_index_whose_arrays_are_apart():
    """x[1, :, i]: NumPy puts the broadcast axes first, in front of a Jacobian's
    columns too; the rules index the columns by ranges so they stay in front."""
    x = rng.normal(size=(3, 4, 5))
    f = lambda x: x[1, :, np.array([[0, -1], [2, 2]])] ** 2  # noqa: E731
    close(cr.jacfwd(f)(x), jax.jacfwd(f)(x))
    close(cr.jacrev(f)(x), jax.jacrev(f)(x))
    close(cr.hessian(lambda x: cr.sum(f(x) ** 2))(x), jax.hessian(lambda x: jnp.sum(f(x) ** 2))(x))


def test_complex_parts_and_fourier_transforms_batch_in_one_call():
    """abs, angle, real, imag, conj and the FFTs have batching rules (the FFTs' axis
    moved past the batch): per-example gradients as JAX's, with no fallback."""
    import chainrule.numpy as cnp
    before = dict(batching.fallbacks)
    z = X[:, :2] + 1j * X[:, 1:]

    def f(x):
        spectrum = cnp.fft.rfft(x)
        return cr.sum(cr.abs(spectrum) ** 2 + cr.angle(spectrum)) + \
            cr.sum(cnp.fft.irfft(cnp.fft.fft(x * 1j, axis=0), n=4))

    def fj(x):
        spectrum = jnp.fft.rfft(x)
        return jnp.sum(jnp.abs(spectrum) ** 2 + jnp.angle(spectrum)) + \
            jnp.sum(jnp.fft.irfft(jnp.fft.fft(x * 1j, axis=0), n=4))

    def g(z):
        return cr.sum(cr.real(z) * cr.imag(z) + cr.abs(cr.conj(z) * z))

    def gj(z):
        return jnp.sum(jnp.real(z) * jnp.imag(z) + jnp.abs(jnp.conj(z) * z))
    close(cr.vmap(cr.grad(f))(X), jax.vmap(jax.grad(fj))(X))
    close(cr.vmap(cr.grad(g))(z), jax.vmap(jax.grad(gj))(z))
    assert dict(batching.fallbacks) == before


def _eig_invariant(np_, eig):
    """A real function of eig's results that no choice of eigenvector phase changes:
    the eigenvalues, and each eigenvector's |v_j^H x|^2 / |v_j|^2."""
    x = np.array([0.3, -1.1, 0.7])

    def f(a):
        w, v = eig(a)
        overlap = np_.abs(np_.conj(v).T @ x) ** 2 / np_.sum(np_.abs(v) ** 2, axis=0)
        return np_.sum(np_.real(w) * overlap + np_.imag(w) ** 2)
    return f


def test_eig_and_eigvals_batch_in_one_call():
    """eig (and so eigvals) run once on the whole stack of matrices; per-example
    gradients and Jacobians as jax.vmap's, for complex matrices and real ones with
    complex eigenvalues, without a fallback."""
    jax_eig = lambda a: jax.lax.linalg.eig(  # noqa: E731  (#2748: jnp's has no eigvec derivative)
        a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    real = rng.normal(size=(4, 3, 3))
    complex_ = real + 1j * rng.normal(size=(4, 3, 3))
    before = dict(batching.fallbacks)
    f, fj = _eig_invariant(cr, cr.linalg.eig), _eig_invariant(jnp, jax_eig)
    for a in (real, complex_):
        close(cr.vmap(f)(a), jax.vmap(fj)(a))
        close(cr.vmap(cr.grad(f))(a), jax.vmap(jax.grad(fj))(a))
    close(cr.vmap(cr.jacfwd(f))(real), jax.vmap(jax.jacfwd(fj))(real))
    # the eigenvalues themselves: complex outputs, so jacfwd (JAX's jacrev refuses them)
    eigvals_j = lambda a: jax_eig(a)[0]  # noqa: E731
    close(cr.vmap(cr.linalg.eigvals)(complex_), jax.vmap(eigvals_j)(complex_))
    close(cr.vmap(cr.jacfwd(cr.linalg.eigvals, holomorphic=True))(complex_[:, :2, :2]),
          jax.vmap(jax.jacfwd(eigvals_j, holomorphic=True))(complex_[:, :2, :2]))
    assert dict(batching.fallbacks) == before


def test_products_with_the_hessian_and_the_jacobian_map_over_examples():
    """hvp and the matrix-free operators ask NumPy whether a value is complex, a question
    of the dtype, which a batch answers once for every example."""
    xs, v = rng.standard_normal((4, 3)), rng.standard_normal(3)
    loss = lambda x: cr.sum(cr.sin(x) * x ** 2)
    jloss = lambda x: jnp.sum(jnp.sin(x) * x ** 2)
    jhvp = lambda x: jax.jvp(jax.grad(jloss), (x,), (v,))[1]
    close(cr.vmap(lambda x: cr.hvp(loss, x, v))(xs), jax.vmap(jhvp)(xs))
    close(cr.vmap(lambda x: cr.hessian_operator(loss, x) @ v)(xs), jax.vmap(jhvp)(xs))
    close(cr.vmap(lambda x: cr.linear_operator(cr.tanh, x) @ v)(xs),
          jax.vmap(lambda x: jax.jvp(jnp.tanh, (x,), (v,))[1])(xs))
    assert cr.vmap(lambda z: np.iscomplexobj(z) and not np.isrealobj(z))(xs + 1j).all()
    # the gradient of a closed-over scale, per example, through the operator's products
    scale = lambda k: cr.sum(cr.hessian_operator(lambda x: cr.sum(x ** 3) * k, xs[0]) @ v)
    close(cr.vmap(cr.grad(scale))(np.array([0.5, 2.0])),
          np.full(2, np.sum(6 * xs[0] * v)))


def test_a_derivative_under_vmap_is_in_the_inputs_kind_when_f_closes_over_a_tensor():
    # a Tensor out of any graph (a layer's weights, cr.ones) taking part in f makes its
    # results Tensors, and a derivative of NumPy inputs hands back NumPy's arrays: mapped
    # over examples too, at every depth of vmap
    w = cr.tensor([1.0, 2.0])

    def f(x):
        return cr.sum(w * cr.sin(x) * x)
    X = rng.normal(size=(3, 2))
    expected = np.stack([cr.grad(f)(x) for x in X])
    for transform in (cr.vmap(cr.grad(f)), cr.jit(cr.vmap(cr.grad(f))),
                      lambda xs: cr.vmap(cr.jacfwd(f))(xs),
                      lambda xs: cr.vmap(cr.jacrev(f))(xs)):
        got = transform(X)
        assert type(got) is np.ndarray
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    twice = cr.vmap(cr.vmap(cr.grad(f)))(np.stack([X, 2 * X]))
    assert type(twice) is np.ndarray
    assert type(cr.vmap(cr.hessian(f))(X)) is np.ndarray
    # Tensor inputs give Tensors, as the derivative alone does
    assert isinstance(cr.vmap(cr.grad(f))(cr.tensor(X)), cr.Tensor)

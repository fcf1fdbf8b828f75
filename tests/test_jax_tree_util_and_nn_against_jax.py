"""The rest of ``jax.tree_util`` (``Partial``, ``register_static``, keyed registration,
the treedef questions, ``tree_broadcast``...) and of ``jax.nn`` (``log1mexp``,
``logmeanexp``, ``dot_product_attention``), each side by side with JAX's (float64)."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import chainrule as cr
import chainrule.jax_nn as jnn
from chainrule import tree_util as tu
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)
RNG = per_test_generator(77)
jtu = jax.tree_util


def test_every_name_of_jax_tree_util_but_its_registry_is_here():
    missing = {n for n in dir(jtu) if not n.startswith("_") and not hasattr(tu, n)}
    assert missing == {"default_registry"}


def test_partial_is_a_pytree_the_transforms_see_into():
    def affine(w, b, x):
        return cr.sum(w * x) + b

    bound = tu.Partial(affine, np.array([1.0, 2.0]), 0.5)
    theirs = jtu.Partial(lambda w, b, x: jnp.sum(w * x) + b, np.array([1.0, 2.0]), 0.5)
    x = RNG.standard_normal(2)
    assert bound(x) == pytest.approx(float(theirs(x)), rel=1e-14)
    assert len(tu.tree_leaves(bound)) == len(jtu.tree_leaves(theirs)) == 2
    grads = cr.grad(lambda p: p(x))(bound)
    jax_grads = jax.grad(lambda p: p(x))(theirs)
    np.testing.assert_allclose(grads.args[0], jax_grads.args[0], rtol=1e-14)
    assert grads.args[1] == pytest.approx(float(jax_grads.args[1]))
    assert cr.jit(lambda p, x: p(x))(bound, x) == pytest.approx(bound(x))
    twice = tu.Partial(tu.Partial(affine, np.ones(2)), 1.0)  # unwrapped, as JAX does
    assert twice.func is affine and len(twice.args) == 2


def test_register_static_and_keyed_classes_flatten_as_jaxs():
    for lib in (tu, jtu):
        @lib.register_static
        class Settings:
            def __eq__(self, other):
                return type(other) is type(self)

            def __hash__(self):
                return 0

        assert lib.tree_leaves([Settings(), 1.0, {"a": 2.0}]) == [1.0, 2.0]

    def make(lib):
        class Interval:
            def __init__(self, lo, hi):
                self.lo, self.hi = lo, hi

        lib.register_pytree_with_keys(
            Interval,
            lambda i: (((lib.GetAttrKey("lo"), i.lo), (lib.GetAttrKey("hi"), i.hi)), "aux"),
            lambda aux, children: Interval(*children))
        return Interval(1.0, 2.0)

    ours, theirs = make(tu), make(jtu)
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(ours)] == \
        [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(theirs)] == [".lo", ".hi"]
    assert cr.grad(lambda i: i.lo * i.hi)(ours).hi == 1.0

    def make_class(lib):
        @lib.register_pytree_with_keys_class
        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

            def tree_flatten_with_keys(self):
                return ((lib.DictKey("a"), self.a), (lib.DictKey("b"), self.b)), None

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)
        return Pair(3.0, 4.0)

    assert [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(make_class(tu))[0]] == \
        [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(make_class(jtu))[0]]


TREES = [
    1.0,
    None,
    (1.0, [2.0, 3.0]),
    [{"a": 1.0, "b": (2.0, None)}, 4.0],
    {"x": [1.0], "y": {"z": 2.0}},
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_the_questions_about_a_treedef_are_answered_as_jaxs(tree):
    ours, theirs = tu.tree_structure(tree), jtu.tree_structure(tree)
    assert tu.treedef_is_leaf(ours) == jtu.treedef_is_leaf(theirs)
    assert [tu.leaf_count(c) for c in tu.treedef_children(ours)] == \
        [c.num_leaves for c in jtu.treedef_children(theirs)]
    pair_ours = tu.treedef_tuple([ours, tu.tree_structure([0, 0])])
    pair_theirs = jtu.treedef_tuple([theirs, jtu.tree_structure([0, 0])])
    leaves = list(range(tu.leaf_count(pair_ours)))
    assert tu.tree_unflatten(pair_ours, leaves) == jtu.tree_unflatten(pair_theirs, leaves)
    if not tu.treedef_is_leaf(ours):
        children, _ = tu.flatten_one_level(tree)
        jax_children, _ = jtu.flatten_one_level(tree)
        assert list(children) == list(jax_children)
        assert [str(k) for k, _ in tu.flatten_one_level_with_keys(tree)[0]] == \
            [str(k) for k, _ in jtu.flatten_one_level_with_keys(tree)[0]]
    assert tu.all_leaves([tree]) == jtu.all_leaves([tree])
    assert tu.tree_reduce_associative(lambda a, b: a + b, tree, identity=0.0) == \
        jtu.tree_reduce_associative(lambda a, b: a + b, tree, identity=0.0)


def test_tree_broadcast_all_transpose_and_is_tree_node_as_jaxs():
    prefix, full = [1, {"a": 2}], [[3, 4], {"a": (5, 6)}]
    assert tu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    for tree in ([True, {"a": 1}], (1, [0])):
        assert tu.tree_all(tree) == jtu.tree_all(tree)
    steps = [{"t": 1, "obs": 3}, {"t": 2, "obs": 4}]
    assert tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure(steps[0]), steps) \
        == jtu.tree_transpose(jtu.tree_structure([0, 0]), jtu.tree_structure(steps[0]), steps)
    for typ in (dict, list, tuple, type(None), float, np.ndarray):
        assert tu.is_tree_node(typ) == jtu.is_tree_node(typ), typ
    with pytest.raises(ValueError, match="leaf"):
        tu.flatten_one_level(1.0)
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(lambda a, b: a + b, [])


def _agree(ours, theirs, x, rtol=1e-12):
    np.testing.assert_allclose(ours(x), theirs(x), rtol=rtol, atol=1e-14)
    np.testing.assert_allclose(cr.grad(lambda v: cr.sum(ours(v)))(x),
                               jax.grad(lambda v: jnp.sum(theirs(v)))(x), rtol=rtol, atol=1e-14)
    t = RNG.standard_normal(np.shape(x))
    np.testing.assert_allclose(cr.jvp(ours, (x,), (t,))[1], jax.jvp(theirs, (x,), (t,))[1],
                               rtol=rtol, atol=1e-14)
    second = cr.jvp(cr.grad(lambda v: cr.sum(ours(v))), (x,), (t,))[1]
    jax_second = jax.jvp(jax.grad(lambda v: jnp.sum(theirs(v))), (x,), (t,))[1]
    np.testing.assert_allclose(second, jax_second, rtol=1e-9, atol=1e-12)


def test_log1mexp_on_both_sides_of_log_2_as_jaxs():
    x = np.concatenate([RNG.uniform(1e-6, 0.69, 5), RNG.uniform(0.7, 40.0, 5)])
    _agree(jnn.log1mexp, jax.nn.log1mexp, x)


@pytest.mark.parametrize("axis, keepdims, where", [
    (None, False, None), (1, False, None), (0, True, None), (1, False, "mask")])
def test_logmeanexp_as_jaxs(axis, keepdims, where):
    x = RNG.standard_normal((3, 4)) * 30
    mask = RNG.random((3, 4)) > 0.3 if where else None
    if mask is not None:
        mask[:, 0] = True
    _agree(lambda v: jnn.logmeanexp(v, axis=axis, keepdims=keepdims, where=mask),
           lambda v: jax.nn.logmeanexp(v, axis=axis, keepdims=keepdims, where=mask), x)


def _attention_reference(q, k, v, keep, scale):
    """The formula in float64 NumPy, one head group at a time."""
    B, T, N, H = q.shape
    K = k.shape[2]
    out = np.zeros_like(q)
    for b in range(B):
        for n in range(N):
            logits = q[b, :, n] @ k[b, :, n // (N // K)].T * scale
            logits = np.where(keep[b, n], logits, -0.7 * float(np.finfo(np.float32).max))
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            out[b, :, n] = (p / p.sum(axis=1, keepdims=True)) @ v[b, :, n // (N // K)]
    return out


ATTENTION = [
    ("plain", {}),
    ("causal", {"is_causal": True}),
    ("window", {"local_window_size": (1, 2)}),
    ("window_int_and_scale", {"local_window_size": 1, "scale": 0.3}),
    ("lengths", {"query_seq_lengths": np.array([3, 5], np.int32),
                 "key_value_seq_lengths": np.array([6, 2], np.int32)}),
    ("mask_and_bias", {"mask": np.random.default_rng(5).random((2, 4, 5, 6)) > 0.3,
                       "bias": np.random.default_rng(6).standard_normal((4, 5, 6))}),
]


@pytest.mark.parametrize("name, options", ATTENTION, ids=[a[0] for a in ATTENTION])
def test_dot_product_attention_grouped_heads_and_masks_as_jaxs(name, options):
    q = RNG.standard_normal((2, 5, 4, 3))
    k, v = RNG.standard_normal((2, 6, 2, 3)), RNG.standard_normal((2, 6, 2, 3))
    ours = jnn.dot_product_attention(q, k, v, **options)
    # JAX takes the softmax in float32: its numbers are ours to float32's precision
    np.testing.assert_allclose(ours, jax.nn.dot_product_attention(q, k, v, **options),
                               atol=2e-6)
    if "bias" not in options and "query_seq_lengths" not in options:
        keep = np.ones((2, 4, 5, 6), bool)
        T, S = np.arange(5)[:, None], np.arange(6)[None, :]
        if options.get("is_causal"):
            keep &= S <= T
        if "local_window_size" in options:
            w = options["local_window_size"]
            left, right = (w, w) if isinstance(w, int) else w
            keep &= (T <= S + left) & (T >= S - right)
        if "mask" in options:
            keep &= options["mask"]
        np.testing.assert_allclose(ours, _attention_reference(
            q, k, v, keep, options.get("scale", 1 / np.sqrt(3))), rtol=1e-12, atol=1e-14)
    w = RNG.standard_normal(ours.shape)
    grads = cr.grad(lambda q, k, v: cr.sum(jnn.dot_product_attention(q, k, v, **options) * w),
                    argnums=(0, 1, 2))(q, k, v)
    jax_grads = jax.grad(lambda q, k, v: jnp.sum(jax.nn.dot_product_attention(
        q, k, v, **options) * w), argnums=(0, 1, 2))(q, k, v)
    for a, b in zip(grads, jax_grads):
        np.testing.assert_allclose(a, b, atol=2e-6)


def test_dot_product_attention_unbatched_residual_and_refusals():
    q = RNG.standard_normal((4, 2, 3))
    out, residual = jnn.dot_product_attention(q, q, q, return_residual=True)
    jax_out, jax_residual = jax.nn.dot_product_attention(q, q, q, return_residual=True)
    assert out.shape == jax_out.shape and residual.shape == jax_residual.shape
    np.testing.assert_allclose(residual, jax_residual, atol=2e-6)
    cr.gradcheck(lambda q: jnn.dot_product_attention(q, q, q, is_causal=True), q)
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        jnn.dot_product_attention(np.ones((1, 2, 3, 4)), np.ones((1, 2, 2, 4)),
                                  np.ones((1, 2, 2, 4)))
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        jnn.dot_product_attention(q, q, q, mask=np.ones((4, 4)))
    with pytest.raises(ValueError, match="cudnn"):
        jnn.dot_product_attention(q, q, q, implementation="cudnn")

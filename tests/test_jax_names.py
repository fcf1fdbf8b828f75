"""JAX's smaller names, against JAX 0.10.2: the key paths of chainrule.tree_util
(tree_flatten_with_path, keystr, tree_map_with_path, register_pytree_node_class),
chainrule.test_util.check_grads, lax.Precision, cr.jit's static_argnames passed by
position, and cr.Array."""

import dataclasses
from collections import namedtuple

import jax
import jax.numpy as jnp
import jax.test_util
import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import lax, tree_util
from chainrule.test_util import check_grads
from seeds_and_tolerances import per_test_generator

jax.config.update("jax_enable_x64", True)

RNG = per_test_generator(4404)
Point = namedtuple("Point", "x y")


@dataclasses.dataclass
class Affine:
    w: float
    b: float


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


cr.register_dataclass(Affine, ["w", "b"])
jax.tree_util.register_dataclass(Affine, ["w", "b"], [])
for _lib in (cr, jax.tree_util):
    _lib.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, c: Pair(*c))


def test_key_paths_and_keystr_as_jax():
    # keys in sorted order, so that JAX's sorting and chainrule's insertion order agree
    tree = {"a": Point(1.0, {"k": 2.0}), "d": Affine(3.0, 4.0), "p": Pair(5.0, 6.0),
            "z": [7.0, (8.0, None), {3: 9.0}]}
    ours, our_def = tree_util.tree_flatten_with_path(tree)
    theirs, _ = jax.tree_util.tree_flatten_with_path(tree)
    assert [leaf for _, leaf in ours] == [leaf for _, leaf in theirs]
    assert [repr(p) for p, _ in ours] == [repr(p) for p, _ in theirs]
    for simple, separator in [(False, ""), (True, "/"), (True, "")]:
        assert [tree_util.keystr(p, simple=simple, separator=separator) for p, _ in ours] == \
            [jax.tree_util.keystr(p, simple=simple, separator=separator) for p, _ in theirs]
    assert cr.tree_unflatten(our_def, [leaf for _, leaf in ours])["z"][2] == {3: 9.0}
    assert cr.tree_leaves_with_path(tree) == ours
    assert tree_util.DictKey("a") == tree_util.DictKey("a") != tree_util.SequenceKey("a")


def test_tree_map_with_path_and_is_leaf():
    tree = {"b": [1.0, 2.0], "w": np.ones(2)}
    ours = cr.tree_map_with_path(lambda p, x, y: (tree_util.keystr(p), x + y), tree, tree)
    theirs = jax.tree_util.tree_map_with_path(lambda p, x, y: (jax.tree_util.keystr(p), x + y),
                                              tree, tree)
    assert ours["b"] == theirs["b"] and ours["w"][0] == theirs["w"][0]
    pairs = cr.tree_flatten_with_path(tree, is_leaf=lambda n: isinstance(n, list))[0]
    assert [tree_util.keystr(p) for p, _ in pairs] == ["['b']", "['w']"]
    # JAX's is_leaf_takes_path: the predicate sees the path too
    pairs = cr.tree_flatten_with_path(tree, is_leaf=lambda p, n: len(p) == 1,
                                      is_leaf_takes_path=True)[0]
    assert [leaf for _, leaf in pairs][0] == [1.0, 2.0]


def test_register_pytree_node_class_as_jax():
    def make(register):
        @register
        class Scaled:
            def __init__(self, value, scale):
                self.value, self.scale = value, scale

            def tree_flatten(self):
                return (self.value,), self.scale

            @classmethod
            def tree_unflatten(cls, scale, children):
                return cls(children[0], scale)
        return Scaled
    ours = make(tree_util.register_pytree_node_class)
    theirs = make(jax.tree_util.register_pytree_node_class)
    g = cr.grad(lambda s: cr.sum(s.value ** 2) * s.scale)(ours(np.array([1.0, 2.0]), 3.0))
    h = jax.grad(lambda s: jnp.sum(s.value ** 2) * s.scale)(theirs(np.array([1.0, 2.0]), 3.0))
    np.testing.assert_allclose(g.value, h.value)
    assert g.scale == 3.0
    with pytest.raises(TypeError, match="register_pytree_node_class: Plain has no method"):
        tree_util.register_pytree_node_class(type("Plain", (), {}))


@pytest.mark.slow
def test_check_grads_passes_where_jaxs_does_and_catches_a_wrong_rule():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)

    def f(a, b):
        return {"s": cnp.sum(cnp.sin(a) * b), "v": cnp.tanh(a) * cnp.exp(b)}

    check_grads(f, (x, y), order=2)
    check_grads(lambda a: cnp.log1p(a ** 2), (x,), order=3, modes=("rev",))
    jax.test_util.check_grads(lambda a, b: {"s": jnp.sum(jnp.sin(a) * b),
                                            "v": jnp.tanh(a) * jnp.exp(b)}, (x, y), order=2)

    @cr.custom_jvp
    def wrong(a):
        return cnp.sin(a)

    wrong.defjvp(lambda primals, tangents: (cnp.sin(primals[0]), 1.1 * cnp.cos(primals[0])
                                            * tangents[0]))
    for modes in (("fwd",), ("rev",)):
        with pytest.raises(AssertionError, match="check_grads"):
            check_grads(wrong, (x,), order=1, modes=modes)
    with pytest.raises(ValueError, match="check_grads: modes"):
        check_grads(f, (x, y), order=1, modes=("sideways",))


def test_precision_is_jaxs_enum_and_accepted_by_the_products():
    assert [m.name for m in lax.Precision] == [m.name for m in jax.lax.Precision]
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
    for precision in (lax.Precision.HIGHEST, "high", (lax.Precision.DEFAULT,) * 2):
        np.testing.assert_allclose(cnp.dot(a, b, precision=precision), a @ b)
        np.testing.assert_allclose(cnp.matmul(a, b, precision=precision), a @ b)
        np.testing.assert_allclose(cnp.einsum("ij,jk->ik", a, b, precision=precision), a @ b)


def test_static_argnames_holds_for_an_argument_passed_by_position():
    traces = []

    def scaled(x, n, *, k=1):
        traces.append(n)
        return x * n * k if n > 1 else -x   # a Python branch on n: n must be static

    for g, h in [(cr.jit(scaled, static_argnames="n"), jax.jit(scaled, static_argnames="n")),
                 (cr.jit(scaled, static_argnums=1), jax.jit(scaled, static_argnums=1))]:
        traces.clear()
        x = np.arange(3.0)
        for call in (lambda f: f(x, 3), lambda f: f(x, n=3), lambda f: f(x, 0),
                     lambda f: f(x, 3, k=2)):
            np.testing.assert_allclose(call(g), call(h))
        assert g(x, 3).tolist() == [0.0, 3.0, 6.0]
    ks = cr.jit(scaled, static_argnames=("n", "k"))
    assert ks(np.ones(1), 2, k=5).tolist() == [10.0]


def test_cr_array_is_the_type_of_chainrule_numpy_results():
    x = cnp.array([1.0, 2.0])
    assert isinstance(x, cr.Array) and isinstance(cnp.sum(x), cr.Array)
    assert isinstance(cr.tensor([1.0]), cr.Array)
    assert not isinstance(1.0, cr.Array) and not isinstance([1.0], cr.Array)
    assert not isinstance(cr.Value(1.0), cr.Array)
    assert isinstance(jnp.ones(2), jax.Array) and not isinstance(1.0, jax.Array)
    seen = []

    def f(v: cr.Array) -> cr.Array:
        seen.append(isinstance(v, cr.Array))
        return cnp.sum(v ** 2)
    cr.grad(f)(x)
    cr.vmap(f)(np.ones((2, 2)))
    cr.jit(f)(x)
    cr.jvp(f, (x,), (x,))
    assert seen == [True] * 4
    assert issubclass(np.ndarray, cr.Array) and not issubclass(float, cr.Array)
    with pytest.raises(TypeError, match="cr.Array is a type"):
        cr.Array([1.0])

"""The tree utilities (chainrule/transforms/pytrees.py) against jax.tree_util: the same
leaves, the same maps over several trees, registered classes, NamedTuples, and the
transforms differentiating through each kind of node."""

import dataclasses
from typing import NamedTuple

import jax
import numpy as np
import pytest

import chainrule as cr


class Pair(NamedTuple):
    first: object
    second: object


TREES = [  # (dict keys in sorted order: JAX sorts them, chainrule keeps a dict's order)
    {"b": 3.0, "w": [1.0, 2.0]},
    [(1.0, None), {"a": 2.0}, [[3.0]]],
    Pair(1.0, [2.0, 3.0]),
    (None, 4.0, ()),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_leaves_map_and_reduce_as_jax(tree):
    assert cr.tree_leaves(tree) == jax.tree_util.tree_leaves(tree)
    doubled = cr.tree_map(lambda x: 2 * x, tree)
    assert doubled == jax.tree_util.tree_map(lambda x: 2 * x, tree)
    assert type(doubled) is type(tree)
    summed = cr.tree_map(lambda x, y: x + y, tree, doubled)
    assert summed == jax.tree_util.tree_map(lambda x, y: x + y, tree, doubled)
    if cr.tree_leaves(tree):
        assert cr.tree_reduce(lambda a, b: a + b, tree) == \
            jax.tree_util.tree_reduce(lambda a, b: a + b, tree)
    assert cr.tree_reduce(lambda a, b: a + b, tree, 10.0) == \
        jax.tree_util.tree_reduce(lambda a, b: a + b, tree, 10.0)
    assert cr.tree_structure(tree) == cr.tree_structure(doubled)


def test_a_dict_keeps_its_order_where_jax_sorts_its_keys():
    tree = {"w": 1.0, "b": 2.0}
    assert cr.tree_leaves(tree) == [1.0, 2.0]
    assert jax.tree_util.tree_leaves(tree) == [2.0, 1.0]
    assert cr.tree_map(lambda x: x, tree) == jax.tree_util.tree_map(lambda x: x, tree)


def test_a_map_over_a_tree_whose_prefix_is_the_first_and_is_leaf():
    first = {"a": 1.0, "b": 2.0}
    second = {"a": [1.0, 2.0], "b": (3.0,)}
    ours = cr.tree_map(lambda x, y: (x, y), first, second)
    assert ours == jax.tree_util.tree_map(lambda x, y: (x, y), first, second)
    is_pair = lambda node: isinstance(node, tuple) and len(node) == 2
    tree = {"p": (1.0, 2.0), "q": [3.0]}
    assert cr.tree_leaves(tree, is_leaf=is_pair) == \
        jax.tree_util.tree_leaves(tree, is_leaf=is_pair)
    assert cr.tree_map(lambda p: sum(p) if isinstance(p, tuple) else p, tree,
                       is_leaf=is_pair) == {"p": 3.0, "q": [3.0]}
    with pytest.raises(ValueError, match=r"tree_map: the trees differ: a dict with keys "
                                         r"\['a', 'b'\] in the first"):
        cr.tree_map(lambda x, y: x, first, {"a": 1.0})


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


cr.register_pytree_node(Point, lambda p: ((p.x, p.y), "meta"),
                        lambda aux, children: Point(*children))


@dataclasses.dataclass
class Layer:
    weight: object
    bias: object
    name: str = "layer"


cr.register_dataclass(Layer, ["weight", "bias"], ["name"])


def test_registered_classes_are_nodes_the_transforms_go_through():
    point = Point(2.0, 3.0)
    assert cr.tree_leaves(point) == [2.0, 3.0]
    moved = cr.tree_map(lambda v: v + 1, point)
    assert isinstance(moved, Point) and (moved.x, moved.y) == (3.0, 4.0)
    grad = cr.grad(lambda p: p.x ** 2 * p.y)(point)
    assert isinstance(grad, Point) and (grad.x, grad.y) == (12.0, 4.0)
    layer = Layer(np.array([1.0, 2.0]), 0.5, "dense")
    g = cr.grad(lambda l: cr.sum(l.weight ** 2) + l.bias)(layer)
    assert isinstance(g, Layer) and g.name == "dense"
    np.testing.assert_array_equal(g.weight, [2.0, 4.0])
    assert g.bias == 1.0


def test_a_dataclass_that_is_not_registered_is_a_leaf_as_in_jax():
    @dataclasses.dataclass
    class Plain:
        value: float

    plain = Plain(1.0)
    assert cr.tree_leaves([plain]) == jax.tree_util.tree_leaves([plain]) == [plain]


def test_a_namedtuple_keeps_its_type_through_grad():
    g = cr.grad(lambda p: p.first * p.second)(Pair(2.0, 5.0))
    assert g == Pair(5.0, 2.0)


def test_a_registered_named_tuple_is_flattened_by_its_registration():
    """A NamedTuple is a node by default; registered, its own flatten decides (JAX's
    optimizer state keeps its tree structure as static data this way)."""
    from typing import NamedTuple

    class State(NamedTuple):
        arrays: list
        meta: str
    state = State([np.ones(2), np.zeros(1)], "static")
    assert len(cr.tree_leaves(state)) == 3          # as a tuple: "static" is a leaf
    cr.register_pytree_node(State, lambda s: ((s.arrays,), s.meta),
                            lambda meta, children: State(children[0], meta))
    leaves, treedef = cr.tree_flatten(state)
    assert len(leaves) == 2
    assert cr.tree_unflatten(treedef, [2 * x for x in leaves]).meta == "static"


def test_named_tuples_and_registered_nodes_are_traced_arguments_and_results_of_jit():
    from typing import NamedTuple

    class Pair(NamedTuple):
        a: np.ndarray
        b: np.ndarray
    step = cr.jit(lambda p: Pair(p.b * 2.0, p.a + 1.0))
    for k in range(3):  # one trace, replayed with new numbers (not frozen constants)
        out = step(Pair(np.full(2, float(k)), np.ones(2)))
        assert type(out) is Pair
        np.testing.assert_array_equal(out.a, np.full(2, 2.0))
        np.testing.assert_array_equal(out.b, np.full(2, k + 1.0))
    assert len(step._programs) == 1


def test_a_tangent_cotangent_or_direction_dict_pairs_by_key_whatever_its_order():
    """chainrule's dicts keep their order, but a second tree is matched to the first by
    key, as JAX (which sorts keys) does: never leaf by leaf in order."""
    jax = pytest.importorskip("jax")
    f = lambda d: d["a"] * 1.0 + d["b"] * 10.0
    point, swapped = {"a": 1.0, "b": 2.0}, {"b": 1.0, "a": 0.0}
    assert cr.jvp(f, (point,), (swapped,))[1] == float(jax.jvp(f, (point,), (swapped,))[1])
    _, pullback = cr.vjp(lambda x: {"a": x, "b": 10 * x}, 1.0)
    assert pullback({"b": 1.0, "a": 0.0}) == (10.0,)
    assert cr.hvp(lambda d: d["a"] ** 2 * d["b"], point, swapped) == {"a": 2.0, "b": 0.0}
    assert cr.tree_map(lambda x, y: x - y, point, swapped) == {"a": 1.0, "b": 1.0}
    with pytest.raises(ValueError, match="the trees differ"):
        cr.jvp(f, (point,), ({"c": 1.0, "a": 0.0},))

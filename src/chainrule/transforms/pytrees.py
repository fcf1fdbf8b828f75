"""Pytrees: tuples, lists and dicts of leaves, nested, as the transforms take them.

A model's parameters, a batch of inputs and labels, an optimizer's state: the
transforms take any of them as one argument, flatten it into its leaves, differentiate
with respect to each leaf, and rebuild the same containers around the results (JAX's
``jax.tree_util``, the few functions the transforms need).
"""

from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import rules as ops
from ..primitive import shape_of

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "ravel_pytree", "leaf_count", "LEAF",
           "PyTree", "TreeDef"]

# A pytree: a leaf (a number, an array, a Tensor or a Value), None (a subtree without
# leaves, as in JAX), or a tuple, list or dict of pytrees, nested to any depth. Any,
# because the type checkers cannot say "nested".
PyTree = Any
# What tree_flatten returns to rebuild the containers; its form is private.
TreeDef = Any


# A treedef is LEAF where a leaf goes, None where the tree held None, and
# (container type, children) for a container.
LEAF = "*"


def tree_flatten(tree: PyTree) -> tuple[list[Any], TreeDef]:
    """``(leaves, treedef)``: the leaves of nested tuples, lists and dicts, in order, and
    what rebuilds the containers (``tree_unflatten``).

    This is how the transforms take a model's parameters as one argument. None is a
    subtree without leaves, as in JAX: it stays in the structure, and the transforms
    pass it through (the gradient of a None input is None).

    >>> leaves, treedef = cr.tree_flatten({"w": [1.0, 2.0], "b": 3.0, "frozen": None})
    >>> leaves
    [1.0, 2.0, 3.0]
    >>> cr.tree_unflatten(treedef, [10.0, 20.0, 30.0])
    {'w': [10.0, 20.0], 'b': 30.0, 'frozen': None}
    """
    leaves = []
    return leaves, _walk(tree, leaves)


# (module-level, not nested: a nested recursive function refers to itself through its
# closure, a reference cycle left behind at every call)
def _walk(node, leaves):
    if node is None:
        return None
    if isinstance(node, (tuple, list)):
        return (type(node), [_walk(child, leaves) for child in node])
    if isinstance(node, dict):
        return (dict, [(key, _walk(child, leaves)) for key, child in node.items()])
    leaves.append(node)
    return LEAF


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> PyTree:
    """The inverse of ``tree_flatten``: the containers of ``treedef`` filled with ``leaves``.

    >>> params = {"w": 2.0, "b": 3.0}
    >>> leaves, treedef = cr.tree_flatten(params)
    >>> cr.tree_unflatten(treedef, [x * 10 for x in leaves])
    {'w': 20.0, 'b': 30.0}
    >>> cr.grad(lambda p: p["w"] * p["b"])(params)    # gradients come back the same way
    {'w': 3.0, 'b': 2.0}
    """
    return _build(treedef, iter(leaves))


def _build(node, leaves):
    if node is LEAF:
        return next(leaves)
    if node is None:
        return None
    kind, children = node
    if kind is dict:
        return {key: _build(child, leaves) for key, child in children}
    items = [_build(child, leaves) for child in children]
    return kind(*items) if hasattr(kind, "_fields") else kind(items)


def leaf_count(treedef):
    if treedef is LEAF:
        return 1
    if treedef is None:
        return 0
    kind, children = treedef
    return sum(leaf_count(child[1] if kind is dict else child) for child in children)


def tree_map(function, tree):
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [function(leaf) for leaf in leaves])


def ravel_pytree(tree: PyTree) -> tuple[Any, Any]:
    """``(vector, unravel)``: every leaf of ``tree`` raveled into one float vector, and
    the function that rebuilds the tree from a vector of that length. Both are
    differentiable, so an optimizer or a solver that works on vectors can work on a
    model's parameters. Dict entries go in the order of their sorted keys, as in JAX's
    ``ravel_pytree`` and autograd's ``flatten``.

    >>> vector, unravel = cr.ravel_pytree({"w": np.ones((2, 2)), "b": 3.0})
    >>> vector.tolist()
    [3.0, 1.0, 1.0, 1.0, 1.0]
    >>> unravel(vector * 2)["w"].tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    leaves, treedef = tree_flatten(tree)
    order = _sorted_positions(tree_unflatten(treedef, range(len(leaves))))
    shapes = [shape_of(leaf) for leaf in leaves]
    sizes = [int(np.prod(shape)) for shape in shapes]
    vector = ops.concatenate([ops.reshape(leaves[i], (-1,)) for i in order]) if leaves \
        else np.zeros(0)

    def unravel(flat):
        pieces, start = [None] * len(leaves), 0
        for i in order:
            pieces[i] = ops.reshape(flat[start:start + sizes[i]], shapes[i])
            start += sizes[i]
        return tree_unflatten(treedef, pieces)
    return vector, unravel


def _sorted_positions(tree):
    """The leaves of a tree of leaf positions, dict entries by sorted key."""
    if isinstance(tree, dict):
        return [p for key in sorted(tree) for p in _sorted_positions(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [p for item in tree for p in _sorted_positions(item)]
    return [] if tree is None else [tree]

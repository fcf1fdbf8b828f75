"""``cr.tree``: JAX's ``jax.tree`` namespace, the pytree functions of ``pytrees.py``
(``cr.tree_util``) under their short names: ``cr.tree.map`` is ``cr.tree_map``,
``cr.tree.leaves`` is ``cr.tree_leaves``, and so on; ``all`` and ``transpose`` are
written here.

>>> cr.tree.map(lambda x: 2 * x, {"w": 1.0, "b": [2.0]})
{'w': 2.0, 'b': [4.0]}
"""

import builtins
from typing import Any, Callable

from .pytrees import (PyTree, TreeDef, leaf_count, leaves_up_to, tree_flatten,
                      tree_flatten_with_path, tree_leaves, tree_leaves_with_path, tree_map,
                      tree_map_with_path, tree_reduce, tree_structure, tree_unflatten)

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all",
           "transpose", "flatten_with_path", "leaves_with_path", "map_with_path"]

map = tree_map  # noqa: A001  (JAX's names)
leaves = tree_leaves
structure = tree_structure
flatten = tree_flatten
unflatten = tree_unflatten
reduce = tree_reduce
flatten_with_path = tree_flatten_with_path
leaves_with_path = tree_leaves_with_path
map_with_path = tree_map_with_path


def all(tree: PyTree, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:  # noqa: A001
    """Whether every leaf of ``tree`` is true (``jax.tree.all``).

    >>> cr.tree.all([True, {"a": 1}]), cr.tree.all((1, [0]))
    (True, False)
    """
    return builtins.all(tree_leaves(tree, is_leaf))


def transpose(outer_treedef: TreeDef, inner_treedef: TreeDef | None,
              pytree_to_transpose: PyTree) -> PyTree:
    """A tree of structure ``outer_treedef`` whose leaves are trees of structure
    ``inner_treedef`` turned into the inner structure with outer trees at its leaves
    (``jax.tree.transpose``; ``inner_treedef`` None: the first inner tree's).

    >>> steps = [{"t": 1, "obs": 3}, {"t": 2, "obs": 4}]
    >>> cr.tree.transpose(cr.tree.structure([0, 0]), cr.tree.structure(steps[0]), steps)
    {'t': [1, 2], 'obs': [3, 4]}
    """
    inners = leaves_up_to(outer_treedef, pytree_to_transpose, "tree.transpose")
    if inner_treedef is None:
        inner_treedef = tree_structure(inners[0]) if inners else tree_structure(None)
    table = [leaves_up_to(inner_treedef, inner, "tree.transpose") for inner in inners]
    count = leaf_count(inner_treedef)
    columns = [tree_unflatten(outer_treedef, [row[k] for row in table])
               for k in range(count)]
    return tree_unflatten(inner_treedef, columns)

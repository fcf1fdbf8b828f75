"""``chainrule.tree_util``, as JAX's ``jax.tree_util``: the pytree functions of
``pytrees.py`` (flatten, map, key paths, registering a class), with the rest of JAX's
module written here over them: ``Partial`` (a function with arguments bound, that
the transforms see into), ``register_static``, ``register_pytree_with_keys``, the
questions about a treedef (``treedef_children``, ``treedef_is_leaf``, ``treedef_tuple``),
``flatten_one_level``, ``tree_broadcast``, ``all_leaves``, ``is_tree_node`` and
``tree_reduce_associative``.

>>> from chainrule import tree_util
>>> scale = tree_util.Partial(lambda s, x: s * x, 3.0)
>>> cr.grad(lambda f: f(2.0))(scale).args       # the bound 3.0 is a leaf: d/ds = 2
(2.0,)
"""

import functools
from collections.abc import Callable, Hashable, Iterable
from typing import Annotated, Any, TypeVar

from .pytrees import *  # noqa: F401,F403  (jax.tree_util's names, written in pytrees.py)
from .pytrees import (_NODES, KEYED, LEAF, DictKey, FlattenedIndexKey, GetAttrKey, PyTree,
                      SequenceKey, TreeDef, __all__ as _PYTREES, _FIELDS, register_pytree_node,
                      tree_flatten, tree_leaves, tree_structure, tree_unflatten)
from .tree import all as tree_all, transpose as tree_transpose

__all__ = [*_PYTREES, "tree_all", "tree_transpose", "Partial", "register_static",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "all_leaves",
           "tree_broadcast", "is_tree_node", "treedef_is_leaf", "treedef_children",
           "treedef_tuple", "flatten_one_level", "flatten_one_level_with_keys",
           "tree_reduce_associative", "PyTreeDef", "KeyEntry", "KeyPath"]

_Class = TypeVar("_Class", bound=type)

PyTreeDef = TreeDef  # (JAX's type's name; the form is pytrees.py's)
# For the type checkers, Any and a tuple (as JAX's aliases), Annotated so that each
# carries its own docstring
KeyEntry = Annotated[Any, "key entry"]
KeyEntry.__doc__ = """One step of a key path: a ``DictKey``, ``SequenceKey``, ``GetAttrKey``,
``FlattenedIndexKey`` or a key a registered class chose (``jax.tree_util.KeyEntry``).

>>> path, leaf = cr.tree_util.tree_leaves_with_path({"w": [5.0]})[0]
>>> [type(entry).__name__ for entry in path]
['DictKey', 'SequenceKey']
"""
KeyPath = Annotated[tuple[Any, ...], "key path"]
KeyPath.__doc__ = """The key entries from a tree's root to one of its leaves, a tuple
(``jax.tree_util.KeyPath``); ``keystr`` prints it.

>>> path, leaf = cr.tree_util.tree_leaves_with_path({"w": [5.0]})[0]
>>> cr.tree_util.keystr(path), leaf
("['w'][0]", 5.0)
"""
__test__ = {"KeyEntry": KeyEntry.__doc__, "KeyPath": KeyPath.__doc__}


class Partial(functools.partial):
    """``functools.partial`` that is a pytree (``jax.tree_util.Partial``): the bound
    arguments are its children, the function is not. So a function with bound arrays
    passes through ``cr.jit``, ``vmap`` and ``grad`` as an argument, and the gradient
    reaches what it bound.

    >>> add_b = cr.tree_util.Partial(lambda b, x: x + b, np.ones(2))
    >>> cr.tree_util.tree_leaves(add_b)
    [array([1., 1.])]
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **kwargs: Any) -> "Partial":
        if isinstance(func, functools.partial):  # (as JAX: the inner one unwrapped)
            original = func
            func = func.func
            args = original.args + args
            kwargs = {**original.keywords, **kwargs}
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))


def register_static(cls: _Class) -> _Class:
    """Make ``cls``'s instances nodes with no children (``jax.tree_util.register_static``):
    the transforms pass them through as they are; they must be hashable. Returns cls.

    >>> @cr.tree_util.register_static
    ... class Config:
    ...     pass
    >>> cr.tree_util.tree_leaves([Config(), 1.0])
    [1.0]
    """
    register_pytree_node(cls, lambda node: ((), node), lambda node, _: node)
    return cls


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable[[Any], Any],
                              unflatten_func: Callable[[Any, Any], Any],
                              flatten_func: Callable[[Any], Any] | None = None) -> None:
    """Make ``nodetype`` a node whose children have keys of its own choosing
    (``jax.tree_util.register_pytree_with_keys``): ``flatten_with_keys(node)`` gives
    ``([(key, child)...], aux)``, which the key paths show; ``flatten_func`` (optional)
    the same without the keys.

    >>> class Box2:
    ...     def __init__(self, lo, hi):
    ...         self.lo, self.hi = lo, hi
    >>> cr.tree_util.register_pytree_with_keys(
    ...     Box2, lambda b: (((cr.tree_util.GetAttrKey("lo"), b.lo),
    ...                       (cr.tree_util.GetAttrKey("hi"), b.hi)), None),
    ...     lambda aux, children: Box2(*children))
    >>> [cr.tree_util.keystr(p) for p, _ in cr.tree_util.tree_leaves_with_path(Box2(0, 1))]
    ['.lo', '.hi']
    """
    if flatten_func is None:
        def flatten_func(node):
            pairs, aux = flatten_with_keys(node)
            return [child for _, child in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func)
    KEYED[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls: _Class) -> _Class:
    """A class decorator (``jax.tree_util.register_pytree_with_keys_class``): ``cls``
    flattens by its method ``tree_flatten_with_keys()`` (and ``tree_flatten()`` if it
    has one) and rebuilds by its class method ``tree_unflatten(aux, children)``.

    >>> @cr.tree_util.register_pytree_with_keys_class
    ... class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    ...     def tree_flatten_with_keys(self):
    ...         return ((cr.tree_util.GetAttrKey("a"), self.a),
    ...                 (cr.tree_util.GetAttrKey("b"), self.b)), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> cr.grad(lambda p: p.a * p.b)(Pair(2.0, 5.0)).b
    2.0
    """
    for method in ("tree_flatten_with_keys", "tree_unflatten"):
        if not callable(getattr(cls, method, None)):
            raise TypeError(f"register_pytree_with_keys_class: {cls.__name__} has no "
                            f"method {method}")
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda node: node.tree_flatten_with_keys(),
                              cls.tree_unflatten,
                              None if flatten is None else (lambda node: node.tree_flatten()))
    return cls


def is_tree_node(typ: type) -> bool:
    """Whether instances of ``typ`` are nodes of a pytree (``jax.tree_util.is_tree_node``):
    tuples, lists, dicts, None and registered classes.

    >>> cr.tree_util.is_tree_node(dict), cr.tree_util.is_tree_node(float)
    (True, False)
    """
    return typ is type(None) or typ in _NODES or issubclass(typ, (tuple, list, dict))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every item is a leaf (``jax.tree_util.all_leaves``): flattening it gives
    itself.

    >>> cr.tree_util.all_leaves([1.0, np.ones(2)]), cr.tree_util.all_leaves([1.0, (2.0,)])
    (True, False)
    """
    return all(tree_structure(item, is_leaf) is LEAF for item in iterable)


def treedef_is_leaf(treedef: TreeDef) -> bool:
    """Whether the treedef is one node: a leaf, or None (``jax.tree_util.treedef_is_leaf``).

    >>> cr.tree_util.treedef_is_leaf(cr.tree_structure(1.0))
    True
    """
    return treedef is LEAF or treedef is None


def treedef_children(treedef: TreeDef) -> list[TreeDef]:
    """The treedefs of the root's children (``jax.tree_util.treedef_children``).

    >>> children = cr.tree_util.treedef_children(cr.tree_structure((1.0, [2.0, 3.0])))
    >>> [cr.tree_util.leaf_count(c) for c in children]
    [1, 2]
    """
    if treedef_is_leaf(treedef):
        return []
    kind, children = treedef
    return [child for _, child in children] if kind is dict else list(children)


def treedef_tuple(treedefs: Iterable[TreeDef]) -> TreeDef:
    """The treedef of a tuple of trees of these treedefs (``jax.tree_util.treedef_tuple``).

    >>> t = cr.tree_util.treedef_tuple([cr.tree_structure(1.0), cr.tree_structure([1, 2])])
    >>> cr.tree_unflatten(t, ["a", "b", "c"])
    ('a', ['b', 'c'])
    """
    return (tuple, list(treedefs))


def flatten_one_level(tree: PyTree) -> tuple[list[Any], Hashable]:
    """``(children, aux)`` of the root node (``jax.tree_util.flatten_one_level``): a
    dict's values and keys, a sequence's items and None, a registered class's flatten.

    >>> cr.tree_util.flatten_one_level({"a": 1, "b": [2, 3]})
    ([1, [2, 3]], ('a', 'b'))
    """
    pairs, aux = _one_level(tree)
    return [child for _, child in pairs], aux


def flatten_one_level_with_keys(tree: PyTree) -> tuple[list[tuple[Any, Any]], Hashable]:
    """``([(key, child)...], aux)`` of the root node, the keys those of the key paths.

    >>> pairs, _ = cr.tree_util.flatten_one_level_with_keys([5, 6])
    >>> [(str(k), c) for k, c in pairs]
    [('[0]', 5), ('[1]', 6)]
    """
    return _one_level(tree)


def _one_level(tree):
    kind = type(tree)
    if kind in KEYED:
        pairs, aux = KEYED[kind](tree)
        return list(pairs), aux
    if kind in _NODES:
        children, aux = _NODES[kind][0](tree)
        fields = _FIELDS.get(kind)
        keys = [GetAttrKey(n) for n in fields] if fields else \
            [FlattenedIndexKey(i) for i in range(len(children))]
        return list(zip(keys, children)), aux
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return [(GetAttrKey(n), c) for n, c in zip(tree._fields, tree)], None
    if isinstance(tree, (tuple, list)):
        return [(SequenceKey(i), c) for i, c in enumerate(tree)], None
    if isinstance(tree, dict):
        return [(DictKey(k), c) for k, c in tree.items()], tuple(tree)
    if tree is None:
        return [], None
    raise ValueError(f"flatten_one_level: a leaf ({type(tree).__name__}) has no level to "
                     f"flatten; expected a tuple, list, dict or registered node")


def tree_broadcast(prefix_tree: PyTree, full_tree: PyTree,
                   is_leaf: Callable[[Any], bool] | None = None) -> PyTree:
    """``prefix_tree`` with each leaf repeated over the subtree of ``full_tree`` where it
    stands (``jax.tree_util.tree_broadcast``).

    >>> cr.tree_util.tree_broadcast([1, {"a": 2}], [[3, 4], {"a": (5, 6)}])
    [[1, 1], {'a': (2, 2)}]
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    from .pytrees import leaves_up_to
    subtrees = leaves_up_to(prefix_def, full_tree, "tree_broadcast: the prefix and the tree")
    return tree_unflatten(prefix_def, [
        tree_unflatten(tree_structure(sub, is_leaf), [leaf] * len(tree_leaves(sub, is_leaf)))
        for leaf, sub in zip(prefix_leaves, subtrees)])


_NO_IDENTITY = object()


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: PyTree, *,
                            identity: Any = _NO_IDENTITY,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The leaves combined by an associative ``operation``, pairwise as a balanced tree
    (``jax.tree_util.tree_reduce_associative``); ``identity`` for a tree of no leaves.

    >>> cr.tree_util.tree_reduce_associative(lambda a, b: a + b, [1, (2, 3), {"x": 4}])
    10
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TypeError("tree_reduce_associative: the tree has no leaves; pass identity=")
        return identity
    while len(leaves) > 1:
        paired = [operation(a, b) for a, b in zip(leaves[::2], leaves[1::2])]
        leaves = paired + ([leaves[-1]] if len(leaves) % 2 else [])
    return leaves[0]

"""Pytrees: tuples, lists and dicts of leaves, nested, as the transforms take them.

A model's parameters, a batch of inputs and labels, an optimizer's state: the
transforms take any of them as one argument, flatten it into its leaves, differentiate
with respect to each leaf, and rebuild the same containers around the results. The
utilities are JAX's ``jax.tree_util``: ``tree_map`` over several trees, ``tree_leaves``,
``tree_structure``, ``tree_reduce``, and ``register_pytree_node`` for a user's class
(a NamedTuple is a node already; a dataclass is a leaf unless registered, as in JAX),
``register_pytree_node_class``, and the key paths: ``tree_flatten_with_path``,
``tree_leaves_with_path``, ``tree_map_with_path`` and ``keystr``, with JAX's key entries
(``DictKey``, ``SequenceKey``, ``GetAttrKey``, ``FlattenedIndexKey``). This module is
``chainrule.tree_util`` (and ``cr.tree_util``), as JAX's is ``jax.tree_util``.

>>> from chainrule import tree_util
>>> params = {"w": np.ones((2, 3)), "b": np.zeros(3)}
>>> tree_util.tree_map(np.shape, params)
{'w': (2, 3), 'b': (3,)}
>>> grads = cr.grad(lambda p: (p["w"].sum(axis=0) + p["b"]).sum())(params)  # a tree too
>>> tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)["b"].tolist()
[-0.1, -0.1, -0.1]
>>> [tree_util.keystr(path) for path, _ in tree_util.tree_leaves_with_path(params)]
["['w']", "['b']"]
"""

import functools
from collections.abc import Callable, Iterable
from typing import Annotated, Any

import numpy as np

from .. import rules as ops
from ..primitive import shape_of

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "tree_reduce", "register_pytree_node", "register_dataclass", "ravel_pytree",
           "leaf_count", "LEAF", "PyTree", "TreeDef", "register_pytree_node_class",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
           "DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey"]

# Both are Any for the type checkers (which cannot say "nested"), Annotated so that each
# carries its own docstring (Any's is Python's).
PyTree = Annotated[Any, "pytree"]
PyTree.__doc__ = """A pytree, what the transforms take as one argument: a leaf (a number, an
array, a Tensor or a Value), None (a subtree without leaves, as in JAX), or a tuple, list,
dict, named tuple or registered node of pytrees, nested to any depth. For the type
checkers, ``Any`` (``Annotated[Any, "pytree"]``).

>>> tree = {"layer": [np.ones(2), 0.5], "frozen": None}
>>> cr.tree_util.tree_leaves(tree)
[array([1., 1.]), 0.5]
>>> cr.grad(lambda t: t["layer"][0].sum() * t["layer"][1])(tree)["layer"][1]
2.0
"""
TreeDef = Annotated[Any, "treedef"]
TreeDef.__doc__ = """What ``tree_flatten`` returns beside the leaves, to rebuild the
containers (``tree_unflatten``); trees of the same structure have equal ones. Its form
is private (for the type checkers, ``Any``); ``leaf_count`` says how many leaves it holds.

>>> leaves, treedef = cr.tree_flatten(([1.0, 2.0], {"b": 3.0}))
>>> cr.tree_util.leaf_count(treedef), treedef == cr.tree_structure(([0, 0], {"b": 0}))
(3, True)
>>> cr.tree_unflatten(treedef, ["x", "y", "z"])
(['x', 'y'], {'b': 'z'})
"""


# (doctest's finder passes the two aliases by, as objects of typing: it runs them from here)
__test__ = {"PyTree": PyTree.__doc__, "TreeDef": TreeDef.__doc__}


# A treedef is LEAF where a leaf goes, None where the tree held None, and
# (container type, children) for a container; for a registered class,
# (_Registered(class, its auxiliary data), children).
LEAF = "*"

# The user's node types: type -> (flatten: node -> (children, aux),
# unflatten: (aux, children) -> node), as jax.tree_util.register_pytree_node takes them.
_NODES: dict[type, tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]] = {}


class _Registered:
    """A registered class in a treedef, with what its flatten kept beside the children."""

    __slots__ = ("kind", "aux")

    def __init__(self, kind, aux):
        self.kind, self.aux = kind, aux

    def __eq__(self, other):
        return (isinstance(other, _Registered) and self.kind is other.kind
                and self.aux == other.aux)

    def __hash__(self):
        return hash(self.kind)


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], Any],
                         unflatten_func: Callable[[Any, Any], Any]) -> None:
    """Make instances of ``nodetype`` nodes of a pytree, as JAX's: ``flatten_func(node)``
    gives ``(children, aux_data)``, ``unflatten_func(aux_data, children)`` rebuilds it.
    The transforms then differentiate with respect to the children.

    >>> class Point:
    ...     def __init__(self, x, y):
    ...         self.x, self.y = x, y
    >>> cr.register_pytree_node(Point, lambda p: ((p.x, p.y), None),
    ...                         lambda aux, children: Point(*children))
    >>> g = cr.grad(lambda p: p.x * p.y)(Point(2.0, 3.0))
    >>> g.x, g.y
    (3.0, 2.0)
    """
    _NODES[nodetype] = (flatten_func, unflatten_func)
    _FIELDS.pop(nodetype, None)
    KEYED.pop(nodetype, None)


# The registered dataclasses' field names, for their children's key paths; and the
# classes registered with their own keys (tree_util.register_pytree_with_keys): node ->
# ([(key, child)...], aux).
_FIELDS: dict[type, tuple[str, ...]] = {}
KEYED: dict[type, Callable[[Any], Any]] = {}


def register_pytree_node_class(cls: type) -> type:
    """A class decorator: ``cls`` becomes a node, flattened by its method
    ``tree_flatten() -> (children, aux_data)`` and rebuilt by its class method
    ``tree_unflatten(aux_data, children)``, as jax.tree_util's; returns ``cls``.

    >>> @cr.tree_util.register_pytree_node_class
    ... class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    ...     def tree_flatten(self):
    ...         return (self.a, self.b), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> cr.grad(lambda p: p.a * p.b)(Pair(2.0, 5.0)).a
    5.0
    """
    for method in ("tree_flatten", "tree_unflatten"):
        if not callable(getattr(cls, method, None)):
            raise TypeError(f"register_pytree_node_class: {cls.__name__} has no method "
                            f"{method}; expected tree_flatten(self) -> (children, aux) and "
                            f"the class method tree_unflatten(aux, children)")
    register_pytree_node(cls, lambda node: node.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields: Iterable[str],
                       meta_fields: Iterable[str] = ()) -> type:
    """Make a dataclass a node: ``data_fields`` are its children, ``meta_fields`` kept
    as they are (as jax.tree_util.register_dataclass); returns the class.

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Affine:
    ...     w: float
    ...     b: float
    >>> _ = cr.register_dataclass(Affine, ["w", "b"])
    >>> cr.tree_leaves(Affine(2.0, 3.0))
    [2.0, 3.0]
    """
    data, meta = tuple(data_fields), tuple(meta_fields)
    register_pytree_node(
        nodetype,
        lambda node: ([getattr(node, name) for name in data],
                      tuple(getattr(node, name) for name in meta)),
        lambda aux, children: nodetype(**dict(zip(data, children)), **dict(zip(meta, aux))))
    _FIELDS[nodetype] = data  # (its children's paths are .field, as JAX's)
    return nodetype


def tree_flatten(tree: PyTree,
                 is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeDef]:
    """``(leaves, treedef)``: the leaves of nested tuples, lists and dicts, in order, and
    what rebuilds the containers (``tree_unflatten``).

    This is how the transforms take a model's parameters as one argument. None is a
    subtree without leaves, as in JAX: it stays in the structure, and the transforms
    pass it through (the gradient of a None input is None). A dict keeps its order (JAX
    sorts the keys). ``is_leaf(node)`` true makes a node a leaf, whatever it holds.

    >>> leaves, treedef = cr.tree_flatten({"w": [1.0, 2.0], "b": 3.0, "frozen": None})
    >>> leaves
    [1.0, 2.0, 3.0]
    >>> cr.tree_unflatten(treedef, [10.0, 20.0, 30.0])
    {'w': [10.0, 20.0], 'b': 30.0, 'frozen': None}
    """
    leaves = []
    return leaves, _walk(tree, leaves, is_leaf)


# (module-level, not nested: a nested recursive function refers to itself through its
# closure, a reference cycle left behind at every call)
def _walk(node, leaves, is_leaf=None):
    if is_leaf is not None and is_leaf(node):
        leaves.append(node)
        return LEAF
    if node is None:
        return None
    registered = _NODES.get(type(node))  # (first: a registered named tuple is its own)
    if registered is not None:
        children, aux = registered[0](node)
        return (_Registered(type(node), aux), [_walk(c, leaves, is_leaf) for c in children])
    if isinstance(node, (tuple, list)):
        return (type(node), [_walk(child, leaves, is_leaf) for child in node])
    if isinstance(node, dict):
        return (dict, [(key, _walk(child, leaves, is_leaf)) for key, child in node.items()])
    leaves.append(node)
    return LEAF


def node_parts(node: Any) -> tuple[list[Any], Any, Callable[[list[Any]], Any]] | None:
    """``(children, aux_data, rebuild)`` of a registered node or a named tuple, for code
    that walks a tree itself (cr.jit's arguments and results); None for anything else.

    >>> from collections import namedtuple
    >>> from chainrule.transforms.pytrees import node_parts
    >>> children, aux, rebuild = node_parts(namedtuple("P", "x y")(1.0, 2.0))
    >>> children, rebuild([3.0, 4.0])
    ([1.0, 2.0], P(x=3.0, y=4.0))
    """
    kind = type(node)
    registered = _NODES.get(kind)
    if registered is not None:
        children, aux = registered[0](node)
        return list(children), aux, lambda items: registered[1](aux, items)
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return list(node), None, lambda items: kind(*items)
    return None


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
    if isinstance(kind, _Registered):
        return _NODES[kind.kind][1](kind.aux, items)
    return kind(*items) if hasattr(kind, "_fields") else kind(items)


def leaf_count(treedef):
    """How many leaves a treedef (``tree_flatten``'s second result) holds, as JAX's
    ``treedef.num_leaves``; None holds none.

    >>> _, treedef = cr.tree_flatten({"w": [1.0, 2.0], "b": None})
    >>> cr.tree_util.leaf_count(treedef)
    2
    """
    if treedef is LEAF:
        return 1
    if treedef is None:
        return 0
    kind, children = treedef
    return sum(leaf_count(child[1] if kind is dict else child) for child in children)


def tree_map(function: Callable[..., Any], tree: PyTree, *rest: PyTree,
             is_leaf: Callable[[Any], bool] | None = None) -> PyTree:
    """``function`` applied to each leaf of ``tree`` (and the matching leaves of the
    trees in ``rest``, which have ``tree``'s structure, or deeper subtrees where it has a
    leaf), in a tree of the same structure, as jax.tree_util.tree_map.

    >>> cr.tree_map(lambda w, g: w - 0.1 * g, {"w": 1.0, "b": [2.0]}, {"w": 10.0, "b": [20.0]})
    {'w': 0.0, 'b': [0.0]}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [leaves_up_to(treedef, other, "tree_map") for other in rest]
    return tree_unflatten(treedef, [function(*args) for args in zip(leaves, *others)])


def leaves_up_to(treedef, tree, name):
    """The subtrees of ``tree`` where ``treedef`` has its leaves, in order: a tree's
    leaves paired with another's (tangents with primals), dicts by key."""
    out = []
    _collect(treedef, tree, out, name)
    return out


def _collect(node, tree, out, name):
    if node is LEAF:
        out.append(tree)
        return
    if node is None:
        if tree is not None:
            raise ValueError(f"{name}: the trees differ: None in the first, "
                             f"{type(tree).__name__} in another")
        return
    kind, children = node
    if kind is dict:  # matched by key, in whatever order (JAX sorts them)
        if not isinstance(tree, dict) or set(tree) != {key for key, _ in children}:
            raise ValueError(f"{name}: the trees differ: a dict with keys "
                             f"{[key for key, _ in children]} in the first, {_what(tree)} "
                             f"in another")
        for key, child in children:
            _collect(child, tree[key], out, name)
        return
    if isinstance(kind, _Registered):
        if type(tree) is not kind.kind:
            raise ValueError(f"{name}: the trees differ: {kind.kind.__name__} in the first, "
                             f"{_what(tree)} in another")
        items = _NODES[kind.kind][0](tree)[0]
    else:
        if type(tree) is not kind or len(tree) != len(children):
            raise ValueError(f"{name}: the trees differ: a {kind.__name__} of "
                             f"{len(children)} in the first, {_what(tree)} in another")
        items = tree
    for child, item in zip(children, items):
        _collect(child, item, out, name)


def _what(tree):
    if isinstance(tree, dict):
        return f"a dict with keys {list(tree)}"
    if isinstance(tree, (list, tuple)):
        return f"a {type(tree).__name__} of {len(tree)}"
    return type(tree).__name__


def tree_leaves(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in order.

    >>> cr.tree_leaves({"a": [1.0, None, (2.0,)], "b": 3.0})
    [1.0, 2.0, 3.0]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> TreeDef:
    """The structure of ``tree`` without its leaves (for ``tree_unflatten``); two trees
    of the same structure have equal structures.

    >>> cr.tree_structure({"w": 1.0, "b": [2.0]}) == cr.tree_structure({"w": 5.0, "b": [6.0]})
    True
    """
    return tree_flatten(tree, is_leaf)[1]


_NOTHING = object()


def tree_reduce(function: Callable[[Any, Any], Any], tree: PyTree, initializer: Any = _NOTHING,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce(function, leaves)`` over the leaves of ``tree``.

    >>> cr.tree_reduce(lambda a, b: a + b, {"w": 1.0, "b": [2.0, 3.0]})
    6.0
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NOTHING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


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


# ---------------------------------------------------------------------------------------
# Key paths: where each leaf sits, as jax.tree_util names it
# ---------------------------------------------------------------------------------------

class _Key:
    __slots__ = ()
    _field = ""

    def __init__(self, value):
        object.__setattr__(self, self._field, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other):
        return type(other) is type(self) and getattr(other, self._field) == \
            getattr(self, self._field)

    def __hash__(self):
        return hash((type(self), getattr(self, self._field)))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={getattr(self, self._field)!r})"

    def _simple(self):
        return str(getattr(self, self._field))


class DictKey(_Key):
    """A dict's entry in a key path: ``['key']``.

    >>> path, leaf = cr.tree_util.tree_leaves_with_path({"w": 1.0})[0]
    >>> path, str(path[0]), path[0].key
    ((DictKey(key='w'),), "['w']", 'w')
    """
    __slots__ = ("key",)
    _field = "key"

    def __str__(self):
        return f"[{self.key!r}]"


class SequenceKey(_Key):
    """A tuple's or list's item in a key path: ``[0]``.

    >>> path, leaf = cr.tree_util.tree_leaves_with_path([1.0, 2.0])[1]
    >>> path, str(path[0]), path[0].idx
    ((SequenceKey(idx=1),), '[1]', 1)
    """
    __slots__ = ("idx",)
    _field = "idx"

    def __str__(self):
        return f"[{self.idx}]"


class GetAttrKey(_Key):
    """A named tuple's or a registered dataclass's field in a key path: ``.name``.

    >>> from collections import namedtuple
    >>> Point = namedtuple("Point", "x y")
    >>> cr.tree_util.tree_leaves_with_path(Point(1.0, 2.0))
    [((GetAttrKey(name='x'),), 1.0), ((GetAttrKey(name='y'),), 2.0)]
    >>> str(cr.tree_util.GetAttrKey("x"))
    '.x'
    """
    __slots__ = ("name",)
    _field = "name"

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """The i-th child of a registered node (not a dataclass) in a key path:
    ``[<flat index 0>]``.

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> cr.register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                         lambda aux, children: Pair(*children))
    >>> cr.tree_util.tree_leaves_with_path(Pair(1.0, 2.0))
    [((FlattenedIndexKey(key=0),), 1.0), ((FlattenedIndexKey(key=1),), 2.0)]
    >>> cr.tree_util.keystr((cr.tree_util.FlattenedIndexKey(0),))
    '[<flat index 0>]'
    """
    __slots__ = ("key",)
    _field = "key"

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _with_paths(node, path, out, is_leaf, takes_path):
    if is_leaf is not None and (is_leaf(path, node) if takes_path else is_leaf(node)):
        out.append((path, node))
        return
    if node is None:
        return
    kind = type(node)
    registered = _NODES.get(kind)
    if kind in KEYED:
        pairs = list(KEYED[kind](node)[0])
        keys, children = [k for k, _ in pairs], [c for _, c in pairs]
    elif registered is not None:
        children = list(registered[0](node)[0])
        fields = _FIELDS.get(kind)
        keys = [GetAttrKey(name) for name in fields] if fields else \
            [FlattenedIndexKey(i) for i in range(len(children))]
    elif isinstance(node, tuple) and hasattr(node, "_fields"):
        children, keys = list(node), [GetAttrKey(name) for name in node._fields]
    elif isinstance(node, (tuple, list)):
        children, keys = list(node), [SequenceKey(i) for i in range(len(node))]
    elif isinstance(node, dict):
        children, keys = list(node.values()), [DictKey(key) for key in node]
    else:
        out.append((path, node))
        return
    for key, child in zip(keys, children):
        _with_paths(child, path + (key,), out, is_leaf, takes_path)


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[tuple[Any, ...], Any]], TreeDef]:
    """``([(path, leaf), ...], treedef)``: ``tree_flatten`` with each leaf's key path, a
    tuple of ``DictKey``, ``SequenceKey``, ``GetAttrKey`` (a named tuple's or registered
    dataclass's field) and ``FlattenedIndexKey`` (another registered node's child), as
    jax.tree_util's. A dict's entries come in its own order (JAX sorts the keys).

    >>> pairs, _ = cr.tree_util.tree_flatten_with_path({"w": [1.0, 2.0], "b": 3.0})
    >>> [(cr.tree_util.keystr(path), leaf) for path, leaf in pairs]
    [("['w'][0]", 1.0), ("['w'][1]", 2.0), ("['b']", 3.0)]
    """
    out: list = []
    _with_paths(tree, (), out, is_leaf, is_leaf_takes_path)
    if is_leaf is None or not is_leaf_takes_path:
        return out, tree_structure(tree, is_leaf)
    leaves = {id(leaf) for _, leaf in out}
    return out, tree_structure(tree, lambda node: id(node) in leaves)


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[tuple[Any, ...], Any]]:
    """The ``(path, leaf)`` pairs of ``tree_flatten_with_path``.

    >>> [(cr.tree_util.keystr(p), leaf) for p, leaf in cr.tree_leaves_with_path([1.0, (2.0,)])]
    [('[0]', 1.0), ('[1][0]', 2.0)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(function: Callable[..., Any], tree: PyTree, *rest: PyTree,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> PyTree:
    """``function(path, leaf, *other_leaves)`` at each leaf of ``tree``, in a tree of
    its structure, as jax.tree_util.tree_map_with_path.

    >>> cr.tree_util.tree_map_with_path(lambda p, x: cr.tree_util.keystr(p), {"a": [1, 2]})
    {'a': ["['a'][0]", "['a'][1]"]}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [leaves_up_to(treedef, other, "tree_map_with_path") for other in rest]
    return tree_unflatten(treedef, [function(path, leaf, *more) for (path, leaf), *more
                                    in zip(pairs, *others)])


def keystr(keys: Iterable[Any], *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``['w'][0].b`` (each key's ``str``), or with ``simple=True``
    the bare keys (``w/0/b`` with ``separator="/"``), as jax.tree_util.keystr.

    >>> cr.tree_util.keystr((DictKey("w"), SequenceKey(0)), simple=True, separator="/")
    'w/0'
    """
    return separator.join(key._simple() if simple and isinstance(key, _Key) else str(key)
                          for key in keys)

"""autograd.tracer: ``primitive``, ``notrace_primitive``, and ``isbox``/``getval`` to
ask whether a value is being differentiated and to see its plain numbers. chainrule's
traced values are all ``chainrule.Box`` (tracers, Tensors, Values); ``getval`` is
``chainrule.primitive.raw``.

``Node`` and ``trace`` are autograd's way to watch a function run, apart from any
derivative (its examples print_trace.py and dot_graph.py): a subclass of ``Node`` says
what to do with each operation, ``trace(Node.new_root(x), f, x)`` runs f on a traced x
and makes one node per operation that reads a traced value, given the operation, its
arguments (plain values) and the nodes of its traced ones. Here the trace is one more
level of the transforms' mechanism, so it nests with grad in either order.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.tracer import getval, isbox
    >>> grad(lambda x: x * getval(x) if isbox(x) else x)(3.0)   # getval(x) is a constant
    3.0
"""

from ...primitive import Box, new_level, raw
from ...transforms.tracer import Tracer
from .extend import notrace_primitive, primitive

__all__ = ["primitive", "notrace_primitive", "isbox", "getval", "Box", "Node", "trace"]


def isbox(x):
    """Whether x is a traced value (one some transform is differentiating)."""
    return isinstance(x, Box)


def getval(x):
    """The plain number or array inside a traced value (x itself if not traced)."""
    return raw(x)


class Node:
    """A node of a trace, as autograd's: a subclass defines ``__init__(self, value, fun,
    args, kwargs, parent_argnums, parents)`` (one operation: its result, the operation,
    its arguments as plain values, the positions of the traced ones and their nodes) and
    ``initialize_root(self, *args, **kwargs)`` (the start); ``new_root`` makes the start.

    >>> from chainrule.autograd.tracer import Node, trace
    >>> class Names(Node):
    ...     def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
    ...         self.names = parents[0].names + [fun.__name__]
    ...     def initialize_root(self):
    ...         self.names = []
    >>> value, node = trace(Names.new_root(), lambda x: np.sin(x) * 2, 1.0)
    >>> node.names
    ['sin', 'multiply']
    """

    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        raise TypeError(f"{type(self).__name__}: a Node subclass defines __init__(self, "
                        f"value, fun, args, kwargs, parent_argnums, parents)")

    def initialize_root(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__}: a Node subclass defines "
                        f"initialize_root(self, ...) for the start of a trace")

    @classmethod
    def new_root(cls, *args, **kwargs):
        """The start of a trace: a node made by ``initialize_root(*args, **kwargs)``."""
        root = cls.__new__(cls)
        root.initialize_root(*args, **kwargs)
        return root


class _Operation:
    """An operation as a node sees it: called, and named ``__name__`` as NumPy's."""

    def __init__(self, prim):
        self.prim, self.__name__ = prim, prim.name

    def __call__(self, *args, **kwargs):
        return self.prim(*args, **kwargs)


class _Traced(Tracer):
    """A value of a trace: what it holds, and its node."""

    __slots__ = ("value", "node", "_level")

    def __init__(self, value, node, level):
        self.value, self.node, self._level = value, node, level

    def _contents(self):
        return self.value

    @classmethod
    def _apply_primitive(cls, prim, args, kwargs):
        level, values, positions = cls._unwrap_top(args)
        ans = prim(*values, **kwargs)  # may recurse into an outer level's tracers
        parents = [args[i].node for i in positions]
        node = type(parents[0])(ans, _Operation(prim), tuple(values), kwargs, positions,
                                parents)
        return _Traced(ans, node, level)


def trace(start_node, fun, x):
    """Run ``fun(x)`` with x traced from ``start_node``: ``(value, end_node)``, the
    node of the result (None where the result does not depend on x)."""
    level = new_level()
    out = fun(_Traced(x, start_node, level))
    if isinstance(out, _Traced) and out._level == level:
        return out.value, out.node
    return out, None

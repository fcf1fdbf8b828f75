"""autograd.tracer: ``primitive``, ``notrace_primitive``, ``Box``, and ``isbox``/``getval``
to ask whether a value is being differentiated and to see its plain numbers. chainrule's
traced values are all ``chainrule.Box`` (tracers, Tensors, Values); ``getval`` is
``chainrule.primitive.raw``.

``Node`` and ``trace`` are autograd's way to watch a function run, apart from any
derivative (its examples print_trace.py and dot_graph.py): a subclass of ``Node`` says
what to do with each operation, ``trace(Node.new_root(x), f, x)`` runs f on a traced x
and makes one node per operation that reads a traced value, given the operation, its
arguments (plain values) and the nodes of its traced ones. Here the trace is one more
level of the transforms' mechanism, so it nests with grad in either order.

A trace boxes each value in the ``Box`` subclass registered for its type
(``Box.register``), and numbers and arrays in a box that takes NumPy's operations. The
reverse mode of a user's vector space (``core.VSpace``) is such a trace.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.tracer import getval, isbox
    >>> grad(lambda x: x * getval(x) if isbox(x) else x)(3.0)   # getval(x) is a constant
    3.0
"""

import types

from ...primitive import Box as _EngineBox, Primitive, new_level, raw
from ...transforms.tracer import Tracer

__all__ = ["primitive", "notrace_primitive", "isbox", "getval", "Box", "Node", "trace"]


class _Primitive(Primitive):
    """A chainrule Primitive that becomes a method when it is a class's attribute, as
    autograd's primitives (functions) do; read from the class, it is the Primitive."""

    def __get__(self, instance, owner=None):
        return self if instance is None else types.MethodType(self, instance)

    def __call__(self, *args, **kwargs):
        # A value of a type registered with Box.register is the user's own, even where it
        # defines __array__ (as a jacobian with respect to it needs): run here, not
        # handed on as another library's array.
        top = max((a for a in args if isinstance(a, _EngineBox)), default=None,
                  key=lambda a: a._level)
        if isinstance(top, Box) or any(type(a) in Box.type_mappings for a in args):
            if top is None:
                return self.forward(*args, **kwargs)
            return top._apply_primitive(self, args, kwargs)
        return super().__call__(*args, **kwargs)


def primitive(fun):
    """``fun`` as an operation whose rules ``defvjp`` and ``defjvp`` give (a chainrule
    ``Primitive``); on a method, a method whose ``self`` may be differentiated.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.extend import defvjp
    >>> @primitive
    ... def cube(x):
    ...     return x ** 3
    >>> _ = defvjp(cube, lambda ans, x: lambda g: g * 3 * x ** 2)
    >>> grad(cube)(2.0)
    12.0
    """
    return _Primitive(fun)


def notrace_primitive(fun):
    """``fun`` run on the plain values inside any traced ones: a function whose result
    carries no derivative (a shape, an index, a random draw)."""
    def plain(*args, **kwargs):
        return fun(*[raw(a) for a in args], **{k: raw(v) for k, v in kwargs.items()})
    plain.__name__, plain.__doc__ = fun.__name__, fun.__doc__
    return plain


def isbox(x):
    """Whether x is a traced value (one some transform is differentiating)."""
    return isinstance(x, _EngineBox)


def getval(x):
    """The plain number or array inside a traced value (x itself if not traced)."""
    return raw(x)


class Box(_EngineBox):
    """A value of a trace, as autograd's Box: ``_value`` (what it holds), ``_level``
    (which trace: autograd's ``_trace``) and ``_node``. An operation on boxes of
    several traces is run by the newest, on what its boxes hold, and its result boxed
    again with the operation's node.

    A type of your own is traced in a subclass of Box and of the type, registered with
    ``register``: the subclass answers the type's attributes that methods need (the
    ``@primitive`` methods record; the others run on the box). With its vector space
    (``VSpace.register``), it can be differentiated. chainrule's own traced values
    (tracers, Tensors) are ``chainrule.Box``es, not of this class: ``isbox(x)`` asks
    whether x is traced at all.

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> class PairBox(Box, Pair):
    ...     pass
    >>> PairBox.register(Pair)
    >>> Box.type_mappings[Pair].__name__
    'PairBox'
    """

    __slots__ = ("_value", "_level", "_node")
    type_mappings = {}  # a value's type -> the Box subclass it is traced in

    def __init__(self, value, trace, node):
        self._value, self._level, self._node = value, trace, node

    def _contents(self):
        return self._value

    def __bool__(self):
        return bool(self._value)

    @classmethod
    def register(cls, value_type):
        """Trace values of ``value_type`` in boxes of this class (and a value that is
        itself such a box, an outer trace's, in one again)."""
        Box.type_mappings[value_type] = cls
        Box.type_mappings[cls] = cls

    @classmethod
    def _apply_primitive(cls, prim, args, kwargs):
        level = max(arg._level for arg in args if isinstance(arg, Box))
        positions = [i for i, arg in enumerate(args)
                     if isinstance(arg, Box) and arg._level == level]
        values = list(args)
        for i in positions:
            values[i] = args[i]._value
        ans = prim(*values, **kwargs)  # may recurse into an outer level's boxes
        if type(ans) not in Box.type_mappings and _integral(ans):
            return ans  # an index, a count, a comparison: no derivative to carry
        parents = [args[i]._node for i in positions]
        node = type(parents[0])(ans, _Operation(prim), tuple(values), kwargs, positions,
                                parents)
        return new_box(ans, level, node)


class _ArrayBox(Box, Tracer):
    """A number or array of a trace: it takes NumPy's operations and operators."""

    __slots__ = ()


def _integral(value):
    """Whether value is an integer or boolean number or array."""
    dtype = getattr(value, "dtype", None)
    return isinstance(value, int) if dtype is None else dtype.kind in "biu"


def new_box(value, level, node):
    """``value`` boxed for the trace at ``level`` with ``node``: in the Box subclass
    registered for its type, else (a number, an array) in one that takes NumPy's
    operations."""
    return Box.type_mappings.get(type(value), _ArrayBox)(value, level, node)


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


def trace(start_node, fun, x):
    """Run ``fun(x)`` with x traced from ``start_node``: ``(value, end_node)``, the
    node of the result (None where the result does not depend on x)."""
    level = new_level()
    out = fun(new_box(x, level, start_node))
    if isinstance(out, Box) and out._level == level:
        return out._value, out._node
    return out, None

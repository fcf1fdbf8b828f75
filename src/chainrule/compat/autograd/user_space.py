"""Reverse and forward mode for values of a vector space of your own (``VSpace.register``
and ``Box.register``): a trace of the function's run (``tracer.trace``), walked
backwards as autograd walks its graph (each operation's VJP rules give its operands'
gradients, which add up in the operand's space: ``VSpace.add``, where arrays use
``+``), or forwards, each node carrying its value's tangent from its operands' tangents
by the operation's JVP rules.
"""

import numpy as _np

from ...primitive import Box as _EngineBox, new_level, raw, shape_of
from .tracer import Box, Node, new_box
from .vspace import VSpace, _unboxed, vspace

__all__ = ["has_user_spaces", "in_user_space", "user_vjp", "user_jvp", "user_value_and_grad"]

def has_user_spaces():
    """Whether any type is registered with ``VSpace.register`` or ``Box.register``."""
    return bool(VSpace.mappings or Box.type_mappings)


def in_user_space(args, argnum):
    """Whether an argument that ``argnum`` names (an int, or a tuple of them) is a value
    of a type registered with ``VSpace.register`` or ``Box.register``: one that
    ``user_vjp`` differentiates, not chainrule's transforms. Nothing registered: two
    dict checks."""
    if not (VSpace.mappings or Box.type_mappings):
        return False
    positions = argnum if type(argnum) is tuple else (argnum,)
    return any(i < len(args) and (type(args[i]) in VSpace.mappings
                                  or type(args[i]) in Box.type_mappings)
               for i in positions)


def user_vjp(fun, args, kwargs, positions):
    """``(fun(*args, **kwargs), pullback)`` with the arguments at ``positions`` traced:
    ``pullback(g)`` is the tuple of their gradients for the cotangent g of the result
    (a tuple of cotangents for a tuple of results), each an element of its argument's
    vector space (its ``zeros()`` where the result does not depend on it)."""
    level = new_level()
    roots = [_VJPNode.new_root() for _ in positions]
    boxed = list(args)
    for i, root in zip(positions, roots):
        boxed[i] = _start(args[i], level, root)
    value, ends = _opened(fun(*boxed, **kwargs), level)

    def pullback(g):
        arrived = _backward(_seeds(g, ends))
        return tuple(_as_argument(arrived[root], args[i]) if root in arrived
                     else vspace(args[i]).zeros() for i, root in zip(positions, roots))
    return value, pullback


def user_jvp(fun, args, kwargs, positions, tangents):
    """``(fun(*args, **kwargs), its tangent)`` for the tangents of the arguments at
    ``positions``, in forward mode: each operation's JVP rules (``defjvp``) give its
    result's tangent from its operands'. The result's space's ``zeros()`` where it does
    not depend on them; a tuple of tangents for a tuple of results."""
    level = new_level()
    boxed = list(args)
    for i, tangent in zip(positions, tangents):
        boxed[i] = _start(args[i], level, _JVPNode.new_root(tangent))
    value, ends = _opened(fun(*boxed, **kwargs), level)

    def tangent_of(value, end):
        if type(end) is list:
            return type(value)(tangent_of(v, e) for v, e in zip(value, end))
        return vspace(value).zeros() if end is None else end.g
    return value, tangent_of(value, ends)


def _opened(out, level):
    """``(value, ends)``: the result of the trace at ``level`` out of its box and the
    node it ends at (None where it does not depend on the arguments); for a tuple or
    list, one of each per element (a list of ends)."""
    if type(out) in (tuple, list):
        opened = [_opened(part, level) for part in out]
        return type(out)(value for value, _ in opened), [end for _, end in opened]
    if isinstance(out, Box) and out._level == level:
        return out._value, out._node
    return out, None


def _seeds(g, ends):
    """The pairs (node, cotangent) a backward pass starts from: g at the end node, or a
    tuple's cotangents at its elements' end nodes."""
    if type(ends) is list:
        return [seed for part, end in zip(g, ends) for seed in _seeds(part, end)]
    return [] if ends is None else [(ends, g)]


def user_value_and_grad(fun, argnum, args, kwargs):
    """``(value, gradient)`` of a scalar function, by ``user_vjp``."""
    positions = argnum if type(argnum) is tuple else (argnum,)
    value, pullback = user_vjp(fun, args, kwargs, positions)
    if _np.size(raw(value)) != 1 or VSpace.mappings.get(type(_unboxed(value))):
        raise TypeError(f"grad: the function must return a scalar, but it returned a "
                        f"{type(raw(value)).__name__}")
    grads = pullback(vspace(value).ones())
    return value, (grads if type(argnum) is tuple else grads[0])


def _start(x, level, root):
    """An argument boxed at the start of a trace: a value of a user's space in its Box,
    a number or array in one that takes NumPy's operations. TypeError for a type with a
    vector space and no Box, a Box and no vector space, or neither."""
    inner = _unboxed(x)
    name = type(inner).__name__
    in_space, has_box = type(inner) in VSpace.mappings, type(x) in Box.type_mappings
    if in_space and not has_box:
        raise TypeError(f"grad: a {name} has a vector space (VSpace.register) but no Box "
                        f"to be traced in; register one: class {name}Box(Box, {name}), "
                        f"and {name}Box.register({name})")
    if has_box and not in_space:
        raise TypeError(f"grad: a {name} has a Box (Box.register) but no vector space; "
                        f"register one: class {name}VSpace(VSpace) with zeros, _add, "
                        f"_scalar_mul and _inner_prod, and {name}VSpace.register({name})")
    if not in_space and not isinstance(raw(x), (int, float, _np.ndarray, _np.generic)):
        raise TypeError(f"grad: expected a float, a NumPy array or a value of a "
                        f"registered vector space (VSpace.register) to differentiate, got "
                        f"{name}")
    return new_box(x, level, root)


class _VJPNode(Node):
    """A node of a reverse-mode trace: the operation (a Primitive), its result and
    arguments (as the operation saw them), and the nodes of its traced arguments
    (``parents``) at positions ``argnums``."""

    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        prim = fun.prim
        for argnum in parent_argnums:
            if not prim.differentiable(argnum):
                raise TypeError(f"{prim.name}: argument {argnum} is being differentiated, "
                                f"but the operation has no VJP for it; give one with "
                                f"defvjp")
        self.prim, self.ans, self.args, self.kwargs = prim, value, args, kwargs
        self.argnums, self.parents = parent_argnums, parents

    def initialize_root(self):
        self.parents = ()


class _JVPNode(Node):
    """A node of a forward-mode trace: ``g``, the tangent of its value, the sum of what
    the operation's JVP rules make of its traced operands' tangents."""

    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        prim, self.g = fun.prim, None
        for parent, argnum in zip(parents, parent_argnums):
            part = prim.jvp(argnum)(parent.g, value, *args, **kwargs)
            self.g = part if self.g is None else _added(self.g, part)

    def initialize_root(self, g):
        self.g = g


def _backward(seeds):
    """The gradients arriving at the roots of a trace for the cotangents ``seeds`` of
    its end nodes: ``{root: gradient}``. Each node's VJP rules give its operands'
    gradients; two reaching one node are added in its vector space."""
    grads, arrived = {}, {}
    for end, g in seeds:
        grads[end] = _added(grads[end], g) if end in grads else g
    for node in _toposort(list(grads)):
        g = grads.pop(node)
        if not node.parents:
            arrived[node] = g
            continue
        parts = node.prim.pullback(g, node.ans, node.args, node.kwargs, node.argnums)
        for parent, argnum, part in zip(node.parents, node.argnums, parts):
            part = _fitted(part, node.args[argnum])
            grads[parent] = _added(grads[parent], part) if parent in grads else part
    return arrived


def _toposort(ends):
    """The nodes of a trace from its end nodes back to its roots, each after every node
    that reads it."""
    readers, stack, seen = {}, list(ends), set(ends)
    while stack:
        for parent in stack.pop().parents:
            readers[parent] = readers.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    ready = [end for end in ends if end not in readers]
    while ready:
        node = ready.pop()
        yield node
        for parent in node.parents:
            readers[parent] -= 1
            if readers[parent] == 0:
                ready.append(parent)


def _added(a, b):
    """Two gradients of one value added: in its registered vector space, else with +."""
    if VSpace.mappings.get(type(_unboxed(a))) is not None:
        return vspace(a).add(a, b)
    return a + b


def _fitted(g, arg):
    """The gradient of an array argument summed back to its shape, where broadcasting
    made the operation's result larger (a value of a user's space is left as it is)."""
    if VSpace.mappings.get(type(_unboxed(arg))) is None and shape_of(g) != shape_of(arg):
        from ... import rules
        return rules.unbroadcast(g, shape_of(arg))
    return g


def _as_argument(g, x):
    """A gradient as its argument's kind: a float for a float."""
    return float(g) if type(x) is float and not isinstance(g, _EngineBox) else g

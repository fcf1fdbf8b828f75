"""Values among the rest of chainrule: an operation of the tensor table (``cr.exp``, a
user's ``cr.primitive``) called on Values is one node of the scalar engine; NumPy's
arithmetic on a Value is the Value's own; and the error of a create_graph walk through a
node whose numbers were written since it was made.

A Value that meets an array (an operation whose result is not one number, or one with a
Tensor among its arguments) joins the tensor engine as a 0-d float64 tensor,
``ValueAsArray``: a leaf of the tensor graph whose gradient, when a backward pass brings
one, is passed on into the Value's own graph (``Value.backward(gradient=g)``). So the
result is a Tensor, and the Values it came from get their ``.grad`` from its backward().

Where the scalar engine has the operation itself (``cr.exp(v)`` is ``v.exp()``), that
is used, so the node is the one a learner reads about in ``value.py``. Otherwise the
node's partial derivatives are the operation's VJP rules at g = 1: for a function of
numbers to a number, a VJP is g times the derivative.
"""

import operator
from numbers import Real

import numpy as np

from ..primitive import Box, raw
from ..tensor import Tensor

__all__ = ["apply", "array_ufunc", "written_since", "ValueAsArray"]

# the operations a Value has itself, by the tensor table's names
_OWN = {"exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
        "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu", "abs": "abs"}


def apply(cls, prim, args, kwargs):
    """``prim(*args, **kwargs)`` as a Value node of class ``cls``. (The Values are the
    only boxes among the arguments: a Tensor or a tracer would have taken the call.)"""
    if prim.name in _OWN and len(args) == 1 and not kwargs:
        return getattr(args[0], _OWN[prim.name])()
    if prim.name == "power" and len(args) == 2 and not kwargs and \
            all(isinstance(a, (Box, Real)) and not isinstance(a, Tensor) for a in args):
        return args[0] ** args[1]
    positions = [i for i, arg in enumerate(args) if isinstance(arg, Box)]
    if any(isinstance(args[i], Tensor) for i in positions):
        return prim(*_joined(args), **kwargs)
    data = prim.forward(*[raw(a) for a in args], **kwargs)
    if getattr(data, "shape", ()) != ():
        return prim(*_joined(args), **kwargs)
    rules = [prim.vjp(i) for i in positions]

    def partials(ans, *operands):
        full = list(args)
        for i, operand in zip(positions, operands):
            full[i] = operand
        found = [rule(1.0, ans, *full, **kwargs) for rule in rules]
        return tuple(d if isinstance(d, Box) else float(d) for d in found)

    return cls(float(data), [args[i] for i in positions], prim.name, _rule=partials)


def _joined(args):
    """The arguments with each Value as a 0-d tensor (lists of them included)."""
    return [ValueAsArray.of(a) if isinstance(a, Box) and not isinstance(a, Tensor) else
            _joined(a) if type(a) in (list, tuple) else a for a in args]


class ValueAsArray(Tensor):
    """A Value as a 0-d float64 tensor that requires grad: a leaf of the tensor graph.
    A gradient a backward pass brings it is not kept here but passed on into the
    Value's graph, where it adds into the ``.grad`` of the Value's leaves."""

    __slots__ = ("_value",)

    @classmethod
    def of(cls, value):
        self = cls._make(np.array(value.data), requires_grad=True)
        self._value = value
        return self

    @property
    def grad(self):
        return None  # (so every gradient that arrives is handed to the setter whole)

    @grad.setter
    def grad(self, g):
        if g is None:  # zero_grad()
            return
        if isinstance(g, Box):
            raise TypeError(f"backward(create_graph=True): a gradient reached "
                            f"{self._value!r}, a Value that met an array, and the scalar "
                            f"engine cannot hold a tensor's graph; make it a tensor "
                            f"(cr.tensor({self._value.data!r}, requires_grad=True))")
        self._value.backward(gradient=float(g))


# NumPy's arithmetic on single numbers, as the scalar engine's own operators
_OPERATORS = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
              np.true_divide: operator.truediv, np.power: operator.pow,
              np.negative: operator.neg, np.positive: operator.pos}


def array_ufunc(value, ufunc, method, *inputs, **kwargs):
    """``Value.__array_ufunc__``: a NumPy ufunc with a Value among its inputs (``np.float64(2) * v``,
    ``array * v``): a Value for single numbers, a clear error for arrays, never an
    array of Value objects (which would leave the graph unseen)."""
    if method == "__call__" and not kwargs and ufunc in _OPERATORS and \
            all(isinstance(x, Box) or np.ndim(x) == 0 for x in inputs):
        numbers = [x if isinstance(x, Box) else float(x) for x in inputs]
        return _OPERATORS[ufunc](*numbers)
    from ..methods import numpy_protocol
    return numpy_protocol.apply_ufunc(ufunc, method, inputs, kwargs, lambda array: array)


def written_since(node):
    """The error of a create_graph walk (which differentiates the Values themselves)
    through a node whose numbers were written since it was made, naming which."""
    names = ["its own value", *[f"operand {i} ({o!r})" for i, o in enumerate(node._prev)]]
    now = (node.data, *[operand.data for operand in node._prev])
    which = next(n for n, a, b in zip(names, now, node._seen) if a is not b and a != b)
    return (f"backward through {node._op!r}: the .data of {which} was written after the "
            f"graph was built, so the gradient would mix old and new numbers; build the "
            f"graph again from the new values")

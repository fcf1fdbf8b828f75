"""The scalar engine: a ``Value`` is a number that remembers how it was made.

Backpropagation, all of it, is these lines (``backward()`` below, with its extras)::

    order = topological_order(root)         # every node after the nodes it was made from
    root.grad = 1.0                         # d root / d root
    for node in reversed(order):            # from the output back to the inputs
        partials = node._rule(node.data, *[operand.data for operand in node._prev])
        for operand, partial in zip(node._prev, partials):
            operand.grad += partial * node.grad       # the chain rule, summed over uses

Top to bottom: 1. the derivative table, all the calculus the engine knows; 2. ``Value``,
whose operations record their operands (``_prev``) and table entry (``_rule``); 3.
``backward()``. Below the line at the end: the power rules, and plumbing (the table's edge
cases, a power at 0 and the kinks, are with its arithmetic in ``floatmath.py``).

micrograd's API, with three differences: a node points only at its operands (no cycle:
a dropped graph is freed at once); the walk uses an explicit stack (a million nodes
deep is fine); and the rules, written with floatmath's functions of floats and Values
alike, give Values with ``create_graph=True``: derivatives of derivatives.
"""

import math
from numbers import Real
from typing import Any

from .floatmath import (absolute, as_float, cos, d_power_base, d_power_exponent, exp,
                        float_cos, float_exp, float_log, float_pow, float_sigmoid, float_sin,
                        float_sqrt, log, power, relu, sigmoid, sign, sin, sqrt, step, tanh)
from ..graph import topological_order
from ..modes import modes_switched as _switched, scalar_operands
from ..primitive import Box
from .fast_paths import backpropagate
from .value_ops import apply, array_ufunc, written_since

__all__ = ["Value", "DERIVATIVES", "exp", "log", "sqrt", "power", "sin", "cos", "tanh",
           "sigmoid", "relu", "absolute"]


# ---------------------------------------------------------------------------------------
# 1. The derivative table: (ans, *operands) -> (d ans/d operand, ...), floats in a plain
# backward pass, Values with create_graph; texts for explain ({0}, {1} operands, {out}).
# ---------------------------------------------------------------------------------------

def rule(partials, *texts):
    """A table entry: the partial derivatives, with their formulas as text."""
    partials.texts = texts
    return partials


DERIVATIVES = {
    # a - b is a + (-1 * b), as in micrograd; a / b is its own operation, since
    # a * b**-1 would overflow for a tiny b even where a / b is finite
    "+":       rule(lambda ans, a, b: (1.0, 1.0), "1", "1"),
    "*":       rule(lambda ans, a, b: (b, a), "{1}", "{0}"),
    "/":       rule(lambda ans, a, b: (1.0 / b, -ans / b), "1 / {1}", "-{out} / {1}"),
    "**":      rule(lambda ans, a, b: (d_power_base(a, b), d_power_exponent(ans, a, b)),
                    "{1} * {0}**({1} - 1)", "{out} * log({0})"),
    "exp":     rule(lambda ans, x: (ans,), "{out}"),           # (e^x)' = e^x
    "log":     rule(lambda ans, x: (1.0 / x,), "1 / {0}"),
    "sqrt":    rule(lambda ans, x: (0.5 / ans,), "0.5 / {out}"),   # infinite at 0: raises
    "sin":     rule(lambda ans, x: (cos(x),), "cos({0})"),
    "cos":     rule(lambda ans, x: (-sin(x),), "-sin({0})"),
    "tanh":    rule(lambda ans, x: (1.0 - ans * ans,), "(1 - {out}**2)"),
    "sigmoid": rule(lambda ans, x: (ans * (1.0 - ans),), "{out} * (1 - {out})"),
    # kinks: the derivative at the kink is 0 (PyTorch and JAX agree)
    "ReLU":    rule(lambda ans, x: (step(x),), "({0} > 0)"),
    "abs":     rule(lambda ans, x: (sign(x),), "sign({0})"),
}


# ---------------------------------------------------------------------------------------
# 2. Value. Operators build type(self)(...): a subclass (micrograd's) keeps its kind
# ---------------------------------------------------------------------------------------

class Value(Box):
    """A scalar that records the operations that made it, so it can be differentiated.

    >>> a, b = cr.Value(2.0), cr.Value(3.0)
    >>> c = a * b + a
    >>> c.backward()
    >>> a.grad, b.grad                    # dc/da = b + 1, dc/db = a
    (4.0, 2.0)

    ``data`` is the number, ``grad`` d(output of the last backward())/d(this value).
    """

    __slots__ = ("data", "grad", "_prev", "_op", "_rule", "label", "_seen", "__weakref__")

    def __init__(self, data: float, _children: tuple = (), _op: str = "", label: str = "",
                 _rule: object = None) -> None:
        self.data = data if type(data) is float else as_float(data)
        self.grad: Any = 0.0  # a float; a Value after backward(create_graph=True)
        if _switched[0]:  # inside no_grad() or detect_anomaly(), in some thread
            _children = scalar_operands(self.data, _children, _op)
        self._prev, self._op = tuple(_children), _op
        # the numbers its rule reads: a .data written later cannot change the walk
        prev = self._prev
        self._seen = (self.data, prev[0].data, prev[1].data) if len(prev) == 2 else \
            _numbers(self, prev)
        self.label = label  # a name for pictures and explanations, as in micrograd
        # a node built by hand, micrograd style (Value(x, (a, b), '*')), finds its rule
        self._rule = _rule if (_rule is not None or not _children) else DERIVATIVES.get(_op)

    def __repr__(self): return f"Value(data={self.data}, grad={self.grad})"

    def _operand(self, x):  # None for a non-number: NotImplemented, and Python's TypeError
        return x if isinstance(x, Value) else type(self)(x) if isinstance(x, Real) else None

    def __add__(self, other):
        other = other if isinstance(other, Value) else self._operand(other)
        return NotImplemented if other is None else \
            type(self)(self.data + other.data, (self, other), "+")

    def __mul__(self, other):
        other = other if isinstance(other, Value) else self._operand(other)
        return NotImplemented if other is None else \
            type(self)(self.data * other.data, (self, other), "*")

    def __truediv__(self, other):
        other = self._operand(other)
        if other is None:
            return NotImplemented
        if other.data == 0:
            raise ValueError(f"/: division by zero ({self.data!r} / {other.data!r})")
        return type(self)(self.data / other.data, (self, other), "/")

    def __pow__(self, other):
        if isinstance(other, Value):  # both base and exponent vary
            return type(self)(float_pow(self.data, other.data), (self, other), "**")
        if not isinstance(other, Real):
            return NotImplemented
        return type(self)(float_pow(self.data, other), (self,), f"**{other}",
                          _rule=power_rule(other))

    def __rpow__(self, base):  # number ** Value
        if not isinstance(base, Real):
            return NotImplemented
        return type(self)(float_pow(base, self.data), (self,), f"{base}**",
                          _rule=exponential_rule(base))

    def __neg__(self): return self * -1
    def __sub__(self, other): return self + (-other) if isinstance(other, (Value, Real)) \
        else NotImplemented
    # reflected operators (2 + x, never Value + Value): operands keep their written order
    def __radd__(self, o): return type(self)(o) + self if _real(o) else NotImplemented
    def __rmul__(self, o): return type(self)(o) * self if _real(o) else NotImplemented
    def __rsub__(self, o): return type(self)(o) + (-self) if _real(o) else NotImplemented
    def __rtruediv__(self, o): return type(self)(o) / self if _real(o) else NotImplemented

    # functions of one Value, each an operation of the table

    def relu(self) -> "Value":
        """max(x, 0); its derivative is 1 for x > 0, else 0 (0 at the kink, too).
        >>> cr.Value(-2.0).relu().data, cr.Value(3.0).relu().data
        (0.0, 3.0)"""
        return type(self)(0.0 if self.data < 0 else self.data, (self,), "ReLU")

    def exp(self) -> "Value":
        """e ** x; its derivative is itself (inf, not OverflowError, for huge x).
        >>> round(cr.Value(1.0).exp().data, 4)
        2.7183"""
        return type(self)(float_exp(self.data), (self,), "exp")

    def log(self) -> "Value":
        """The natural logarithm; its derivative is 1/x. ValueError for x <= 0.
        >>> cr.Value(0.0).log()
        Traceback (most recent call last):
        ValueError: log: 0.0 is outside the domain of log (x > 0)"""
        return type(self)(float_log(self.data), (self,), "log")

    def sqrt(self) -> "Value":
        """The square root; its derivative is 1 / (2 sqrt(x)). ValueError for x < 0.
        >>> cr.Value(4.0).sqrt().data
        2.0"""
        return type(self)(float_sqrt(self.data), (self,), "sqrt")

    def sin(self) -> "Value":
        """The sine; its derivative is the cosine.
        >>> cr.Value(0.0).sin().data
        0.0"""
        return type(self)(float_sin(self.data), (self,), "sin")

    def cos(self) -> "Value":
        """The cosine; its derivative is minus the sine.
        >>> cr.Value(0.0).cos().data
        1.0"""
        return type(self)(float_cos(self.data), (self,), "cos")

    def tanh(self) -> "Value":
        """The hyperbolic tangent; its derivative is 1 - tanh**2 (no overflow far out).
        >>> round(cr.Value(0.5).tanh().data, 4)
        0.4621"""
        return type(self)(math.tanh(self.data), (self,), "tanh")

    def sigmoid(self) -> "Value":
        """1 / (1 + e**-x), without overflow; its derivative is s * (1 - s).
        >>> cr.Value(0.0).sigmoid().data
        0.5"""
        return type(self)(float_sigmoid(self.data), (self,), "sigmoid")

    def abs(self) -> "Value":
        """The absolute value, also ``abs(x)``; its derivative is the sign (0 at 0).
        >>> abs(cr.Value(-3.0)).data
        3.0"""
        return type(self)(abs(self.data), (self,), "abs")

    __abs__ = abs

    # --- 3. backpropagation ---------------------------------------------------------

    def backward(self, gradient: float = 1.0, create_graph: bool = False,
                 explain: bool | dict = False) -> None:
        """Fill ``.grad`` of every node this one depends on with d(self)/d(node).

        Leaves *accumulate* (call backward twice, get twice the gradient, as in micrograd
        and PyTorch; ``zero_grad()`` clears); interior nodes hold this pass's only.
        ``create_graph=True`` makes the gradients Values, built from the graph's own
        operations, to differentiate again. ``explain=True`` prints each step of the
        chain rule with its numbers (``explain=locals()`` also names the nodes).

        >>> a, b = Value(2.0, label="a"), Value(3.0, label="b")
        >>> c = a * b; c.label = "c"
        >>> c.backward(explain=True)
        c.grad = 1.0   (the start: dc/dc = 1)
        c = a * b   a.grad += b.data * c.grad = 3.0 * 1.0 -> 3.0
                    b.grad += a.data * c.grad = 2.0 * 1.0 -> 2.0
        """
        order = topological_order(self)
        seed = Value(gradient) if create_graph else as_float(gradient)
        if not order:  # self is a leaf: d(self)/d(self) = 1
            self.grad = self.grad + seed
            return
        for node in order:  # interior nodes start from zero at every pass
            node.grad = 0.0
        self.grad = seed
        if explain:  # the same walk, each step told by chainrule.explain
            from ..explain import ScalarStory
            ScalarStory(self, explain, order, seed).walk(create_graph)
        elif create_graph or not backpropagate(order, Value, DERIVATIVES["ReLU"]):
            for node in reversed(order):  # (fast_paths.backpropagate: this loop, faster)
                node._chain_rule(create_graph)
        if create_graph:  # interior nodes keep the number: a gradient's graph holds the
            for node in order:  # nodes that use it (a cycle); the leaves keep theirs
                node.grad = node.grad.data

    def _chain_rule(self, create_graph=False):
        """One step of the chain rule: pass this node's gradient on to its operands."""
        g = self.grad
        for operand, d in zip(self._prev, self._partials(create_graph)):
            operand.grad += d * g

    def _partials(self, create_graph):
        """The table's partial derivatives here: floats, or Values (create_graph)."""
        operands, partials = self._prev, self._rule
        if partials is None:
            raise TypeError(f"backward: no derivative rule for the operation {self._op!r} "
                            f"of {self!r}; known operations: {', '.join(DERIVATIVES)}")
        try:
            if create_graph:  # the operands themselves: their numbers must be the node's
                if _numbers(self, operands) != self._seen:
                    raise RuntimeError(written_since(self))
                return partials(self, *operands)
            return partials(*self._seen)  # the numbers the node was computed from
        except (ValueError, ZeroDivisionError, OverflowError) as err:
            inputs = ", ".join(repr(number) for number in self._seen[1:])
            raise ValueError(f"backward through {self._op!r} (operands {inputs}): the "
                             f"derivative is not a finite real number: {err}") from None


# =======================================================================================
# Below the line: the power rules' table entries (their edge cases, with relu's and abs's
# kinks, are floatmath's d_power_base, d_power_exponent, step and sign), and the plumbing
# that lets the tensor table, NumPy and the transforms take a Value. The engine is
# complete above.
# =======================================================================================

def power_rule(n):  # x ** n, n constant: n * x**(n-1), and 0 for n = 0 (even at x = 0)
    if n == 0:
        return rule(lambda ans, x: (0.0,), "0")
    return rule(lambda ans, x: (n * power(x, n - 1),), f"{n} * {{0}}**{float(n) - 1:g}")


def exponential_rule(base):  # base ** x, base constant: base**x * ln(base)
    return rule(lambda ans, x: (d_power_exponent(ans, base, x),), f"{{out}} * log({base})")


def _real(x): return isinstance(x, Real)


def _numbers(node, operands):
    """The numbers a node's rule reads: its own and its operands' (the float objects)."""
    if len(operands) == 2:  # (unrolled for the usual arities: a node's hottest line)
        return node.data, operands[0].data, operands[1].data
    if len(operands) == 1:
        return node.data, operands[0].data
    return (node.data, *[operand.data for operand in operands]) if operands else ()


# In the tensor table and NumPy's ufuncs: above a Tensor (joined as 0-d), below tracers
Value._level, Value._contents = 0.5, lambda self: self.data
Value._apply_primitive, Value.__array_ufunc__ = classmethod(apply), array_ufunc

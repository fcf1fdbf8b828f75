"""Backpropagation in sixty lines: the scalar engine with nothing but the idea.

Read this file first. ``value.py`` is the same engine with what a library needs around
it (more operations, an explicit stack instead of recursion, derivatives of derivatives,
errors that name the value); tests/test_first_read.py checks that both give the same
numbers, to the last bit, on random expressions.

>>> a, b = Value(2.0), Value(-0.5)
>>> f = (a * b + a).tanh()                 # tanh(1)
>>> f.backward()
>>> round(a.grad, 6), round(b.grad, 6)     # (1 - f**2) * (b + 1), (1 - f**2) * a
(0.209987, 0.839949)
"""

import math

__all__ = ["Value"]

# The derivative table: for each operation, the partial derivative of its result with
# respect to each operand, from the result's number and the operands' numbers.
DERIVATIVES = {
    "+": lambda out, a, b: (1.0, 1.0),             # d(a + b)/da = 1, d(a + b)/db = 1
    "*": lambda out, a, b: (b, a),                 # d(a * b)/da = b, d(a * b)/db = a
    "tanh": lambda out, x: (1.0 - out * out,),     # tanh' = 1 - tanh**2
}


class Value:
    """A number that remembers how it was made: its operands and its operation."""

    def __init__(self, data, _prev=(), _op=""):
        self.data, self.grad = float(data), 0.0
        self._prev, self._op = _prev, _op    # what it was made from, and how

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data + other.data, (self, other), "+")

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data * other.data, (self, other), "*")

    def tanh(self):
        return Value(math.tanh(self.data), (self,), "tanh")

    __radd__, __rmul__ = __add__, __mul__

    def backward(self):
        """Fill in ``.grad`` of every Value this one was made from: d self / d value."""
        order, seen = [], set()

        def visit(node):                     # every node after the nodes it was made from
            if id(node) not in seen:
                seen.add(id(node))
                for operand in node._prev:
                    visit(operand)
                order.append(node)

        visit(self)
        self.grad = 1.0                      # d self / d self
        for node in reversed(order):         # from the output back to the inputs
            if not node._prev:
                continue                     # an input: nothing made it
            partials = DERIVATIVES[node._op](node.data, *[v.data for v in node._prev])
            for operand, partial in zip(node._prev, partials):
                operand.grad += partial * node.grad      # the chain rule, summed over uses

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

"""chainrule: automatic differentiation you can read.

    from chainrule import Value
    a, b = Value(2.0), Value(3.0)
    c = a * b + a
    c.backward()
    a.grad, b.grad          # (4.0, 2.0)
"""

from .value import (Value, absolute, cos, exp, log, power, relu, sigmoid, sin, sqrt,
                    tanh)
from .viz import draw_graph, render_graph

abs = absolute  # like numpy.abs

__version__ = "0.1.0"

__all__ = [
    "Value", "draw_graph", "render_graph",
    "exp", "log", "sqrt", "power", "sin", "cos", "tanh", "sigmoid", "relu", "absolute", "abs",
]

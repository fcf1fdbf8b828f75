"""autograd.misc: functional optimizers on parameter trees, flattening a tree, fixed
points differentiated implicitly, and a function traced once (``const_graph``). As in
autograd, ``autograd.misc.flatten`` is the function; its module is imported by path."""

from . import fixed_points, optimizers  # noqa: F401
from .flatten import flatten
from .tracers import const_graph

__all__ = ["fixed_points", "flatten", "optimizers", "const_graph"]

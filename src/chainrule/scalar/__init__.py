"""The scalar engine: ``Value``, micrograd's API on Python floats.

    value.py       Value: a number, its gradient, and the node that made it
    value_ops.py   what a Value needs besides its operators (NumPy's ufuncs on a Value,
                   the numbers a node saw)
    floatmath.py   the elementary functions on floats and Value-alikes, with the
                   domain errors Python's math module gives
    fast_paths.py  the backward walk and a node's construction with fewer Python
                   calls, the plain code's numbers bit for bit
"""

from ..pickling import reduce_value
from .value import Value

Value.__reduce__ = reduce_value  # pickled and deep-copied as a new leaf (pickling.py)

__all__ = ["Value"]

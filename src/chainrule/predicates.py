"""Tests and logic on numbers, arrays, Tensors and traced values: ``isfinite``,
``isnan``, ``logical_and``, ``all``, ``greater``... They have no derivative (their
results are booleans), so they look at the numbers inside and return plain NumPy
booleans, usable in ``cr.where`` and in Python's ``if``.
"""

import numpy as np

from .primitive import raw

__all__ = ["isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_not",
           "logical_xor", "all", "any", "greater", "greater_equal", "less", "less_equal",
           "equal", "not_equal", "argmax", "argmin", "argsort", "searchsorted"]


def _on_numbers(numpy_function, what="a bool array, or a bool"):
    def function(*args, **kwargs):
        return numpy_function(*[raw(a) for a in args],
                              **{k: raw(v) for k, v in kwargs.items()})
    function.__name__ = numpy_function.__name__
    function.__qualname__ = numpy_function.__name__
    function.__doc__ = (f"np.{numpy_function.__name__} on the numbers inside ({what}): "
                        f"it has no derivative.")
    return function


isfinite, isnan, isinf = _on_numbers(np.isfinite), _on_numbers(np.isnan), _on_numbers(np.isinf)
logical_and, logical_or = _on_numbers(np.logical_and), _on_numbers(np.logical_or)
logical_not, logical_xor = _on_numbers(np.logical_not), _on_numbers(np.logical_xor)
all, any = _on_numbers(np.all), _on_numbers(np.any)
greater, greater_equal = _on_numbers(np.greater), _on_numbers(np.greater_equal)
less, less_equal = _on_numbers(np.less), _on_numbers(np.less_equal)
equal, not_equal = _on_numbers(np.equal), _on_numbers(np.not_equal)
argmax = _on_numbers(np.argmax, "indices")
argmin = _on_numbers(np.argmin, "indices")
argsort = _on_numbers(np.argsort, "indices")
searchsorted = _on_numbers(np.searchsorted, "indices")

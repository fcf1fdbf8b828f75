"""Tests and logic on numbers, arrays, Tensors and traced values: ``isfinite``,
``isnan``, ``logical_and``, ``all``, ``greater``... They have no derivative (their
results are booleans), so they look at the numbers inside and return plain NumPy
booleans, usable in ``cr.where`` and in Python's ``if``.
"""

from typing import Any

from .. import arrays as xp

from ..primitive import raw, renamed

__all__ = ["isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_not",
           "logical_xor", "all", "any", "greater", "greater_equal", "less", "less_equal",
           "equal", "not_equal", "argmax", "argmin", "argsort", "searchsorted", "isclose",
           "allclose", "array_equal"]


def _on_numbers(numpy_function, example, what="a bool array, or a bool"):
    def function(*args: Any, **kwargs: Any) -> Any:
        if kwargs:  # PyTorch's dim= and keepdim= too
            kwargs = renamed(kwargs, {"dim": "axis", "keepdim": "keepdims"},
                             numpy_function.__name__)
        return numpy_function(*[raw(a) for a in args],
                              **{k: raw(v) for k, v in kwargs.items()})
    function.__name__ = function.__qualname__ = numpy_function.__name__
    call, shown = example
    function.__doc__ = (f"np.{numpy_function.__name__} on the numbers inside ({what}): "
                        f"it has no derivative.\n\n    >>> {call}\n    {shown}\n    ")
    return function


_X = "cr.tensor([1.0, 2.0])"
isfinite = _on_numbers(xp.isfinite, ("cr.isfinite(cr.tensor([1.0, np.inf]))",
                                     "array([ True, False])"))
isnan = _on_numbers(xp.isnan, ("cr.isnan(cr.tensor([1.0, np.nan]))", "array([False,  True])"))
isinf = _on_numbers(xp.isinf, ("cr.isinf(cr.tensor([1.0, -np.inf]))",
                               "array([False,  True])"))
logical_and = _on_numbers(xp.logical_and, (f"cr.logical_and({_X} > 1, [True, True])",
                                           "array([False,  True])"))
logical_or = _on_numbers(xp.logical_or, (f"cr.logical_or({_X} > 1, [True, False])",
                                         "array([ True,  True])"))
logical_not = _on_numbers(xp.logical_not, (f"cr.logical_not({_X} > 1)",
                                           "array([ True, False])"))
logical_xor = _on_numbers(xp.logical_xor, ("cr.logical_xor([True, False], [True, True])",
                                           "array([False,  True])"))
all = _on_numbers(xp.all, (f"bool(cr.all({_X} > 0))", "True"))
any = _on_numbers(xp.any, (f"bool(cr.any({_X} > 1.5))", "True"))
greater = _on_numbers(xp.greater, (f"cr.greater({_X}, 1.5)", "array([False,  True])"))
greater_equal = _on_numbers(xp.greater_equal, (f"cr.greater_equal({_X}, 2.0)",
                                               "array([False,  True])"))
less = _on_numbers(xp.less, (f"cr.less({_X}, 1.5)", "array([ True, False])"))
less_equal = _on_numbers(xp.less_equal, (f"cr.less_equal({_X}, 1.0)",
                                         "array([ True, False])"))
equal = _on_numbers(xp.equal, (f"cr.equal({_X}, 2.0)", "array([False,  True])"))
not_equal = _on_numbers(xp.not_equal, (f"cr.not_equal({_X}, 2.0)", "array([ True, False])"))
isclose = _on_numbers(xp.isclose, (f"cr.isclose({_X}, [1.0, 2.1])", "array([ True, False])"),
                      "a bool array")
allclose = _on_numbers(xp.allclose, (f"cr.allclose({_X}, [1.0, 2.0 + 1e-9])", "True"),
                       "a bool, as torch.allclose")
array_equal = _on_numbers(xp.array_equal, (f"cr.array_equal({_X}, [1.0, 2.0])", "True"),
                          "a bool")
_Y = "cr.tensor([1.0, 3.0, 2.0])"
argmax = _on_numbers(xp.argmax, (f"int(cr.argmax({_Y}))", "1"), "indices")
argmin = _on_numbers(xp.argmin, (f"int(cr.argmin({_Y}))", "0"), "indices")
argsort = _on_numbers(xp.argsort, (f"cr.argsort({_Y})", "array([0, 2, 1])"), "indices")
searchsorted = _on_numbers(xp.searchsorted, ("int(cr.searchsorted(cr.tensor([1.0, 2.0, 3.0]), "
                                             "2.5))", "2"), "indices")

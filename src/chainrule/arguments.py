"""What calling an operation does with its arguments, besides finding the box to hand
it to.

``Primitive.__call__`` (``primitive.py``) scans its arguments for boxes; the helpers
here deal with the rest of what it meets: PyTorch's names of operands (``input=``,
``other=``) and of parameters (``dim=`` for ``axis=``), NumPy's ``dtype=`` of a
reduction, a batch of ``cr.vmap`` among the keyword parameters, a list of boxes (their
stack), and an array of another library, which goes to ``chainrule.backends`` through
``chainrule.libraries`` or is refused by a message that names its type. A call with
plain positional arguments and no keywords reaches none of them.
"""

from typing import Any

import numpy as np

from . import libraries
from .arrays import ARRAYS
from .boxes import _PLAIN, _SEQUENCES, Box, _boxes_in

__all__ = ["objects_refused", "ObjectOperands", "of_a_library", "renamed"]


def _batched_param(kwargs):
    """The highest batch of cr.vmap among an operation's parameters (an index computed
    from batched data): it takes part in choosing the level, as an operand does."""
    top = None
    for value in kwargs.values():
        for part in (value if type(value) is tuple else (value,)):
            if isinstance(part, Box) and part._batched and \
                    (top is None or part._level > top._level):
                top = part
    return top


def _in_keywords(args, kwargs):
    """An array of another library among an operation's keyword parameters (in a
    tuple too: getitem's ``index=(slice(None), order)`` of torch's argsort), or None.
    One the engine wrapped counts only beside a NumPy array, which cannot meet it
    (NumPy's array indexed by torch's): ``foreign_call`` makes that the library's."""
    for value in kwargs.values():
        for part in (value if type(value) is tuple else (value,)):
            if type(part) not in _PLAIN and not isinstance(part, Box) and (
                    _foreign_array(part) or libraries.wrapped(part) and any(
                        type(a) is np.ndarray for a in args)):
                return part
    return None


class ObjectOperands(TypeError):
    """An operation whose result is an array of Python objects, which no derivative
    of chainrule's transforms can carry (a layer that traces such values of its own,
    as autograd's drop-in does for a user's vector space, takes over on it)."""


def objects_refused(name):
    """The error of an operation whose result is an array of Python objects (Values,
    or other objects, inside a NumPy array): it carries no derivative a rule can see."""
    return ObjectOperands(f"{name}: an argument is a NumPy array of Python objects (Values "
                     f"inside an array?), which chainrule cannot differentiate through; "
                     f"use NumPy arrays of numbers or Tensors, or Values alone")


def _cast_first(args, kwargs, name):
    """(args, kwargs) with the first operand cast to ``kwargs["dtype"]``, and dtype gone."""
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype")
    if dtype is None or not args:
        return args, kwargs
    x = args[0]
    if _foreign_array(x) and not isinstance(x, Box):
        raise TypeError(f"{name}: dtype= is NumPy's; cast an array of another library "
                        f"with its own method first")
    x = x.astype(dtype) if isinstance(x, (Box, np.ndarray, np.generic)) \
        else np.asarray(x, dtype=dtype)
    return (x,) + tuple(args[1:]), kwargs


def _foreign_array(x):
    """Whether x is an array of another library (xarray, pandas, torch...): one that
    takes part in NumPy's protocols without being an ndarray. Its own arithmetic would
    wrap chainrule's values, and what came out would be cut from the graph."""
    if isinstance(x, (np.ndarray, np.generic, type)) or type(x) in ARRAYS:
        return False  # (a class, np.float32, has the protocols' names too)
    return any(hasattr(x, name) for name in ("__array_ufunc__", "__array_function__",
                                             "__array__", "__array_interface__",
                                             "__array_namespace__"))


def of_a_library(x: Any) -> bool:
    """Whether x is an array of a library the engine runs on besides NumPy (torch,
    CuPy, Dask: ``chainrule.backends``), which a rule hands on as it is rather than
    turning it into NumPy's (which would copy a GPU's array, or compute a Dask graph).

    >>> of_a_library(np.ones(2)), of_a_library([True])
    (False, False)
    """
    if not _foreign_array(x):
        return False
    return libraries.library_of(x) is not None


def _refuse_foreign(name, x):
    kind = f"{type(x).__module__.split('.')[0]}.{type(x).__qualname__}"
    return (f"{name}: an argument is a {kind}, an array type chainrule does not "
            f"differentiate through (the gradient would be lost); convert it to a NumPy "
            f"array first (np.asarray(x), or its .to_numpy())")


def _operands_by_name(args, kwargs, name):
    """PyTorch's names of an operation's operands, ``input=`` and ``other=``, as the
    positional arguments they are here (a keyword operand would not be differentiated)."""
    kwargs = dict(kwargs)
    if "input" in kwargs:
        if args:
            raise TypeError(f"{name}: got input= and a positional operand; give one")
        args = (kwargs.pop("input"),)
    if "other" in kwargs:
        if len(args) != 1:
            raise TypeError(f"{name}: other= is the second operand; give the first before it")
        args = args + (kwargs.pop("other"),)
    return args, kwargs


def renamed(kwargs, aliases, name):
    """kwargs with other names of an argument (``{"dim": "axis"}``) replaced by its own;
    a TypeError if both are given."""
    for other, own in aliases.items():
        if other in kwargs:
            if own in kwargs:
                raise TypeError(f"{name}: got both {own}= and {other}= (another name for "
                                f"it); give one")
            kwargs = dict(kwargs)
            kwargs[own] = kwargs.pop(other)
    return kwargs


def _stacked(arg):
    """A list (or tuple) that holds boxes, as one box (``_from_list`` of the highest
    kind)."""
    boxes = _boxes_in(arg) if type(arg) in _SEQUENCES else None
    if not boxes:
        return arg
    top = max(boxes, key=lambda box: box._level)
    if not hasattr(top, "_from_list"):
        raise TypeError(f"a list of {type(top).__name__}s cannot be an array argument; "
                        f"use Tensors (cr.tensor) for arrays")
    return top._from_list(arg)

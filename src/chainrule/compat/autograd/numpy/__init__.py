"""autograd.numpy: NumPy's namespace with chainrule's differentiable functions
(``chainrule.numpy``), and its linalg and random modules, as autograd has them."""

import builtins as _python  # (any, among NumPy's names below, is np.any here)

import numpy as _np

from ....api import numpy as _chainrule_numpy
from .... import rules as _rules
from ....api.numpy import *  # noqa: F401,F403
from ....api.numpy import __all__ as _names
from ....primitive import raw as _raw
from . import linalg, numpy_boxes, random  # noqa: F401

__all__ = [*_names, "linalg", "random", "make_diagonal", "where", "int8", "int16", "int32",
           "int64", "integer"]


def __getattr__(name):
    """The rest of NumPy's namespace (constants, dtypes), as chainrule.numpy has it."""
    return getattr(_chainrule_numpy, name)


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd's inverse of ``np.diagonal``: the array of shape ``D.shape + (n,)``
    whose last two axes hold the square matrix with ``D``'s last axis (of length n) on
    its diagonal, zeros elsewhere; differentiable in D. As in autograd, only
    ``offset=0, axis1=-1, axis2=-2`` are taken.

    >>> import chainrule.autograd.numpy as anp
    >>> anp.make_diagonal(np.array([1.0, 2.0]), axis1=-1, axis2=-2)
    array([[1., 0.],
           [0., 2.]])
    """
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise ValueError(f"make_diagonal: offset={offset}, axis1={axis1}, axis2={axis2}; "
                         f"expected offset=0, axis1=-1, axis2=-2 (as autograd takes)")
    n = _np.shape(_raw(D))[-1]
    return _rules.expand_dims(D, -1) * _np.eye(n)


def where(condition, *args, **kwargs):
    """``np.where`` as autograd has it: ``x`` and ``y`` may be given by name, and where
    nothing is an array (Python numbers and lists), the result is Python's too
    (``where(True, 1, 2)`` is ``1``), as autograd returns it.

    >>> import chainrule.autograd.numpy as anp
    >>> anp.where([True, False], [1, 2], y=[3, 4]), anp.where(True, 1, 2)
    ([1, 4], 1)
    """
    if not args and not kwargs:  # the indices of the true entries, as np.nonzero
        return _np.nonzero(_raw(condition))
    if len(args) + len(kwargs) != 2 or set(kwargs) - {"x", "y"}:
        raise ValueError(f"where: expected both of x and y or neither (positionally or "
                         f"as x=, y=), got {len(args)} more positional arguments and "
                         f"keywords {sorted(kwargs)}")
    x = args[0] if args else kwargs["x"]
    y = args[1] if len(args) > 1 else kwargs["y"]
    result = _chainrule_numpy.where(condition, x, y)
    if not _python.any(_array_inside(v) for v in (condition, x, y)) and \
            isinstance(result, _np.ndarray):
        return result.tolist()
    return result


def _array_inside(value):
    """Whether value is (or a list or tuple holds) an array or a traced value."""
    if isinstance(value, (list, tuple)):
        return _python.any(_array_inside(v) for v in value)
    return not isinstance(value, (bool, int, float, complex))


def _integer_type(numpy_type):
    """NumPy's integer type, whose constructor takes a traced array as its plain
    numbers: an index made from data carries no derivative (autograd does the same)."""
    class Integer(numpy_type):
        def __new__(cls, value=0, *args, **kwargs):
            return numpy_type(_raw(value), *args, **kwargs)
    Integer.__name__ = Integer.__qualname__ = numpy_type.__name__
    Integer.__doc__ = numpy_type.__doc__
    return Integer


int8, int16, int32, int64, integer = (_integer_type(t) for t in (
    _np.int8, _np.int16, _np.int32, _np.int64, _np.integer))

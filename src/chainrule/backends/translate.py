"""NumPy's calls, as an Array API namespace makes them.

A rule calls NumPy's function (``np.sum(x, axis=0)``, ``np.add.at``, ``x.reshape``);
NumPy hands the call to the ``ForeignArray`` among the arguments, which brings it here.
Most functions have the same name and arguments in the standard (``exp``, ``matmul``,
``where``); the rest are a line each in a table: a new name (``concatenate`` is ``concat``,
``transpose`` is ``permute_dims``), or NumPy's arguments spelled the standard's way
(``ddof`` is ``correction``), or what the standard lacks, written with what it has
(``shims.py``). A function that has no translation raises, naming the library and the
operation: nothing falls back to NumPy.

The work is in three files, by what NumPy calls: ``ufuncs.py`` (``np.exp``,
``np.add.at``), ``functions.py`` (``np.sum``, ``np.linalg.solve``: the table) and
``indexing.py`` (``x[i]``, ``x[i] = v``). This module holds the array's methods and
vectorized Python functions, and is the one ``foreign.py`` calls for all of them.
"""

import numpy as np

from . import shims
from .functions import call
from .indexing import getitem, setitem
from .ufuncs import ufunc

__all__ = ["call", "ufunc", "method", "getitem", "setitem", "python_function"]


# ---------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------

# ndarray methods that are not NumPy's function of the same name with the array first
_METHODS = {
    "reshape": lambda x, *shape, **kw: np.reshape(
        x, shape[0] if len(shape) == 1 else shape, **kw),
    "transpose": lambda x, *axes: np.transpose(
        x, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None),
    "flatten": lambda x, order="C": np.copy(np.ravel(x)),
    "astype": lambda x, dtype, **kw: np.astype(x, dtype),
    "conj": lambda x: np.conjugate(x), "conjugate": lambda x: np.conjugate(x),
    "fill": lambda x, value: x.__setitem__(Ellipsis, value),
    "view": None,
}


def method(x, name):
    """``x.name`` for a ForeignArray: NumPy's function of that name, called with x."""
    special = _METHODS.get(name, _MISSING)
    if special is None or name.startswith("__"):
        raise AttributeError(f"chainrule: {x._lib.name} arrays have no method {name!r} "
                             f"here (operation ndarray.{name})")
    if special is not _MISSING:
        return lambda *args, **kwargs: special(x, *args, **kwargs)
    function = getattr(np, name, None)
    if not callable(getattr(np.ndarray, name, None)) or function is None:
        raise AttributeError(f"chainrule: {x._lib.name} arrays have no method {name!r} "
                             f"here (operation ndarray.{name})")
    return lambda *args, **kwargs: function(x, *args, **kwargs)


_MISSING = object()


# ---------------------------------------------------------------------------------------
# A Python function applied to arrays (xp.call): only those the library has its own of
# ---------------------------------------------------------------------------------------

def python_function(lib, function, args):
    """``function(*args)`` where ``function`` is a NumPy-vectorized Python function
    (``math.erf``): the library's own version of it, or an error naming both."""
    own = shims.vectorized(lib, function)
    if own is None:
        name = getattr(getattr(function, "pyfunc", function), "__name__", repr(function))
        raise TypeError(f"chainrule: {name} computes with NumPy's arrays (Python or "
                        f"SciPy code, which {lib.name} has no version of), and an array of "
                        f"{lib.name} is not turned into a NumPy array behind your back; "
                        f"pass NumPy arrays there")
    return lib.wrap(own(*[lib.take(a, "call") for a in args]))

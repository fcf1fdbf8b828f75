"""Indexing an array of another library as NumPy indexes: ``x[index]`` and
``x[index] = value``.

The index is made the library's (its own arrays for NumPy's, where it cannot index by
NumPy's), with the parts not every library takes spelled in ones it does: a trailing
``...``, a slice of negative step as a flip. ``_known`` refuses a result whose shape
depends on the values (Dask's mask), which the engine could not read; NumPy's
functions (``functions.py``) call it too.
"""

import numpy as np

from . import shims

__all__ = ["getitem", "setitem"]


def _known(lib, result, what):
    """The result, if the library knows its shape. Dask's shape from the values (a mask
    of its own, nonzero) is nan until computed: refused here, by name, rather than met
    later by an obscure error (the engine reads shapes as integers)."""
    parts = result if isinstance(result, tuple) else (result,)
    if any(n is None or n != n for part in parts for n in getattr(part, "shape", ())):
        raise TypeError(f"chainrule: {what} on {lib.name} arrays gives a shape that "
                        f"depends on their values, unknown until computed; chainrule "
                        f"computes nothing the user did not ask for (a NumPy mask or "
                        f"index has a known shape; or use where) (operation np.{what})")
    return result


def _index(lib, index):
    """An index, with wrapped arrays as the library's, and NumPy's arrays too, but where
    the library indexes by NumPy's (Dask: ``Library.numpy_indexes``)."""
    if type(index) is tuple:
        return sum((_index_part(lib, part) for part in index), ())
    parts = _index_part(lib, index)
    return parts[0] if len(parts) == 1 else parts


def _index_part(lib, part):
    if isinstance(part, list):
        part = np.asarray(part)
    if isinstance(part, np.integer):
        return (int(part),)
    if lib.numpy_indexes and isinstance(part, np.ndarray):
        # a NumPy mask as its positions: one integer array per axis, of a known count
        # (Dask's own count of a mask's entries is nan until computed)
        return tuple(np.nonzero(part)) if part.dtype == bool and part.ndim else (part,)
    return (lib.take(part, "indexing"),)


def _full(lib, x, index):
    """The index as every library takes it: NumPy's arrays as the library's, and a
    trailing ``...`` (array-api-strict wants every axis named); slices with a negative
    step (which torch refuses) become a flip and a positive slice."""
    parts, flipped = index if type(index) is tuple else (index,), ()
    if any(type(p) is slice and p.step is not None and p.step < 0 for p in parts):
        x, parts, flipped = shims.flipped(lib, x, parts)
    if all(isinstance(p, (int, slice, np.integer)) or p is None or p is Ellipsis
           for p in parts) and not any(p is Ellipsis for p in parts):
        parts = parts + (Ellipsis,)
    return x, _index(lib, parts), flipped


def getitem(lib, x, index):
    """``x[index]``, by the library's own indexing (one integer array on one axis: the
    standard's ``take``, which every library has)."""
    taken = shims.as_take(lib, x._value, _index(lib, index))
    if taken is not None:
        return lib.wrap(taken)
    value, index, _ = _full(lib, x._value, index)
    return lib.wrap(_known(lib, shims.indexed(lib, value, index), "getitem"))


def setitem(lib, x, index, value):
    """``x[index] = value``: written in place where the library writes in place, else
    the wrapper takes the updated copy (``array_api_extra.at``)."""
    value = lib.take(value, "setitem")
    if getattr(value, "dtype", None) is not None and value.dtype != x._value.dtype:
        value = lib.ns.astype(value, x._value.dtype)
    target, index, flipped = _full(lib, x._value, index)
    try:
        target[index] = value
    except (TypeError, ValueError, IndexError, NotImplementedError):
        target = shims.updated(lib, target, index, value)
    # (a negative step wrote into the flipped array: flipped back)
    x._value = lib.ns.flip(target, axis=flipped) if flipped else target

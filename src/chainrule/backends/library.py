"""One array library under the engine: its namespace, device and dtypes.

A ``Library`` is what a ``ForeignArray`` knows of the library its array comes from:
the Array API namespace (``array_api_compat.array_namespace``), the device its arrays
live on, and the two ways between NumPy's dtypes (which the rules compare and pass)
and the library's. It also brings values across the boundary of a transform:
``adopt`` wraps the library's arrays, ``result`` unwraps them (and makes the NumPy
constants the engine creates, a zero gradient, arrays of the library, on its device).
Nothing here turns a library's array into a NumPy array.
"""

import collections
import functools
import math
from typing import Any

import numpy as np

from .foreign import ForeignArray

__all__ = ["Library", "library_of", "mixed_libraries"]

_DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float32", "float64", "complex64", "complex128")
# Libraries whose arrays are a graph of work to do, not numbers: asking for a number
# (bool(), float()) would compute it, which only the user may ask for.
_LAZY = ("dask",)
# Libraries that index by a NumPy array (a constant of the rules: the positions of a
# diagonal, a mask) and know the result's shape from it: Dask's shape from a mask of its
# own is unknown (nan) until computed, and a one-entry index array of its own can meet
# a Dask bug (its name is the same as that of Dask's own offsets, and the shape is wrong)
_NUMPY_INDEXES = ("dask",)

_libraries: dict = {}


def library_of(x: Any) -> "Library | None":
    """The ``Library`` of an array of another library than NumPy (torch, CuPy, Dask,
    array-api-strict), or None for anything else (NumPy's arrays, numbers, lists).

    >>> library_of(np.ones(2)) is None
    True
    """
    if isinstance(x, (np.ndarray, np.generic, type)) or not _array_like(x):
        return None
    try:
        import array_api_compat
    except ImportError:  # (the extras chainrule[torch], [dask], [cupy] install it)
        if _root(x) not in ("torch", "cupy", "dask"):
            return None
        raise TypeError(f"chainrule: an array of {_root(x)} needs array-api-compat to be "
                        f"differentiated: pip install 'chainrule[{_root(x)}]'") from None
    if not array_api_compat.is_array_api_obj(x):
        return None
    namespace = array_api_compat.array_namespace(x)
    device = array_api_compat.device(x)
    key = (namespace.__name__, str(device))
    library = _libraries.get(key)
    if library is None:
        library = _libraries[key] = Library(namespace, device, type(x))
    return library


def _structure(x, items):
    """A tuple of ``items`` shaped as the tuple ``x``. A result with named fields that is
    not a ``namedtuple`` (torch's ``torch.return_types``, with no ``_fields``) becomes
    the ``namedtuple`` NumPy's call returns, of the same names: cr.jit and the pytrees
    take a tuple type without ``_fields`` for a leaf, and a traced program would keep
    such a result as a constant, the trace's numbers at every replay."""
    if hasattr(x, "_fields"):
        return type(x)(*items)
    names = getattr(type(x), "__match_args__", None)
    if names and len(names) == len(items):
        return _named(type(x).__name__, tuple(names))(*items)
    return tuple(items)


@functools.lru_cache(maxsize=None)
def _named(name, fields):
    """One ``namedtuple`` type per name and fields: a replay's result has the trace's."""
    return collections.namedtuple(name, fields)


def _array_like(x):
    return any(hasattr(x, name) for name in ("__array_namespace__", "__array_function__",
                                             "__array__", "__dlpack__"))


def _root(x):
    return type(x).__module__.split(".")[0]


def mixed_libraries(a: "Library", b: "Library", what: str) -> TypeError:
    """The error of one operation on arrays of two libraries (or two devices).

    >>> str(mixed_libraries(_Named("torch"), _Named("dask"), "add"))[:46]
    'chainrule: add mixes arrays of torch and dask;'
    """
    return TypeError(f"chainrule: {what} mixes arrays of {a.name} and {b.name}; convert "
                     f"one to the other's library (and device) first")


class _Named:
    def __init__(self, name):
        self.name = name


class Library:
    """An array library as the engine uses it: namespace, device, dtypes, and the
    conversions at the boundary of a transform."""

    def __init__(self, namespace, device, array_type):
        self.ns = namespace
        self.device = device
        root = array_type.__module__.split(".")[0]
        self.name = root if str(device) in ("cpu", "CPU_DEVICE") or "Device" in str(
            device) else f"{root} ({device})"
        self.array_type = array_type
        self.lazy = root in _LAZY
        self.numpy_indexes = root in _NUMPY_INDEXES
        self._to_numpy_dtype = {}
        for name in _DTYPE_NAMES:
            dtype = getattr(namespace, name, None)
            if dtype is not None:
                self._to_numpy_dtype[dtype] = np.dtype(name)
        self._cache = {}  # what the shims and the translation look up once per library
        self.tracing = 0  # transforms over this library's arrays running now (``keeps``)

    def __repr__(self):
        return f"<array library {self.name}>"

    # --- dtypes -------------------------------------------------------------------------
    def numpy_dtype(self, dtype):
        """The NumPy dtype the engine sees for a dtype of this library."""
        found = self._to_numpy_dtype.get(dtype)
        return found if found is not None else np.dtype(dtype)

    def dtype(self, dtype):
        """This library's dtype for a NumPy dtype (or a name, or a Python type)."""
        if dtype is None or not isinstance(dtype, (np.dtype, type, str)):
            return dtype  # (the library's own already)
        name = np.dtype(dtype).name
        found = getattr(self.ns, name, None)
        if found is None:
            raise TypeError(f"chainrule: {self.name} has no dtype {name}")
        return found

    # --- values in and out --------------------------------------------------------------
    def owns(self, x):
        return isinstance(x, self.array_type)

    def wrap(self, x):
        """A result of the namespace, with its arrays wrapped (tuples and named tuples
        of arrays too: eigh, slogdet, svd)."""
        if isinstance(x, self.array_type):
            return ForeignArray(x, self)
        if type(x) is tuple or type(x) is list:
            return type(x)(self.wrap(item) for item in x)
        if isinstance(x, tuple):  # a named tuple (NumPy's, or torch's return types)
            return _structure(x, [self.wrap(item) for item in x])
        return x

    def from_numpy(self, array):
        """A NumPy array (a constant the engine made) as an array of this library."""
        repeated = isinstance(array, np.ndarray) and [
            stride == 0 and n > 1 for stride, n in zip(array.strides, array.shape)]
        if repeated and any(repeated):
            # a broadcast (a gradient of ones the size of the data): the one copy of its
            # values, broadcast in the library, not a full array (Dask would ship it in
            # its graph)
            compact = array[tuple(slice(0, 1) if r else slice(None) for r in repeated)]
            return self.ns.broadcast_to(self.from_numpy(compact), array.shape)
        if isinstance(array, np.ndarray) and (not array.flags.writeable or any(
                stride < 0 for stride in array.strides)):
            array = array.copy()  # (torch warns of a read-only array, and may write;
            # it refuses negative strides, which np.flip's views have)
        return self.ns.asarray(array, device=self.device)

    def take(self, x, what):
        """An argument of an operation, as this library's namespace takes it: wrapped
        arrays unwrapped, NumPy arrays converted, numbers and shapes as they are."""
        kind = type(x)
        if kind is ForeignArray:
            if x._lib is not self:
                raise mixed_libraries(self, x._lib, what)
            return x._value
        if kind is float or kind is int or kind is bool or x is None:
            return x
        if kind is tuple or kind is list:
            return kind(self.take(item, what) for item in x)
        if kind is slice:
            return slice(*(self.take(v, what) for v in (x.start, x.stop, x.step)))
        if isinstance(x, np.ndarray):
            return self.from_numpy(x)
        if isinstance(x, np.generic):
            return x.item() if x.dtype.kind in "biuf" else x
        if isinstance(x, self.array_type):
            return x
        other = library_of(x) if not isinstance(x, (str, np.dtype, type)) else None
        if other is not None:
            if other is not self:
                raise mixed_libraries(self, other, what)
            return x
        return x

    def adopt(self, x):
        """``x`` as the engine computes with it: an array of this library wrapped; an
        array of another library refused; anything else as it is."""
        if type(x) is ForeignArray or isinstance(x, (np.ndarray, np.generic, float, int)):
            if type(x) is ForeignArray and x._lib is not self:
                raise mixed_libraries(self, x._lib, "a transform's inputs")
            return x
        other = library_of(x)
        if other is None:
            return x
        if other is not self:
            raise mixed_libraries(self, other, "a transform's inputs")
        return ForeignArray(x, self)

    def adopt_cotangent(self, x):
        """``adopt`` for a cotangent of a pullback over this library's arrays. One traced
        by an enclosing transform that carries NumPy's numbers (a float cotangent under
        jvp) is multiplied by this library's 1 (exactly itself): what is computed from
        it alone, a gradient that depends on the cotangent only, is then this library's,
        derivatives and all, where it would have stayed NumPy's inside the tracer."""
        inner = x  # (what chainrule.primitive.raw finds inside the boxes)
        while hasattr(type(inner), "_apply_primitive") and not inner._batched:
            inner = inner._contents()
        if inner is not x and isinstance(inner, (np.ndarray, np.generic)):
            dtype = inner.dtype if inner.dtype.kind in "fc" else np.dtype(np.float64)
            return x * self.full((), 1, dtype)
        return self.adopt(x)

    def full(self, shape, value, dtype):
        """An array of this library (wrapped) of one value, in a NumPy dtype."""
        return ForeignArray(self.ns.full(shape, value, dtype=self.dtype(dtype),
                                         device=self.device), self)

    def adopt_tree(self, tree):
        """``adopt`` on every array in nested tuples, lists and dicts (an array in a
        registered pytree node is wrapped when it meets a traced value instead)."""
        kind = type(tree)
        if kind is tuple or kind is list:
            return kind(self.adopt_tree(item) for item in tree)
        if kind is dict:
            return {key: self.adopt_tree(value) for key, value in tree.items()}
        return self.adopt(tree)

    def result(self, x):
        """A transform's result in this library: unwrapped, or (a constant the engine
        made, such as a zero gradient) converted from NumPy to this library."""
        if type(x) is ForeignArray:
            return x._value
        if isinstance(x, (np.ndarray, np.generic, float, int)) and not isinstance(x, bool):
            return self.from_numpy(np.asarray(x))
        return x

    def keeps(self, x):
        """An inner transform's result (a ForeignArray, or NumPy's zeros): wrapped while
        a transform over this library runs around it, where the function meets it with
        NumPy's constants (``np.ones(2) * torch_tensor`` is refused by both), as it meets
        its tracers; the outer transform unwraps its own results."""
        return ForeignArray(x, self) if type(x) is self.array_type else x

    def unwrapped(self, x):
        """A result outside any transform (``cr.exp(torch_tensor)``): its wrapped
        arrays unwrapped, in tuples and named tuples too."""
        if type(x) is ForeignArray:
            return x._value
        if type(x) is tuple or type(x) is list:
            return type(x)(self.unwrapped(item) for item in x)
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*(self.unwrapped(item) for item in x))
        return x

    # --- what cannot be done lazily -----------------------------------------------------
    def concrete(self, value, what):
        """A number from an array (bool(), float()), unless that would compute a lazy
        library's graph behind the user's back."""
        if self.lazy:
            raise TypeError(f"chainrule: {what} needs the value of a {self.name} array, "
                            f"which would compute it; chainrule computes nothing the user "
                            f"did not ask for (call dask.compute first, or avoid {what})")
        return value


def size_of(shape):
    """The number of entries of a shape.

    >>> size_of((2, 3))
    6
    """
    return math.prod(shape)


"""The array of another library, as the engine sees it: ``ForeignArray``.

Why a wrapper, and not a namespace looked up in every rule: the rules call NumPy's
functions (``xp.exp``, ``np.sum``, ``x.reshape``), and NumPy hands any call on an
array type that is not its own to that type (``__array_ufunc__``,
``__array_function__``). cr.jit's traced array already takes part that way, so a
wrapper registered beside it in ``chainrule.arrays.ARRAYS`` receives every call a rule
makes, and translates it into the namespace of the library it holds (torch, CuPy,
Dask, array-api-strict; ``translate.py``). The NumPy path never meets any of it: not a
lookup, not a check, not an import. The wrapper lives only between a transform's
inputs and its results (``chainrule.backends.adopt``): a user never holds one.

What a ForeignArray shows the engine is NumPy's surface: ``dtype`` is a NumPy dtype,
``shape`` a tuple of ints, methods are NumPy's (each a call of NumPy's function of the
same name, so it goes through the same translation). What it refuses: becoming a NumPy
array (``np.asarray``), which would copy a GPU's array to the host or compute a Dask
graph behind the user's back.
"""

import operator

import numpy as np

from .. import arrays as xp
from . import translate

__all__ = ["ForeignArray"]


def _boxed(x):
    """Whether x is a box (a Tensor, a tracer, a Value: ``chainrule.primitive.Box``),
    which runs an operation itself and calls back here on what it carries."""
    return hasattr(type(x), "_apply_primitive")


def _binary(op, name, arithmetic=True):
    def forward(self, other):
        if _boxed(other):  # a Tensor or tracer runs it, calling back here
            return NotImplemented
        lib = self._lib
        a, b = self._value, lib.take(other, name)
        if arithmetic:
            a, b = translate.numeric(lib, a, b, divide=name == "divide")
        return lib.wrap(op(a, b))

    def reflected(self, other):
        if _boxed(other):
            return NotImplemented
        lib = self._lib
        a, b = lib.take(other, name), self._value
        if arithmetic:
            a, b = translate.numeric(lib, a, b, divide=name == "divide")
        return lib.wrap(op(a, b))
    return forward, reflected


class ForeignArray:
    """An array of another library (``_value``) and what the engine needs of that
    library (``_lib``, a ``Library``), behaving as an ndarray in the rules.

    >>> from chainrule.backends import library_of
    >>> import array_api_strict as xps
    >>> x = library_of(xps.ones(3)).adopt(xps.ones(3))
    >>> (np.exp(x) * 2).shape, x.dtype
    ((3,), dtype('float64'))
    """

    __slots__ = ("_value", "_lib")
    __array_priority__ = 1500  # ndarray + ForeignArray: the wrapper decides

    def __init__(self, value, lib):
        self._value = value
        self._lib = lib

    def __repr__(self):
        return f"ForeignArray({self._value!r})"

    # --- what the engine reads: NumPy's view of shape and dtype ----------------------
    shape = property(lambda self: tuple(int(n) for n in self._value.shape))
    ndim = property(lambda self: len(self._value.shape))
    size = property(lambda self: int(np.prod(self.shape)))
    dtype = property(lambda self: self._lib.numpy_dtype(self._value.dtype))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    base = None  # (the engine copies NumPy's views; another library's are its own)
    is_scalar = False
    T = property(lambda self: translate.call(self._lib, np.transpose, (self,), {}))
    mT = property(lambda self: translate.call(self._lib, np.matrix_transpose, (self,), {}))
    real = property(lambda self: translate.call(self._lib, np.real, (self,), {}))
    imag = property(lambda self: translate.call(self._lib, np.imag, (self,), {}))

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # --- numbers out: only where the library has them at hand -------------------------
    def __bool__(self):
        return bool(self._lib.concrete(self._value, "a truth value (if, and, or)"))

    def __float__(self):
        return float(self._lib.concrete(self._value, "float()"))

    def __int__(self):
        return int(self._lib.concrete(self._value, "int()"))

    def __index__(self):
        return int(self._lib.concrete(self._value, "use as an index"))

    def item(self):
        """The one number of a one-element array (an eager library's only)."""
        return self._lib.concrete(self._value, ".item()").item()

    def tolist(self):
        """The numbers as nested lists (an eager library's only)."""
        return self._lib.concrete(self._value, ".tolist()").tolist()

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"chainrule: an array of {self._lib.name} is not turned into a "
                        f"NumPy array behind your back (operation np.asarray); an "
                        f"operation that needs one is not supported on {self._lib.name}")

    # --- what a rule does beside array functions (chainrule.arrays) ------------------
    def _as_array(self, dtype):
        if dtype is None or np.dtype(dtype) == self.dtype:
            return self
        return translate.call(self._lib, np.astype, (self, dtype), {})

    def _convert(self, function):
        return function(self._lib.concrete(self._value, f"{function.__name__}()"))

    def _require(self, error, *args):
        # A lazy library's check would compute its graph: it is not made (documented
        # in docs/backends.md); an eager library checks at once, as NumPy does.
        if not self._lib.lazy and not bool(self._value):
            raise error(*args)

    def _branch(self, what):
        return bool(self._lib.concrete(self._value, f"choosing a formula by {what}"))

    def _call(self, function, args):
        return translate.python_function(self._lib, function, args)

    def _owned(self, array):
        if type(array) is ForeignArray:  # (made from a value of this library already)
            return array
        return ForeignArray(self._lib.from_numpy(np.array(array)), self._lib)

    # --- NumPy hands its ufuncs and functions here -----------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(_boxed(x) for x in inputs):
            return NotImplemented
        return translate.ufunc(self._lib, ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if any(hasattr(t, "_apply_primitive") for t in types):
            return NotImplemented
        return translate.call(self._lib, func, args, kwargs)

    # --- operators: the library's own ------------------------------------------------
    __add__, __radd__ = _binary(operator.add, "add")
    __sub__, __rsub__ = _binary(operator.sub, "subtract")
    __mul__, __rmul__ = _binary(operator.mul, "multiply")
    __truediv__, __rtruediv__ = _binary(operator.truediv, "divide")
    __floordiv__, __rfloordiv__ = _binary(operator.floordiv, "floor_divide")
    __mod__, __rmod__ = _binary(operator.mod, "remainder")
    __pow__, __rpow__ = _binary(operator.pow, "power")
    __matmul__, __rmatmul__ = _binary(operator.matmul, "matmul")
    __and__, __rand__ = _binary(operator.and_, "logical_and", False)
    __or__, __ror__ = _binary(operator.or_, "logical_or", False)
    __xor__, __rxor__ = _binary(operator.xor, "logical_xor", False)
    __lt__ = _binary(operator.lt, "less")[0]
    __gt__ = _binary(operator.gt, "greater")[0]
    __le__ = _binary(operator.le, "less_equal")[0]
    __ge__ = _binary(operator.ge, "greater_equal")[0]
    __eq__ = _binary(operator.eq, "equal", False)[0]
    __ne__ = _binary(operator.ne, "not_equal", False)[0]
    __hash__ = object.__hash__

    # in place: a new array under the same wrapper (not every library writes in place)
    def __iadd__(self, other):
        return self._assign(self + other)

    def __isub__(self, other):
        return self._assign(self - other)

    def __imul__(self, other):
        return self._assign(self * other)

    def __itruediv__(self, other):
        return self._assign(self / other)

    def _assign(self, result):
        if result is NotImplemented:
            return result
        self._value = self._lib.ns.astype(result._value, self._value.dtype)
        return self

    def __neg__(self):
        return self._lib.wrap(-self._value)

    def __pos__(self):
        return self

    def __abs__(self):
        return self._lib.wrap(self._lib.ns.abs(self._value))

    def __invert__(self):
        return self._lib.wrap(~self._value)

    # --- indexing ----------------------------------------------------------------------
    def __getitem__(self, index):
        return translate.getitem(self._lib, self, index)

    def __setitem__(self, index, value):
        translate.setitem(self._lib, self, index, value)

    # --- methods: NumPy's function of the same name ------------------------------------
    def __getattr__(self, name):
        return translate.method(self, name)


xp.ARRAYS.add(ForeignArray)

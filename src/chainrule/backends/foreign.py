"""The array of another library, as the engine sees it: ``ForeignArray``.

Why a wrapper, and not a namespace looked up in every rule: the rules call NumPy's
functions (``xp.exp``, ``np.sum``, ``x.reshape``), and NumPy hands any call on an
array type that is not its own to that type (``__array_ufunc__``,
``__array_function__``). cr.jit's traced array already takes part that way, so a
wrapper registered beside it in ``chainrule.arrays.ARRAYS`` receives every call a rule
makes, and translates it into the namespace of the library it holds (torch, CuPy,
Dask, array-api-strict; ``translate.py``). The NumPy path never meets any of it: not a
lookup, not a check, not an import. What the detour through NumPy's dispatch costs the
other libraries, measured on a torch array of 1,000 numbers: ``np.exp`` 5.7 us against
4.4 us calling the translation directly (torch.exp alone: 2.9 us), ``np.concatenate``
10.3 against 7.1 us (torch.cat: 2.2 us); the translation, not the dispatch, is most of
it. A rule's ``xp`` name that went to the library's namespace itself would need a check
of its arguments' types in front of every NumPy call. The wrapper lives only between a transform's
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
from . import translate, ufuncs

__all__ = ["ForeignArray"]


def _defers_to(kind):
    """Whether an operand of type ``kind`` runs an operation on a ForeignArray itself,
    calling back here on what it carries: a box (a Tensor, a tracer, a Value:
    ``chainrule.primitive.Box``), or cr.jit's traced array (which records the call)."""
    return hasattr(kind, "_apply_primitive") or (
        kind in xp.ARRAYS and kind is not ForeignArray and kind is not np.ndarray)


def _boxed(x):
    return _defers_to(type(x))


def _binary(op, name, arithmetic=True):
    def forward(self, other):
        if _boxed(other):  # a Tensor or tracer runs it, calling back here
            return NotImplemented
        lib = self._lib
        a, b = self._value, lib.take(other, name)
        if arithmetic:
            a, b = ufuncs.numeric(lib, a, b, divide=name == "divide")
        return lib.wrap(op(a, b))

    def reflected(self, other):
        if _boxed(other):
            return NotImplemented
        lib = self._lib
        a, b = lib.take(other, name), self._value
        if arithmetic:
            a, b = ufuncs.numeric(lib, a, b, divide=name == "divide")
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

    __slots__ = ("_held", "_lib", "_view_of", "_stale")
    __array_priority__ = 1500  # ndarray + ForeignArray: the wrapper decides

    def __init__(self, value, lib):
        self._held = value
        self._lib = lib
        self._view_of = None  # (operation, the array) where NumPy's result is a view
        self._stale = None    # a write NumPy would have carried here, and was not

    @property
    def _value(self):
        """The library's array (refused where a write into a view left it behind)."""
        if self._stale is not None:
            _refuse_stale(self)
        return self._held

    @_value.setter
    def _value(self, value):
        self._held = value

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
    T = property(lambda self: _view(translate.call(self._lib, np.transpose, (self,), {}),
                                    "x.T", self))
    mT = property(lambda self: _view(translate.call(self._lib, np.matrix_transpose,
                                                    (self,), {}), "x.mT", self))
    real = property(lambda self: _view(translate.call(self._lib, np.real, (self,), {}),
                                       "x.real", self))
    imag = property(lambda self: _view(translate.call(self._lib, np.imag, (self,), {}),
                                       "x.imag", self))

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
        out = kwargs.get("out")
        _written(inputs[0] if method == "at" else out[0] if type(out) is tuple else out,
                 f"{ufunc.__name__}.{method}")
        return translate.ufunc(self._lib, ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if any(_defers_to(t) for t in types):
            return NotImplemented
        if func in _WRITES_FIRST and args:
            _written(args[0], f"np.{func.__name__}")
        result = translate.call(self._lib, func, args, kwargs)
        return _view(result, f"np.{func.__name__}", args[0]) if func in _VIEWS else result

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
        _written(self, "an in-place operator")
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
        result = translate.getitem(self._lib, self, index)
        return _view(result, _INDEXED, self) if _basic(index) else result

    def __setitem__(self, index, value):
        stale = self._stale
        if stale is not None and stale[2] is value:
            self._stale = None  # x[i] += v: Python writes the updated view back here
        _written(self, "setitem")
        translate.setitem(self._lib, self, index, value)

    # --- methods: NumPy's function of the same name ------------------------------------
    def __getattr__(self, name):
        method = translate.method(self, name)
        if name not in _VIEW_METHODS:
            return method
        return lambda *args, **kwargs: _view(method(*args, **kwargs), f"x.{name}()", self)


# ---------------------------------------------------------------------------------------
# Views: where NumPy writes through a result into the array it was made from
# ---------------------------------------------------------------------------------------
# A rule may write into ``x.reshape(-1)`` to change x, as NumPy's views allow. Another
# library may have copied (torch's reshape of a non-contiguous tensor, every Dask
# operation), and x would keep its old values without a word. So a result NumPy would
# have made a view remembers the array it views; a write into it marks that array (and
# what it views in turn) stale, and reading a stale array raises. A write into a view
# whose array is never read again (a fresh array, reshaped and then updated) is fine.

_VIEWS = frozenset(f for f in (
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze,
    np.expand_dims, np.diagonal, np.broadcast_to, np.real, np.imag, np.atleast_1d,
    np.atleast_2d, np.atleast_3d, getattr(np, "matrix_transpose", None),
    getattr(np, "permute_dims", None)) if f is not None)
_INDEXED = "basic indexing"
_VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "swapaxes", "squeeze",
                           "diagonal"})
# NumPy's functions that write into their first argument.
_WRITES_FIRST = frozenset({np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                           np.put_along_axis})


def _view(result, operation, of):
    if type(result) is ForeignArray and type(of) is ForeignArray and result is not of:
        result._view_of = (operation, of)
    return result


def _basic(index):
    """Whether NumPy's result of ``x[index]`` is a view (integers, slices, None, ...)."""
    parts = index if type(index) is tuple else (index,)
    return all(type(p) in (int, slice) or p is None or p is Ellipsis
               or isinstance(p, np.integer) for p in parts)


def _written(target, operation):
    """A write into ``target``: the arrays it is a view of are stale from now on (until
    ``target`` itself is written back into one: ``x[i] += v``)."""
    if type(target) is not ForeignArray:
        return
    view = target
    while view._view_of is not None:
        made_by, view = view._view_of
        view._stale = (made_by, operation, target)


def _refuse_stale(array):
    (made_by, operation, _), name = array._stale, array._lib.name
    raise TypeError(f"chainrule: an array of {name} was written through the result of "
                    f"{made_by} ({operation}) and then read: NumPy would have written "
                    f"through that view into it, {name} may have copied, so its values "
                    f"are not known; write into a copy (.copy()) and use that instead")


xp.ARRAYS.add(ForeignArray)

"""cr.jit's traced array: what a traced function holds where its arrays were.

``cr.jit`` (``chainrule/jit/jitted.py``) runs a function once with *traced arrays* where its
arrays were. A ``Traced`` holds the real array, so that first run computes real
numbers, and a slot number. It answers at once what is known while tracing (shape,
dtype, length), and hands every NumPy call that touches it to its recorder
(``recording.py``): NumPy itself hands ufuncs to ``__array_ufunc__`` and its functions to
``__array_function__``; operators, methods and indexing are handed on here. The rules,
the backward pass and the optimizers run on traced arrays as on NumPy's. What a rule does
beside NumPy's functions goes through ``chainrule.arrays``, which hands it to the traced
array: a conversion (``as_array``: it stays traced), a check of data (``require``: a
call of the program, so each run checks its own), a formula chosen by data (``branch``:
each run checks the choice still holds), a Python function NumPy cannot hand on
(``np.vectorize``), a new array to write traced values into. The functions those
become in the program (``_require``, ``_same_branch``, ``_owned_like``) are here too.

What cannot be replayed raises here (``errors.py``): a traced value turned into a Python
bool, int or float (an ``if`` on data), or into a plain NumPy array (``np.asarray``).

The traced array is a file of its own: this is the array's surface (NumPy's protocols,
the operators, the tables of which functions write or answer from shapes alone); the
recorder, which keeps the program's slots and calls, is ``recording.py``.
"""

import operator

import numpy as np

from .. import arrays as xp
from ..origin import user_line
from ..scalar.value import Value
from ..tensor_data import foreign
from .errors import TracingError, values_refused
from .ops import Attribute, Method
from .randomness import drawn_by_a_call

__all__ = ["Traced"]


def _same_branch(condition, taken, what):
    if bool(condition) != taken:
        raise TracingError(f"cr.jit: this program was traced where {what} was {taken}, "
                           f"and holds only the formula for that case; in this call it "
                           f"is {not taken}. Call the function without cr.jit for such "
                           f"inputs")


def _owned_like(like, array):
    """A copy of the NumPy array ``array`` in the library of ``like`` (at each run)."""
    return like._owned(array)


def _require(ok, error, *args):
    if not ok:
        raise error(*args)


def _binary(op):
    def forward(self, other):
        if _defers(other):
            return NotImplemented
        return self._trace.record(op, (self, other), {})

    def reflected(self, other):
        if _defers(other):
            return NotImplemented
        return self._trace.record(op, (other, self), {})
    return forward, reflected


def _defers(other):
    # a Tensor or a transform's tracer carries the traced array inside: it runs the
    # operation (and records its graph), calling back here on the array
    if getattr(other, "_contents", None) is None:
        return False
    if isinstance(other, Value):  # (a Value carries a number, never a traced array)
        raise values_refused()
    return True


def _inplace(op, plain):
    def method(self, other):
        if _defers(other):
            return NotImplemented
        if type(self._value) is np.ndarray:  # written in place: the same array after
            return self._trace.record(op, (self, other), {}, writes=(self,))
        return self._trace.record(plain, (self, other), {})  # numbers: a new value
    return method


class Traced:
    """An array (or number) inside a trace: the real value, and the slot the program
    keeps it in. It takes NumPy's functions, operators, methods and indexing, and
    records each; it refuses to become a plain number or a plain array."""

    __slots__ = ("_value", "_slot", "_trace")
    __array_priority__ = 2000

    def __init__(self, value, slot, trace):
        self._value = value
        self._slot = slot
        self._trace = trace

    def __repr__(self):
        return f"traced(t{self._slot}, shape={self.shape}, dtype={self.dtype})"

    # --- what is known while tracing: shapes and dtypes ------------------------------
    shape = property(lambda self: np.shape(self._value))
    ndim = property(lambda self: np.ndim(self._value))
    size = property(lambda self: np.size(self._value))
    dtype = property(lambda self: np.result_type(self._value))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    # whether it is a view (the engine copies views it keeps); never the array itself
    base = property(lambda self: None if getattr(self._value, "base", None) is None
                    else _A_VIEW)
    flags = property(lambda self: _READ_ONLY)

    def __len__(self):
        return len(self._value)

    @property
    def is_scalar(self):
        """Whether it stands for a number (a float argument, a NumPy scalar), not an
        array (NumPy's, or another library's: ``chainrule.backends.ForeignArray``)."""
        value = self._value
        return type(value) is not np.ndarray and not foreign(value)

    @property
    def library(self):
        """The ``chainrule.backends.Library`` of the array it holds, if another
        library's (torch's, Dask's), else None."""
        value = self._value
        return value._lib if foreign(value) else None

    def _convert(self, function):
        if function is float and foreign(self._value):
            return self  # (another library's 0-d array stands for a float, as eagerly)
        return self._trace.record(function, (self,), {})

    def _as_array(self, dtype):
        kwargs = {} if dtype is None else {"dtype": dtype}
        # (another library's array converts in its library, never to NumPy's)
        convert = xp.as_array if foreign(self._value) else np.asarray
        return self._trace.record(convert, (self,), kwargs)

    # --- what a rule does beside array functions (chainrule.arrays) -------------------
    def _require(self, error, *args):
        """A check of data becomes a call of the program: each run checks its own (on
        a lazy library's array, as eagerly, none: it would compute the graph)."""
        value = self._value
        if foreign(value) and value._lib.lazy:
            return
        self._trace.record(_require, (self, error) + args, {}, pure=False)

    def _branch(self, what):
        """The choice this trace sees, and a check in the program that each run sees
        the same (it raises otherwise, naming ``what``: the program holds the other
        formula only)."""
        taken = bool(self._value)
        self._trace.record(_same_branch, (self, taken, what), {}, pure=False)
        return taken

    def _call(self, function, args):
        """A Python function NumPy cannot hand on (np.vectorize): one call of the
        program."""
        if any(foreign(a._value) for a in args if type(a) is Traced):
            # on another library's arrays: its own version of the function, at each run
            return self._trace.record(xp.call, (function,) + tuple(args), {})
        with drawn_by_a_call(self._trace.drawn):
            return self._trace.record(function, args, {})

    def _owned(self, array):
        """A new array as a value of the program (its contents a constant, copied at each
        run), so that traced values can be written into it; in the library of this
        value where it is another library's (written into, NumPy's would refuse it)."""
        if foreign(self._value):
            return self._trace.record(_owned_like, (self, array.copy()), {}, force=True)
        return self._trace.record(np.array, (array.copy(),), {"copy": True}, force=True)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # --- what is not: a value that would leave the program ---------------------------
    def _refuse(self, what):
        raise TracingError(
            f"cr.jit: {what} of a traced value (shape {self.shape}) at {user_line()}: "
            f"its value is not known while tracing, and a replay could not change it. Use "
            f"cr.where (or np.where) for a choice that depends on data, or pass the value "
            f"as a static argument (cr.jit(f, static_argnums=...))")

    def __bool__(self): self._refuse("a truth value (if, and, or, while)")
    def __float__(self): self._refuse("float()")
    def __int__(self): self._refuse("int()")
    def __index__(self): self._refuse("use as an index or size")
    def __complex__(self): self._refuse("complex()")
    def item(self, *args): self._refuse(".item()")
    def tolist(self): self._refuse(".tolist()")
    def __array__(self, dtype=None, copy=None):
        self._refuse("a conversion to a NumPy array (np.asarray, np.array, or writing it "
                     "into an array)")

    # --- NumPy hands its ufuncs and functions here -----------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(_defers(x) for x in inputs):
            return NotImplemented
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        out = kwargs.get("out")
        writes = ()
        if out is not None:
            writes = out if isinstance(out, tuple) else (out,)
        elif method == "at":
            writes = (inputs[0],)
        return self._trace.record(fn, inputs, kwargs, writes=writes)

    def __array_function__(self, func, types, args, kwargs):
        if any(hasattr(t, "_contents") for t in types):
            if any(issubclass(t, Value) for t in types):
                raise values_refused()
            return NotImplemented
        if func in _STATIC:
            return func(*_values(args), **_values(kwargs))
        writes = ()
        if func in _WRITES_FIRST:
            writes = (args[0],)
        elif "out" in kwargs and kwargs["out"] is not None:
            writes = (kwargs["out"],)
        return self._trace.record(func, args, kwargs, writes=writes)

    # --- operators --------------------------------------------------------------------
    __add__, __radd__ = _binary(operator.add)
    __sub__, __rsub__ = _binary(operator.sub)
    __mul__, __rmul__ = _binary(operator.mul)
    __truediv__, __rtruediv__ = _binary(operator.truediv)
    __floordiv__, __rfloordiv__ = _binary(operator.floordiv)
    __mod__, __rmod__ = _binary(operator.mod)
    __pow__, __rpow__ = _binary(operator.pow)
    __matmul__, __rmatmul__ = _binary(operator.matmul)
    __and__, __rand__ = _binary(operator.and_)
    __or__, __ror__ = _binary(operator.or_)
    __xor__, __rxor__ = _binary(operator.xor)
    __lt__, __gt__ = _binary(operator.lt)[0], _binary(operator.gt)[0]
    __le__, __ge__ = _binary(operator.le)[0], _binary(operator.ge)[0]
    __eq__, __ne__ = _binary(operator.eq)[0], _binary(operator.ne)[0]
    __hash__ = object.__hash__
    __iadd__ = _inplace(operator.iadd, operator.add)
    __isub__ = _inplace(operator.isub, operator.sub)
    __imul__ = _inplace(operator.imul, operator.mul)
    __itruediv__ = _inplace(operator.itruediv, operator.truediv)
    __ipow__ = _inplace(operator.ipow, operator.pow)
    __imatmul__ = _inplace(operator.imatmul, operator.matmul)

    def __neg__(self): return self._trace.record(operator.neg, (self,), {})
    def __pos__(self): return self._trace.record(operator.pos, (self,), {})
    def __abs__(self): return self._trace.record(operator.abs, (self,), {})
    def __invert__(self): return self._trace.record(operator.invert, (self,), {})

    def __getitem__(self, index):
        return self._trace.record(operator.getitem, (self, index), {})

    def __setitem__(self, index, value):
        self._trace.record(operator.setitem, (self, index, value), {}, writes=(self,))

    # --- methods: each ndarray method, recorded as a method call ----------------------
    T = property(lambda self: self._trace.record(Attribute("T"), (self,), {}))
    mT = property(lambda self: self._trace.record(Attribute("mT"), (self,), {}))
    real = property(lambda self: self._trace.record(Attribute("real"), (self,), {}))
    imag = property(lambda self: self._trace.record(Attribute("imag"), (self,), {}))

    def __getattr__(self, name):
        if not callable(getattr(np.ndarray, name, None)) or name.startswith("__"):
            raise AttributeError(f"traced array has no attribute {name!r}")
        method = Method(name)
        writes = name in _METHODS_WRITING

        def call(*args, **kwargs):
            return self._trace.record(method, (self,) + args, kwargs,
                                      writes=(self,) if writes else ())
        return call


# NumPy's method that write into the array itself.
_METHODS_WRITING = frozenset({"fill", "sort", "partition", "put", "itemset", "resize",
                              "setfield", "byteswap"})
# NumPy's functions that write into their first argument.
_WRITES_FIRST = frozenset({np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                           np.put_along_axis})
# Functions of shapes and dtypes only: answered at once, the answer a constant.
_STATIC = frozenset({np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj,
                     np.isrealobj, np.may_share_memory, np.shares_memory, np.ones_like,
                     np.zeros_like, np.min_scalar_type, np.can_cast})


_A_VIEW = object()


class _ReadOnly:
    writeable = False


_READ_ONLY = _ReadOnly()


def _values(template):
    """A structure with each Traced replaced by its value."""
    kind = type(template)
    if kind is Traced:
        return template._value
    if kind is tuple or kind is list:
        return kind(_values(x) for x in template)
    if kind is dict:
        return {k: _values(v) for k, v in template.items()}
    if kind is slice:
        return slice(_values(template.start), _values(template.stop),
                     _values(template.step))
    return template


xp.ARRAYS.add(Traced)

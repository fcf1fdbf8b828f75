"""cr.jit's recording: the NumPy calls of a function, recorded as data.

``cr.jit`` (``chainrule/jit/jitted.py``) runs a function once with *traced arrays* where its
arrays were. A ``Traced`` holds the real array, so that first run computes real
numbers, and a slot number. Every NumPy call that touches a traced array is recorded
as an ``Op`` (a function, its arguments with ``Slot``s where traced arrays were, the
slots it writes): NumPy itself hands ufuncs to ``__array_ufunc__`` and its functions to
``__array_function__``; operators, methods and indexing are recorded here. The rules,
the backward pass and the optimizers run on traced arrays as on NumPy's. What a rule does
beside NumPy's functions goes through ``chainrule.arrays``, which hands it to the traced
array: a conversion (``as_array``: it stays traced), a check of data (``require``: a
call of the program, so each run checks its own), a formula chosen by data (``branch``:
each run checks the choice still holds), a random draw (``draw``: each run draws anew).
A ``Recording`` is the recorder ``chainrule.arrays`` knows while cr.jit traces.

``chainrule/jit/program.py`` turns the list of calls into the program a replay runs.

What cannot be replayed raises while tracing: a traced value turned into a Python
bool, int or float (an ``if`` on data), or into a plain NumPy array (``np.asarray``).
"""

import itertools
import operator

import numpy as np

from .. import arrays as xp
from ..origin import user_line
from ..scalar.value import Value
from ..tensor_data import foreign
from .randomness import RUNS_A_CALL, drawn_by_a_call

__all__ = ["Traced", "Recording", "Op", "Effect", "Slot", "TracingError",
           "ValueTracingError", "values_refused", "pure"]


class TracingError(TypeError):
    """A traced function did what a program cannot replay (see the message)."""


class ValueTracingError(TracingError):
    """A Value met while tracing: its operations are Python's, one number at a time,
    and no NumPy call records them."""


def values_refused():
    return ValueTracingError(
        "cr.jit and cr.make_program cannot trace a Value: Values are the scalar engine, "
        "whose operations run in Python one number at a time, not as NumPy calls a "
        "program can hold; use Tensors (cr.tensor, nn.Linear) instead")


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


# ---------------------------------------------------------------------------------------
# The traced array
# ---------------------------------------------------------------------------------------

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

class Method:
    """``x.name(*args)``: an ndarray method as a function of the array."""

    def __init__(self, name):
        self.name = name
        self.__name__ = name

    def __call__(self, obj, *args, **kwargs):
        return getattr(obj, self.name)(*args, **kwargs)


class Attribute(Method):
    """``x.name``: an attribute that is computed (``T``, ``real``)."""

    def __call__(self, obj):
        return getattr(obj, self.name)


# ---------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------

class Slot:
    """Where a traced value sits in a program's arguments: slot number ``n``."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return f"t{self.n}"


class Op:
    """One call of the program, as a line of Python: ``outs = fn(*args, **kwargs)``.

    ``args`` and ``kwargs`` hold ``Slot``s where traced values were; ``outs`` is the
    slot of the result (None where it is not data), or a tuple of slots for a result
    that is a tuple (``t4, t5 = np.linalg.eigh(t3)``); ``writes``: the slots the call
    changes in place. A call with an effect beyond them (a check that raises, a random
    draw) has an ``Effect`` as its ``fn``. What the passes need besides (whether a
    result is a new array, which part of the program a call belongs to) they find in
    the program's values and in the recording's marks."""

    __slots__ = ("fn", "args", "kwargs", "outs", "writes")

    def __init__(self, fn, args, kwargs, outs, writes):
        self.fn, self.args, self.kwargs, self.outs, self.writes = \
            fn, args, kwargs, outs, writes

    def results(self):
        """The slots the call makes, in order."""
        outs = self.outs
        if type(outs) is tuple:
            return [o for o in outs if o is not None]
        return [] if outs is None else [outs]

    def slots_read(self):
        found = []
        _collect_slots(self.args, found)
        _collect_slots(self.kwargs, found)
        return found


class Effect:
    """A function whose call does more than make its result (``_require`` checks data
    and raises, a generator's method draws): kept, in order, by every pass."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


def pure(op):
    return type(op.fn) is not Effect


def _collect_slots(template, found):
    if type(template) is Slot:
        found.append(template.n)
    elif type(template) in (tuple, list):
        for item in template:
            _collect_slots(item, found)
    elif type(template) is dict:
        for item in template.values():
            _collect_slots(item, found)
    elif type(template) is slice:
        _collect_slots((template.start, template.stop, template.step), found)


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


# Operators on arrays that are NumPy ufuncs, and can write into a kept buffer.
UFUNC_OF = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
             operator.truediv: np.true_divide, operator.matmul: np.matmul,
             operator.neg: np.negative, operator.lt: np.less, operator.gt: np.greater,
             operator.le: np.less_equal, operator.ge: np.greater_equal,
             operator.eq: np.equal, operator.ne: np.not_equal}


class _Deeper(Exception):
    """A call reads a value of a loop's body nested in the recording asked to record
    it: the body records the call."""

    def __init__(self, trace):
        self.trace = trace


class Recording:
    """A recording in progress: the program's inputs and calls so far.

    A recording may be the *body* of a loop of another (``child``): a traced value of
    an enclosing recording that the body reads becomes an input of the body
    (``captured``), and a call on values of both is recorded by the body."""

    def __init__(self, section="forward", parent=None):
        self.parent = parent
        self.captured = []        # the enclosing recording's values the body reads
        self._captures = {}       # id(enclosing value) -> (it, the body's input for it)
        self.ops = []
        self.inputs = []          # slot numbers of the program's arguments, in order
        self.values = {}          # slot -> the value it had while tracing
        self.marks = {0: section}  # op index -> the part that starts there
        self.section = section    # the part the calls now belong to
        self.alive = True
        self.adopt = None         # adopt(obj): cr.jit makes a tensor's arrays inputs
        self.drawn = set()        # ids of the generators draw() drew from
        self._slots = itertools.count()

    def child(self):
        """A recording of a loop's body, nested in this one (``chainrule/jit/loops.py``):
        it adopts state and notes draws as this one does."""
        body = type(self)("forward", parent=self)
        body.adopt, body.drawn = self.adopt, self.drawn
        return body

    def encloses(self, other):
        """Whether ``other`` is a recording nested (at any depth) in this one."""
        other = other.parent
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False

    def capture(self, traced):
        """The body's input that stands for ``traced``, a value of an enclosing
        recording (made an input the first time the body reads it)."""
        if self.parent is None:
            raise TracingError("cr.jit: a value traced by another cr.jit call was "
                               "used here; pass it as an argument instead")
        found = self._captures.get(id(traced))
        if found is None:
            outer = traced if traced._trace is self.parent else self.parent.capture(traced)
            found = self._captures[id(traced)] = (traced, self.input(outer._value))
            self.captured.append(outer)
        return found[1]

    def input(self, value):
        """A new argument of the program, holding ``value`` while tracing."""
        traced = self._new(value)
        self.inputs.append(traced._slot)
        return traced

    def draw(self, sample, args, kwargs):
        """A random draw, recorded as a call of the program, so that a replay draws new
        numbers from the same generator, as the eager code does."""
        self.drawn.add(id(getattr(sample, "__self__", None)))
        return self.record(sample, args, kwargs, pure=False, force=True)

    def touch(self, obj):
        """Adopt ``obj`` (a tensor, a module, an optimizer) before chainrule changes it
        outside any NumPy call: the program's inputs are what the state was when the
        function was called."""
        if self.adopt is not None:
            self.adopt(obj)

    def mark(self, section, switch=False):
        """Name the part of the program that the calls from now on belong to: "forward",
        "backward" (a backward pass: ``Tensor.backward``, the transforms'), "update
        (SGD)" (an optimizer's step). Returns the name it replaces, which the code that
        marked a part gives back here when the part ends (a backward pass inside
        ``cr.grad`` inside a ``no_grad`` block).

        ``switch``: the grad mode was switched ("no_grad" for ``no_grad()``, "forward"
        for ``enable_grad()`` inside it). That names a part of the computation only
        where no other name does: inside an optimizer's update (which runs under
        no_grad) or a backward pass, the part keeps its name."""
        previous = self.section
        if switch and previous not in ("forward", "no_grad"):
            return previous
        self.section = section
        self.marks[len(self.ops)] = section
        return previous

    def _new(self, value):
        slot = next(self._slots)
        self.values[slot] = value
        return Traced(value, slot, self)

    def record(self, fn, args, kwargs, writes=(), pure=True, force=False):
        """Call ``fn`` on the values, record the call, and return its result with
        traced values for arrays and numbers (the same Traced where the call gave back
        an array it was given, as ``out=`` and ``+=`` do)."""
        if not self.alive:
            raise TracingError(
                "cr.jit: a traced value was used after its trace ended: it escaped the "
                "traced function (kept in a global, or in an object the function does not "
                "take as an argument or read through a Tensor)")
        given = {}
        try:
            written = [self._written_slot(w, given) for w in writes]
            targs = self._template(args, given)
            tkwargs = self._template(kwargs, given)
        except _Deeper as deeper:  # a loop's body reads this value: the body records
            return deeper.trace.record(fn, args, kwargs, writes, pure, force)
        if not given and not force:
            return fn(*args, **kwargs)
        result = fn(*_values(args), **_values(kwargs))
        outs, wrapped = self._wrap(result, given)
        self.ops.append(Op(fn if pure else Effect(fn), targs, tkwargs, outs,
                           tuple(written)))
        return wrapped

    def _written_slot(self, target, given):
        if type(target) is Traced:
            return self._template(target, given).n
        # A plain array would be a constant of the program that each run changes (and
        # the plain results NumPy makes from it would not be recorded): refused.
        shape = getattr(target, "shape", "?")
        raise TracingError(
            f"cr.jit: a traced value is written into a NumPy array made outside the trace "
            f"(shape {shape}) at {user_line()}; make the array from traced values "
            f"(np.zeros_like(x), x.copy()) or build the result with np.where")

    def lookup(self, x):
        """x if it is a value of this program, else None."""
        if type(x) is Traced and x._trace is self:
            return x
        return None

    def _template(self, x, given):
        kind = type(x)
        if kind is Traced:
            if x._trace is not self:
                if self.encloses(x._trace):
                    raise _Deeper(x._trace)
                x = self.capture(x)  # (raises unless x is an enclosing recording's)
            given[id(x)] = x
            return Slot(x._slot)
        if kind is tuple or kind is list:
            return kind(self._template(item, given) for item in x)
        if kind is dict:
            return {k: self._template(v, given) for k, v in x.items()}
        if kind is slice:
            return slice(*(self._template(v, given)
                           for v in (x.start, x.stop, x.step)))
        return x

    def _wrap(self, result, given):
        """(output slots, the result with traced values) of a call's result."""
        if type(result) is tuple or type(result) is list or (
                isinstance(result, tuple) and hasattr(result, "_fields")):
            outs, items = [], []
            for item in result:
                out, wrapped = self._wrap_one(item, given)
                outs.append(out)
                items.append(wrapped)
            if hasattr(result, "_fields"):  # a named tuple (eigh, svd, slogdet)
                return tuple(outs), type(result)(*items)
            return tuple(outs), type(result)(items)
        return self._wrap_one(result, given)

    def _wrap_one(self, value, given):
        for traced in given.values():  # the call gave back an array it was given
            if traced._value is value and (type(value) is np.ndarray or foreign(value)):
                return None, traced
        if isinstance(value, (np.ndarray, np.generic, float, int, complex)) and \
                not isinstance(value, bool):
            traced = self._new(value)
            return traced._slot, traced
        if isinstance(value, bool) or foreign(value):
            # a Python truth value from data (np.allclose), or an array of another
            # library (a program over torch's or Dask's arrays)
            traced = self._new(value)
            return traced._slot, traced
        return None, value  # None, a dtype, a shape: not data

    def end(self):
        self.alive = False


xp.ARRAYS.add(Traced)
RUNS_A_CALL.add(Recording.record.__code__)

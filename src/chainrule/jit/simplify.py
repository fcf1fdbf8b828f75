"""Rewrites of a recording's calls that keep every number, for fewer and cheaper calls.

On small arrays a replay's time is the cost of calling NumPy (about a microsecond a call,
whatever the call computes), so a call saved is time saved. Each rewrite here gives
the same numbers to the last bit, for the reason its docstring states:

* ``times_one``: ``x * 1`` (the gradient of a sum seeds with ones) is ``x``;
* ``same_call``: a call made twice on the same operands is made once;
* ``size_one_broadcast``: a size-one array reshaped or broadcast to a shape (or a NumPy
  scalar made an array), read only by elementwise calls that broadcast it to that shape
  anyway, is read as it was;
* ``own_shape``: a reshape of an array to its own shape is the array, for a reader;
* ``broadcast_for_arithmetic``: ``np.broadcast_to(x, shape)`` read only by arithmetic
  ufuncs (add, subtract, multiply, divide) that broadcast x to that shape anyway, is x;
* ``weak_scalar``: a Python number beside an array is converted to the array's dtype by
  NumPy at every call; a 0-d array of that dtype, made once, is the same number;
* ``scalar_constants``: a NumPy scalar constant of a ufunc call is converted to a 0-d
  array at every call; the 0-d array, made once, is what the ufunc reads;
* ``plain_reduce``: ``np.sum(x, axis=a)`` of an ndarray is ``np.add.reduce(x, a)``, the
  call ``np.sum`` makes after reading its arguments (a few microseconds);
* ``as_method``: ``np.reshape(x, s)`` and ``np.transpose(x, axes)`` of an ndarray are
  ``x.reshape(s)`` and ``x.transpose(axes)``, which they call.

``same_call`` takes an operator on an ndarray for the ufunc it calls (``-x`` is
``np.negative(x)``) and a small constant array for its bytes (two ``eye(n)`` seeds made
apart are one).

The first five replace slots (``simplify``, before the passes); the last four are how
the code generator writes a call (``cheaper``), while the listing shows the call as the
function made it, for its reader. ``broadcasts.py`` holds one more, which adds calls
where they save time: an operand that small arithmetic broadcasts, copied out once.

A rewrite replaces one slot by another only where no call writes into either of them
or into memory they share (``writes.written_memory``; a call that reads such a slot is
left as it is too: its operands' numbers change from call to call), where the replaced
slot is not an input or an output of the program, and where each view of it a
call that read it made is a view of the new slot too (``passes.views`` finds views from
the traced values, which are the old slot's).
"""

import operator

import numpy as np

from . import writes
from .ops import UFUNC_OF, Attribute, Method, Op, Slot, pure
from .passes import elementwise, ufunc_of

__all__ = ["simplify", "cheaper"]


def simplify(ops, values, protected):
    """The calls ``ops`` rewritten (a new list, the same length: a call whose result
    is no longer read is left for ``passes.live_calls`` to drop). ``values``: the
    traced value of each slot; ``protected``: slots that keep their own array (the
    program's inputs and outputs, inputs an output replaces)."""
    written = writes.written_memory(ops, values)
    if written is None:
        return ops
    # a replaced slot can make another one replaceable (a broadcast of a reshape):
    # rounds until none is found
    for _ in range(_ROUNDS):
        ops, found = _one_round(ops, values, protected, written)
        if not found:
            break
    return ops


_ROUNDS = 4


def _one_round(ops, values, protected, written):
    """(the calls with the slots found replaceable replaced, whether any was found).

    A slot is replaced only by one made before it, so the readers found before the
    round are those of every slot the round looks at."""
    live = _live(ops, protected)
    readers = {}
    for i in live:
        for n in ops[i].slots_read():
            readers.setdefault(n, []).append(ops[i])
    ops, alias, seen = list(ops), {}, {}
    for i in sorted(live):
        op = ops[i] = _renamed(ops[i], alias)
        out = op.outs
        if type(out) is not int or out in protected or not pure(op) or op.writes or \
                out in written:
            continue
        if written and any(n in written for n in op.slots_read()):
            continue  # (a call on numbers that change is not the same call later)
        same = times_one(op, values)
        if same is None:
            same = size_one_broadcast(op, values, readers)
        if same is None:
            same = own_shape(op, values)
        if same is None:
            same = broadcast_for_arithmetic(op, values, readers)
        if same is None:
            same = same_call(op, seen, values)
        if same is not None and same not in written and readers.get(out) and \
                _views_kept(out, same, readers, values):
            alias[out] = same
    return ops, bool(alias)


# ---------------------------------------------------------------------------------------
# A call whose result is another slot's numbers
# ---------------------------------------------------------------------------------------

def times_one(op, values):
    """``x * 1`` and ``x / 1`` are ``x`` for every real number (-0, inf and NaN
    included), where the result has x's shape and dtype. (Not for complex numbers:
    (inf + 0j) * (1 + 0j) has a NaN.)"""
    fn = ufunc_of(op)
    if fn not in (np.multiply, np.true_divide) or len(op.args) != 2 or op.kwargs:
        return None
    a, b = op.args
    pairs = ((a, b), (b, a)) if fn is np.multiply else ((a, b),)
    for x, one in pairs:
        if type(x) is Slot and type(one) is not Slot and _all_ones(one) and \
                _same_kind(values[x.n], values[op.outs]) and \
                values[op.outs].dtype.kind in "fiu":
            return x.n
    return None


def size_one_broadcast(op, values, readers):
    """``reshape``, ``broadcast_to`` or ``asarray`` of a size-one array (or a NumPy
    scalar): every entry is its one number, so an elementwise call that reads the
    result reads the same numbers from the array itself, as long as broadcasting
    still makes the call's own shape (a ufunc takes a NumPy scalar as a 0-d array)."""
    if op.fn not in _SHAPE_ONLY or not op.args or type(op.args[0]) is not Slot:
        return None
    source = op.args[0].n
    before, after = values[source], values[op.outs]
    if not isinstance(before, (np.ndarray, np.generic)) or before.size != 1 or \
            not isinstance(after, np.ndarray) or before.dtype != after.dtype:
        return None
    for reader in readers.get(op.outs, ()):
        if not (elementwise(reader) and reader.kwargs == {} and
                _shape_kept(reader, op.outs, source, values)):
            return None
    return source


_SHAPE_ONLY = (np.reshape, np.broadcast_to, np.asarray, np.asanyarray)


def own_shape(op, values):
    """``np.reshape(x, s)`` or ``x.reshape(s)`` where ``s`` is x's own shape is a view
    of x's numbers in x's order: x itself, for a reader."""
    if op.fn is np.reshape and len(op.args) == 2 and not op.kwargs:
        x, shape = op.args
    elif type(op.fn) is Method and op.fn.name == "reshape" and len(op.args) == 2 \
            and not op.kwargs:
        x, shape = op.args
    else:
        return None
    if type(x) is not Slot or type(values[x.n]) is not np.ndarray or \
            type(shape) not in (tuple, int):
        return None
    shape = (shape,) if type(shape) is int else shape
    if not all(type(d) is int for d in shape) or shape != values[x.n].shape or \
            type(values[op.outs]) is not np.ndarray:
        return None
    return x.n


# ufuncs whose every entry is one correctly rounded operation of IEEE arithmetic: the
# same number whatever loop NumPy picks (contiguous, strided, broadcast, SIMD or not)
ARITHMETIC = (np.add, np.subtract, np.multiply, np.true_divide, np.negative)


def broadcast_for_arithmetic(op, values, readers):
    """``np.broadcast_to(x, shape)`` read only by calls of ``ARITHMETIC`` ufuncs that
    broadcast x to the result's shape anyway: each entry of such a call is the same
    operation on the same two numbers, so reading x gives the same numbers. (Not for
    other ufuncs: NumPy's sin or exp may take a SIMD loop for one memory layout and
    another loop for the other, which can differ in the last bit.)"""
    if op.fn is not np.broadcast_to or not op.args or type(op.args[0]) is not Slot:
        return None
    source = op.args[0].n
    before, after = values[source], values[op.outs]
    if type(before) is not np.ndarray or type(after) is not np.ndarray or \
            before.dtype != after.dtype:
        return None
    for reader in readers.get(op.outs, ()):
        if not (ufunc_of(reader) in ARITHMETIC and not reader.kwargs and
                _shape_kept(reader, op.outs, source, values)):
            return None
    return source


def same_call(op, seen, values=None):
    """A call of NumPy (or an operator, or an ndarray's method) on the same slots and
    the same constants as an earlier one gives the same numbers: the earlier one's.
    An operator on an ndarray is the ufunc it calls (``a * b`` is ``np.multiply(a,
    b)``), and a small constant array is known by its bytes (two ``eye(n)`` seeds made
    apart are one constant)."""
    if not _known(op.fn):
        return None
    fn = op.fn
    if fn in UFUNC_OF and values is not None and _ndarray_operator(op, values):
        fn = UFUNC_OF[fn]
    try:
        key = (fn, _key(op.args), _key(op.kwargs))
        hash(key)
    except TypeError:  # a constant that is not hashable by value
        return None
    first = seen.get(key)
    if first is None:
        seen[key] = op.outs
    return first


# ---------------------------------------------------------------------------------------
# A cheaper call for the same numbers
# ---------------------------------------------------------------------------------------

_WEAK = {np.add, np.subtract, np.multiply, np.true_divide}


def weak_scalar(op, values):
    """The call with its Python number made a 0-d array of the result's dtype, where
    the array operand has that dtype (so NumPy would convert the number to it)."""
    fn = ufunc_of(op)
    if fn not in _WEAK or len(op.args) != 2 or op.kwargs or type(op.outs) is not int:
        return op
    result = values[op.outs]
    dtype = getattr(result, "dtype", None)
    if dtype is None or dtype.kind not in "fc":
        return op
    args = list(op.args)
    for k, (number, other) in enumerate(((args[0], args[1]), (args[1], args[0]))):
        if type(number) in (int, float) and type(other) is Slot and \
                getattr(values[other.n], "dtype", None) == dtype and \
                isinstance(values[other.n], (np.ndarray, np.generic)):
            args[k] = np.asarray(number, dtype)
            return Op(op.fn, tuple(args), op.kwargs, op.outs, op.writes)
    return op


def scalar_constants(op, values):
    """The ufunc call with its NumPy scalar constants (``np.float64(-1.0)``, a rule's
    ``-1`` in the input's dtype) made 0-d arrays of their dtype, once: a ufunc takes a
    NumPy scalar as that very array (NEP 50: the same dtype, the same promotion), and
    converts it at every call (a third of a microsecond)."""
    if not isinstance(ufunc_of(op), np.ufunc) or op.kwargs or \
            not any(isinstance(a, np.generic) for a in op.args):
        return op
    args = tuple(np.asarray(a) if type(a) in _SCALARS else a for a in op.args)
    return Op(op.fn, args, op.kwargs, op.outs, op.writes)


_SCALARS = (np.float64, np.float32, np.complex128, np.complex64)


def plain_reduce(op, values):
    """``np.sum(x, axis=a, keepdims=k)`` of a float or complex ndarray as
    ``np.add.reduce(x, a)``: ``np.sum`` hands an ndarray to that very call."""
    if op.fn is not np.sum or len(op.args) != 1 or type(op.args[0]) is not Slot:
        return op
    x = values[op.args[0].n]
    if type(x) is not np.ndarray or x.dtype.kind not in "fc" or \
            not set(op.kwargs) <= {"axis", "keepdims"}:
        return op
    axis = op.kwargs.get("axis")
    if type(axis) is Slot:
        return op
    kwargs = {"keepdims": True} if op.kwargs.get("keepdims") is True else {}
    return Op(np.add.reduce, (op.args[0], axis), kwargs, op.outs, op.writes)


def as_method(op, values):
    """``np.reshape(x, s)`` and ``np.transpose(x, axes)`` of an ndarray as
    ``x.reshape(s)`` and ``x.transpose(axes)``: the functions call those very methods
    after reading their arguments (half a microsecond)."""
    method = _METHODS.get(op.fn) if type(op.fn) is not Method else None
    if method is None or len(op.args) != 2 or op.kwargs or type(op.args[0]) is not Slot \
            or type(values[op.args[0].n]) is not np.ndarray:
        return op
    return Op(method, op.args, {}, op.outs, op.writes)


_METHODS = {np.reshape: Method("reshape"), np.transpose: Method("transpose")}


def cheaper(op, values):
    """The call as the code generator writes it: ``weak_scalar``,
    ``scalar_constants``, ``plain_reduce``, ``as_method``."""
    if not pure(op) or any(type(a) is Slot and type(values.get(a.n)) not in _PLAIN
                           for a in op.args):
        return op
    return as_method(plain_reduce(scalar_constants(weak_scalar(op, values), values),
                                  values), values)


_PLAIN = (np.ndarray, np.float64, np.float32, np.float16, np.complex128, np.complex64)


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------

def _live(ops, needed):
    """The indices of the calls whose results are read, in the end, by ``needed``
    (or that have an effect), as ``passes.live_calls`` keeps them."""
    needed, live = set(needed), set()
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if not pure(op) or op.writes or any(n in needed for n in op.results()):
            live.add(i)
            needed.update(op.slots_read())
            needed.update(op.writes)
    return live


def _all_ones(value):
    if type(value) in (int, float):
        return value == 1
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fiu" \
        and bool(np.all(value == 1))


def _same_kind(a, b):
    """Same type, shape and dtype: one can stand for the other."""
    return type(a) is type(b) and isinstance(a, (np.ndarray, np.generic)) and \
        a.shape == b.shape and a.dtype == b.dtype


def _shape_kept(reader, old, new, values):
    """Whether ``reader``, a call that makes one result (or an augmented assignment,
    ``x += y``, which writes it into x), broadcasts its operands to its result's shape
    with ``new`` read in place of ``old``."""
    if type(reader.outs) is int:
        result = values[reader.outs]
    elif reader.outs is None and reader.fn in _AUGMENTED and reader.args and \
            type(reader.args[0]) is Slot and reader.writes == (reader.args[0].n,) and \
            reader.args[0].n != old:
        result = values[reader.args[0].n]
    else:
        return False
    shapes = [np.shape(values[a.n] if a.n != old else values[new]) if type(a) is Slot
              else np.shape(a) for a in reader.args]
    try:
        return np.broadcast_shapes(*shapes) == np.shape(result)
    except ValueError:
        return False


_AUGMENTED = (operator.iadd, operator.isub, operator.imul, operator.itruediv)


def _views_kept(slot, same, readers, values):
    """Each result of a call that read ``slot`` and shares its memory shares the memory
    of ``same`` too (a view of a view of it: a reshape to its own shape), so that
    ``passes.views``, which finds views from the traced values, still sees it once the
    call reads ``same``."""
    value, other = values[slot], values[same]
    if not isinstance(value, np.ndarray):
        return True
    return all(not (isinstance(values.get(n), np.ndarray) and
                    np.may_share_memory(values[n], value)) or
               (isinstance(other, np.ndarray) and np.may_share_memory(values[n], other))
               for reader in readers.get(slot, ()) for n in reader.results())


def _ndarray_operator(op, values):
    """An operator that NumPy serves by its ufunc: an ndarray operand, the others
    ndarrays, NumPy scalars or Python numbers."""
    kinds = [type(values[a.n]) if type(a) is Slot else type(a) for a in op.args]
    return np.ndarray in kinds and all(
        k is np.ndarray or issubclass(k, np.generic) or k in (bool, int, float, complex)
        for k in kinds)


def _known(fn):
    """A function whose result depends on its arguments alone."""
    if type(fn) in (Method, Attribute) or isinstance(fn, np.ufunc):
        return True
    name = getattr(fn, "__name__", None)
    return name is not None and (getattr(np, name, None) is fn or
                                 getattr(operator, name, None) is fn)


def _key(template):
    kind = type(template)
    if kind is Slot:
        return ("slot", template.n)
    if kind in (tuple, list):
        return (kind.__name__,) + tuple(_key(x) for x in template)
    if kind is dict:
        return ("dict",) + tuple((k, _key(v)) for k, v in template.items())
    if kind is slice:
        return ("slice", _key(template.start), _key(template.stop), _key(template.step))
    if template is None or kind in (bool, int, float, str):
        return (kind.__name__, template)
    if kind is np.ndarray and template.nbytes <= _BY_BYTES and not template.dtype.hasobject:
        return ("array", template.dtype.str, template.shape, template.tobytes())
    return ("object", id(template))  # an array or a dtype: the same object


_BY_BYTES = 1 << 16  # a constant array up to this size is compared by its bytes


def _renamed(op, alias):
    if not alias or not any(n in alias for n in op.slots_read()):
        return op
    return Op(op.fn, _rename(op.args, alias), _rename(op.kwargs, alias), op.outs,
              op.writes)


def _rename(template, alias):
    kind = type(template)
    if kind is Slot:
        return Slot(alias[template.n]) if template.n in alias else template
    if kind in (tuple, list):
        return kind(_rename(x, alias) for x in template)
    if kind is dict:
        return {k: _rename(v, alias) for k, v in template.items()}
    return template

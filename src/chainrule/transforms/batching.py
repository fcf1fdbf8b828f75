"""``cr.vmap``: a function written for one example, run on a batch of them at once.

``vmap(f)(xs)`` calls f once, on ``BatchTracer``s: each carries a whole batch (its
``value``, with the batch axis moved to the front) but answers ``shape``, ``ndim`` and
``len`` as one example would, so f is written for one example. The batch axis never
shows to f.

One more level of the transforms' level mechanism. Each vmap call draws a fresh level
(``new_level``, the counter grad and jvp draw from) and tags its tracers with it. An
operation among boxes is handed to the highest level's box (``Primitive.__call__``);
when that is a BatchTracer, its level's tracers are unwrapped to their batched values,
everything else (an outer transform's tracer, a Tensor, an array) stays whole, and the
operation runs once on the batch. So ``vmap(grad(f))``, ``grad(vmap(f))``,
``vmap(vmap(f))`` and ``jacrev`` as ``vmap(vjp)`` nest as JVPTracer and ReverseTracer
do: the inner transform's rules run on the outer one's values, and each level sees only
its own axes. ``raw()`` stops at a BatchTracer (``Box._batched``): a mask a rule
computes from one (``raw(x) > 0``) stays batched, instead of showing the rule a plain
array with an axis it does not know of.

How an operation runs on a batch: its record says (``Primitive.batching``). A
*batching rule* rewrites the arguments so the batch axis stays in front (an ``axis``
shifted by one, an index with a leading ``:``, 1-d matmul operands promoted), then
calls the operation once. Most operations name a kind, and this module carries out
each kind:

* ``ENTRYWISE``, every operation ``elementwise`` made (the library's, scipy.special's,
  a user's) and real, imag, conj, angle: broadcasting, after padding a batched operand
  of lower rank with 1s behind its batch axis (the batch axis must never meet an
  example's axis);
* ``along_axis(...)``, the reductions and the operations along an axis: sum, mean,
  max, min, prod, logsumexp, norm, softmax, log_softmax, cumsum, the FFTs (None: every
  axis but the batch's);
* ``LEADING_AXES``, what already computes on stacks: astype, the fused linear layer,
  inv, det, logabsdet, det_sign, cholesky, eig (so eigvals), eigh, eigvalsh, svd,
  svdvals, qr, pinv. NumPy's eig of a real stack is complex if any matrix of the stack
  has a complex eigenvalue, so a batch may be complex where one example alone would be
  real (JAX's always is).

A few shape and product operations batch in a way of their own, written here beside
the helpers they share (aligning ranks, shifting axes) and stored in their records:
expand_dims, squeeze, swapaxes, transpose, concatenate, stack, reshape, broadcast_to,
matmul (1-d operands included), einsum (without ``...``), solve, and indexing: getitem
and the indexed updates index_set, index_add, index_multiply, index_min, index_max (so
take, take_along_axis, sort and the backward passes that scatter), the index batched
or not (``batching_indexing.py``). ``fixed_point`` runs its iteration on the whole
batch, a ``while_loop`` in which each example stops at its own step (its record's
function, in ``fixed_point.py``).

Every other Primitive (convolutions and pooling, cross_entropy, the scipy wrappers
that are not entry by entry, odeint, cr.Function, a user's
``cr.primitive``) and any call a rule cannot batch (a boolean mask computed from
batched data, an einsum with ``...``) takes the *fallback*: a loop over the batch, the
operation called on each example, the results stacked. Always correct, slower; never
silent: each use adds one to ``fallbacks[operation name]``, which tests and users can
inspect. Examples whose results differ in shape (``x[x > 0]``) cannot be stacked: a
ValueError says so (JAX refuses such a mask under vmap too).

Random numbers. A ``cr.random`` key that is mapped draws each example's own numbers
(each sampler runs per example through ``xp.call``); an unmapped key, or a NumPy
Generator called inside the function, draws once, with one example's shape, and every
example sees the same numbers (as under jax.vmap with an unbatched key).

The transform itself (``in_axes``, ``out_axes``, the batch size, pytrees) is in
``vmap_axes.py``; this module is the tracer and how an operation reaches its rule
(with the short ways for the common calls); the rules are in ``batching_rules.py``.
"""

import numpy as np

from .. import arrays as xp
from ..methods import numpy_protocol
from .. import rules as ops
from ..boxes import _PLAIN
from ..primitive import (ENTRYWISE, Batching, Box, Primitive, call_unwrapped, refuse_mismatch,
                         shape_of)
from . import batching_indexing as indexing
from .batching_rules import (Call, _aligned, _along_axis_params, _ndim, _per_example, _rule_of,
                             _stack_rows, batching_rules, fallbacks)
from .pytrees import tree_flatten
from .tracer import Tracer

__all__ = ["BatchTracer", "fallbacks", "batching_rules"]

def _numbers(x):
    """The batched NumPy array inside any boxes, batch axes included (for its dtype)."""
    while isinstance(x, Box):
        x = x.value if isinstance(x, BatchTracer) else x._contents()
    return x


def _strip(x):
    """x without the boxes that carry derivatives (no comparison needs them); a batch
    stays, because its examples must stay apart."""
    while isinstance(x, Box) and not x._batched:
        x = x._contents()
    return x


class BatchTracer(Tracer):
    """A batch of values for one level of ``vmap``: ``value`` holds them all, the batch
    axis first; to the function it stands for one example."""

    __slots__ = ("value", "_level")
    _batched = True

    def __init__(self, value, level):
        self.value, self._level = value, level

    def __repr__(self):
        return f"BatchTracer({self.value!r}, level={self._level})"

    def _contents(self):
        return self.value

    @property
    def shape(self):
        value = self.value
        return value.shape[1:] if type(value) is np.ndarray else shape_of(value)[1:]

    @property
    def dtype(self):
        value = self.value
        return value.dtype if type(value) is np.ndarray else np.result_type(_numbers(self))

    def _refuse(self, what):
        raise TypeError(f"cr.vmap: {what} of a batched value (one example's shape "
                        f"{self.shape}) would need one number per example; keep "
                        f"computing with cr.* operations, or use cr.where for a choice")

    def __bool__(self):
        raise TypeError(f"cr.vmap: the truth value of a batched value (shape {self.shape}) "
                        f"differs from example to example, so Python's if cannot take "
                        f"it; use cr.where(condition, a, b)")

    # The arithmetic operators: a batch of NumPy numbers with a NumPy array of no more
    # axes than one example, or with a Python number, is NumPy's own product (the
    # batch axis in front meets nothing of the other operand); the operation's record
    # takes every other case (``_arithmetic``).
    def __add__(self, other): return _arithmetic(ops.add, self, other, False)
    def __radd__(self, other): return _arithmetic(ops.add, self, other, True)
    def __sub__(self, other): return _arithmetic(ops.subtract, self, other, False)
    def __rsub__(self, other): return _arithmetic(ops.subtract, self, other, True)
    def __mul__(self, other): return _arithmetic(ops.multiply, self, other, False)
    def __rmul__(self, other): return _arithmetic(ops.multiply, self, other, True)
    def __truediv__(self, other): return _arithmetic(ops.divide, self, other, False)
    def __rtruediv__(self, other): return _arithmetic(ops.divide, self, other, True)

    def __neg__(self):
        value = self.value
        if type(value) is np.ndarray:
            return BatchTracer(-value, self._level)
        return ops.negative(self)

    # comparisons and logic give masks, batched like their operands (no derivative)
    def __lt__(self, other): return _plain_entrywise(np.less, (self, other))
    def __le__(self, other): return _plain_entrywise(np.less_equal, (self, other))
    def __gt__(self, other): return _plain_entrywise(np.greater, (self, other))
    def __ge__(self, other): return _plain_entrywise(np.greater_equal, (self, other))
    def __eq__(self, other): return _plain_entrywise(np.equal, (self, other))
    def __ne__(self, other): return _plain_entrywise(np.not_equal, (self, other))
    def __and__(self, other): return _plain_entrywise(np.logical_and, (self, other))
    def __or__(self, other): return _plain_entrywise(np.logical_or, (self, other))
    def __invert__(self): return _plain_entrywise(np.logical_not, (self,))
    __rand__, __ror__, __hash__ = __and__, __or__, object.__hash__

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:
            if ufunc in numpy_protocol.CONSTANT_UFUNCS or ufunc in _INTEGERS_ONLY:
                return _plain_entrywise(ufunc, inputs)
            if ufunc is np.nextafter:  # (an example in a graph refuses it, by name)
                return _plain_entrywise(ufunc, inputs, strip=False)
            prim = _ARITHMETIC.get(ufunc)  # (an array times a batch: array.__mul__)
            if prim is not None and len(inputs) == 2:
                reflected = inputs[1] is self
                out = _arithmetic_on_arrays(prim, self, inputs[0 if reflected else 1],
                                            reflected)
                if out is not None:
                    return out
        return numpy_protocol.apply_ufunc(ufunc, method, inputs, kwargs, self._plain)

    def __array_function__(self, func, types, args, kwargs):
        if func in _ONE_EXAMPLE:
            return _ONE_EXAMPLE[func](*args, **kwargs)
        if func in (np.zeros_like, np.ones_like, np.empty_like) and "shape" not in kwargs:
            return BatchTracer(func(self.value, **kwargs), self._level)
        if func in indexing.ALONG_AN_AXIS and len(args) == 1 and _strip(args[0]) is self:
            out = indexing.along_an_axis(func, self.value, kwargs)  # (argmax: one call)
            if out is not None:
                return BatchTracer(out, self._level)
        if func in numpy_protocol.QUERIES or func in numpy_protocol.SHAPED_BY_DATA:
            # (argmax, isclose, unique...): example by example
            return _per_example_numpy(func, args, kwargs)
        return numpy_protocol.apply_function(func, args, kwargs, self._plain)


    # The calls of the array namespace (chainrule.arrays) that are not NumPy functions:
    # a batch is a registered array type there, so a rule's np.asarray keeps it a batch.
    def _as_array(self, dtype=None):
        if dtype is None or np.dtype(dtype) == self.dtype:
            return self
        return ops.astype(self, np.dtype(dtype))

    def _require(self, error, *args):
        # every example's check at once (under cr.jit, the check a replay makes)
        xp.require(xp.all(_numbers(self)), error, *args)

    def _branch(self, what):
        # a rule's choice of formula, made once for the batch: where every example makes
        # the same choice, that one (a mixed batch would need both formulas)
        values = _numbers(self)
        if xp.branch(xp.all(values), what):
            return True
        if not xp.branch(xp.any(values), what):
            return False
        raise TypeError(f"cr.vmap: {what} holds for some examples of the batch and not for "
                        f"others; this operation cannot run on such a batch at once (map "
                        f"it with a Python loop, or keep the examples on one side)")

    def _call(self, function, args):
        # each example's call goes through the namespace again (under cr.jit, a call of
        # the program)
        return _per_example_numpy(lambda *row: xp.call(function, *row), args, {})

    def _convert(self, kind):
        self._refuse(f"{kind.__name__}()")

    _owned = staticmethod(lambda array: array)


xp.ARRAYS.add(BatchTracer)


# ufuncs of integers (lax's shifts, population_count and clz call them), which carry no
# derivative as the bitwise ones: entry by entry on the examples' values. np.nextafter
# (lax.nextafter), whose float result JAX does not differentiate, too, on the values
# with their derivative boxes: an example in a graph refuses it, as eagerly.
_INTEGERS_ONLY = {np.left_shift, np.right_shift}
if hasattr(np, "bitwise_count"):  # (NumPy 2)
    _INTEGERS_ONLY.add(np.bitwise_count)

_ONE_EXAMPLE = {  # NumPy's questions about an array, answered for one example
    np.shape: lambda x: shape_of(x),
    np.ndim: lambda x: _ndim(x),
    np.size: lambda x, axis=None: (int(np.prod(shape_of(x))) if axis is None
                                   else shape_of(x)[axis]),
    np.result_type: lambda *xs: np.result_type(*[_numbers(x) for x in xs]),
    # (a batch's dtype is every example's)
    np.iscomplexobj: lambda x: np.result_type(_numbers(x)).kind == "c",
    np.isrealobj: lambda x: np.result_type(_numbers(x)).kind != "c",
}


def _top_batch(items):
    levels = [x._level for x in items if isinstance(x, BatchTracer)]
    return max(levels) if levels else None


def _plain_entrywise(func, inputs, strip=True):
    """A NumPy function without derivative (a comparison), entry by entry, on batches
    (``strip``: on the values without their derivative boxes)."""
    found = _one_level(inputs)
    if found is not None and found[0] != -1:  # (batches of NumPy arrays: at once)
        return BatchTracer(func(*found[1]), found[0])
    if strip:
        inputs = [_strip(x) for x in inputs]
    level = _top_batch(inputs)
    if level is None:
        return func(*inputs)
    batched = [isinstance(x, BatchTracer) and x._level == level for x in inputs]
    values = [x.value if b else x for x, b in zip(inputs, batched)]
    return BatchTracer(_plain_entrywise(func, _aligned(values, batched), strip), level)


_ARITHMETIC = {np.add: ops.add, np.subtract: ops.subtract, np.multiply: ops.multiply,
               np.true_divide: ops.divide}


def _arithmetic(prim, batch, other, reflected):
    """``batch (op) other`` (``other (op) batch`` if reflected) for a binary operator:
    the short way where it applies, else the operation's record."""
    out = _arithmetic_on_arrays(prim, batch, other, reflected)
    if out is not None:
        return out
    return prim(other, batch) if reflected else prim(batch, other)


def _arithmetic_on_arrays(prim, batch, other, reflected):
    """What ``_entrywise_on_arrays`` does with a binary operator's call, without the
    operation's dispatch, where the batch holds a NumPy array and the other operand is
    a Python number, a NumPy array with fewer axes than the batch (broadcasting meets
    it with one example's trailing axes, never the batch axis), or a batch of the same
    level, rank and size: NumPy's own operator on the numbers. None otherwise (and
    where NumPy refuses the shapes: the record's path names them).
    tests/test_vmap_fast_paths.py holds it to the general path's bits."""
    value, kind = batch.value, type(other)
    if type(value) is not np.ndarray:
        return None
    if kind is BatchTracer:
        numbers = other.value
        if other._level != batch._level or type(numbers) is not np.ndarray or \
                numbers.ndim != value.ndim or numbers.shape[0] != value.shape[0]:
            return None
        other = numbers
    elif not (kind is float or kind is int or (kind is np.ndarray and other.ndim < value.ndim)):
        return None
    try:
        out = prim.forward(other, value) if reflected else prim.forward(value, other)
    except ValueError:
        return None
    return BatchTracer(out, batch._level)


def _per_example_numpy(func, args, kwargs):
    """A NumPy query (np.argmax...) on a batch: asked of each example, then stacked."""
    fallbacks[f"np.{getattr(func, '__name__', 'function')}"] += 1
    stripped = [_strip(a) for a in args]
    level = _top_batch(stripped)
    size = next(shape_of(a.value)[0] for a in stripped
                if isinstance(a, BatchTracer) and a._level == level)
    rows = [func(*[a.value[i] if isinstance(a, BatchTracer) and a._level == level else a
                   for a in stripped], **kwargs) for i in range(size)]
    shapes = sorted({tuple(shape_of(r) for r in row) if isinstance(row, (tuple, list))
                     else shape_of(row) for row in rows})
    if len(shapes) > 1:
        raise ValueError(f"cr.vmap: np.{func.__name__} gives the examples results of "
                         f"different shapes ({shapes[0]} and {shapes[1]}), which cannot "
                         f"be one batch; call it outside cr.vmap")
    out = _stack_rows(rows)
    if isinstance(out, (tuple, list)):
        return type(out)(BatchTracer(o, level) for o in out)
    return BatchTracer(out, level)


# ---------------------------------------------------------------------------------------
# Running an operation on a batch
# ---------------------------------------------------------------------------------------

def _apply_primitive(cls, prim, args, kwargs):
    batching = prim.batching
    if batching is ENTRYWISE:
        if not kwargs:
            out = _entrywise_on_arrays(prim, args)
            if out is not None:
                return out
    elif type(batching) is Batching and args and type(args[0]) is BatchTracer:
        out = _kind_on_one_array(prim, batching, args, kwargs)
        if out is not None:
            return out
    elif prim is _RESHAPE or prim is _BROADCAST_TO:
        out = _shape_on_one_array(prim, args, kwargs)
        if out is not None:
            return out
    # a parameter may be batched too (an index computed from batched data); an axis, a
    # shape or a dtype cannot be
    params = [x for x in tree_flatten(kwargs)[0] if isinstance(x, BatchTracer)] \
        if kwargs and not _plain_parameters(kwargs) else []
    level, values, positions = cls._unwrap_top(args, params)
    batched, size = [False] * len(args), None
    for i in positions:
        batched[i] = True
    for arg in [a for a in args if isinstance(a, BatchTracer)] + params:
        if arg._level == level:
            n = shape_of(arg.value)[0]
            if size is not None and n != size:
                raise ValueError(f"cr.vmap: {prim.name} got batches of {size} and {n} "
                                 f"examples at one level; expected one batch size")
            size = n
    call = Call(prim, values, batched, kwargs, size, level)
    rule = _rule_of(prim)
    if any(p._level == level for p in params) and not getattr(rule, "takes_batched_params",
                                                              False):
        rule = _per_example
    out = rule(call)
    if isinstance(out, (tuple, list)):
        return type(out)(BatchTracer(o, level) for o in out)
    return BatchTracer(out, level)


BatchTracer._apply_primitive = classmethod(_apply_primitive)


def _plain_parameters(kwargs):
    """Whether every keyword is a plain value (a number, None, a string, a dtype) or a
    tuple of them: nothing a batch could hide in."""
    for value in kwargs.values():
        if type(value) not in _PLAIN and not (
                type(value) is tuple and all(type(v) in _PLAIN for v in value)):
            return False
    return True

_NUMBERS = (float, int, bool, complex)
_PRIMITIVE_CALL = Primitive.__call__


def _entrywise_on_arrays(prim, args):
    """An ``ENTRYWISE`` operation whose arguments are batches of one level holding
    NumPy arrays, NumPy arrays and numbers: ``_elementwise``'s broadcasting (a batch of
    lower rank padded with 1s behind its batch axis) done in place of the general path's
    scan of levels and its call record, and the forward called at once. None where
    anything else takes part (another level, a traced or another library's array, two
    batch sizes): the general path decides. tests/test_vmap_fast_paths.py holds
    it to the general path's bits on every case of the derivative table."""
    found = _one_level(args)
    if found is None:
        return None
    level, values, plain = found
    if plain and _PRIMITIVE_CALL is type(prim).__call__:  # (call_unwrapped's own case)
        try:
            out = prim.forward(*values)
        except ValueError as err:
            refuse_mismatch(prim, values, err)
            raise
    else:
        out = call_unwrapped(prim, values, {})
    if isinstance(out, (tuple, list)):
        return type(out)(BatchTracer(o, level) for o in out)
    return BatchTracer(out, level)


def _kind_on_one_array(prim, batching, args, kwargs):
    """An operation ``along_axis`` or on ``LEADING_AXES`` whose first argument is a batch
    holding a NumPy array and whose other arguments and keywords are plain values (a
    number, an axis, None): what ``_along_axis`` and ``_first_only`` do with such a
    call, without the general path's scan of levels and its call record. None where
    anything else takes part. tests/test_vmap_fast_paths.py holds it to the
    general path's bits on every case of the derivative table."""
    value = args[0].value
    if type(value) is not np.ndarray:
        return None
    for arg in args[1:]:
        if type(arg) not in _PLAIN:
            return None
    if kwargs and not _plain_parameters(kwargs):
        return None
    if batching.kind == "along axis":
        p = _along_axis_params(prim, args[1:], kwargs, value.ndim - 1)
        out = call_unwrapped(prim, (value,), p)
    else:
        out = call_unwrapped(prim, (value,) + tuple(args[1:]), kwargs)
    level = args[0]._level
    if isinstance(out, (tuple, list)):
        return type(out)(BatchTracer(o, level) for o in out)
    return BatchTracer(out, level)


_RESHAPE, _BROADCAST_TO = ops.shapes._reshape, ops.broadcast_to


def _shape_on_one_array(prim, args, kwargs):
    """reshape or broadcast_to of one batch holding a NumPy array, to a shape of plain
    integers: what their rules (``batching_rules._reshape``, ``_broadcast_to``) do with
    such a call, without the general path's scan of levels and its call record (a
    broadcast batch padded with 1s behind its batch axis by a reshape, the view
    ``_pad``'s expand_dims makes). None where anything else takes part.
    tests/test_vmap_fast_paths.py holds it to the general path's bits."""
    if kwargs or len(args) != 2 or type(args[0]) is not BatchTracer:
        return None
    value, shape = args[0].value, args[1]
    shape = (shape,) if type(shape) is int else shape
    if type(value) is not np.ndarray or type(shape) is not tuple or \
            not all(type(n) is int for n in shape):
        return None
    size = value.shape[0]
    if prim is _BROADCAST_TO:
        missing = len(shape) - (value.ndim - 1)
        if missing < 0:
            return None
        if missing:
            value = value.reshape(value.shape[:1] + (1,) * missing + value.shape[1:])
    return BatchTracer(call_unwrapped(prim, (value, (size,) + shape), {}), args[0]._level)


def _one_level(args):
    """``(level, values, plain)`` where every argument is a batch of one level holding a
    NumPy array, a NumPy array or a number: the values as ``_elementwise`` aligns them
    (a batch of lower rank padded with 1s behind its batch axis), and whether each is
    of a type ``call_unwrapped`` hands straight to a forward. None otherwise."""
    level, rank, size, lowest, plain, values = -1, 0, None, None, True, []
    for arg in args:  # (one pass: the checks, the ranks and the values together)
        kind = type(arg)
        if kind is BatchTracer:
            value = arg.value
            if type(value) is not np.ndarray or (level != -1 and arg._level != level) or \
                    (size is not None and value.shape[0] != size):
                return None
            level, size, own = arg._level, value.shape[0], value.ndim - 1
            if own > rank:
                rank = own
            if lowest is None or own < lowest:
                lowest = own
            values.append(value)
            continue
        if kind is np.ndarray:
            if arg.ndim > rank:
                rank = arg.ndim
        elif kind not in _NUMBERS and not isinstance(arg, np.generic):
            return None
        elif kind not in _PLAIN:
            plain = False
        values.append(arg)
    if lowest is not None and lowest < rank:  # a batch of lower rank: 1s behind its axis
        values = [value.reshape(value.shape[:1] + (1,) * (rank - value.ndim + 1)
                                + value.shape[1:])
                  if type(arg) is BatchTracer and value.ndim - 1 < rank else value
                  for arg, value in zip(args, values)]
    return level, values, plain

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
``vmap_axes.py``; this module is the tracer and the rules.
"""

from collections import Counter

import numpy as np

from .. import arrays as xp
from ..methods import numpy_protocol
from .. import rules as ops
from ..boxes import _PLAIN
from ..primitive import (ENTRYWISE, Batching, Box, Primitive, call_unwrapped, refuse_mismatch,
                         shape_of)
from . import batching_indexing as indexing
from .pytrees import tree_flatten
from .tracer import Tracer

__all__ = ["BatchTracer", "fallbacks", "batching_rules"]

fallbacks: Counter = Counter()  # operation name -> calls that looped over the batch


def _ndim(x):
    return len(shape_of(x))


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
        if method == "__call__" and ufunc in numpy_protocol.CONSTANT_UFUNCS and not kwargs:
            return _plain_entrywise(ufunc, inputs)
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
        if func in numpy_protocol.QUERIES:  # (argmax, isclose...): example by example
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


def _plain_entrywise(func, inputs):
    """A NumPy function without derivative (a comparison), entry by entry, on batches."""
    found = _one_level(inputs)
    if found is not None and found[0] != -1:  # (batches of NumPy arrays: at once)
        return BatchTracer(func(*found[1]), found[0])
    inputs = [_strip(x) for x in inputs]
    level = _top_batch(inputs)
    if level is None:
        return func(*inputs)
    batched = [isinstance(x, BatchTracer) and x._level == level for x in inputs]
    values = [x.value if b else x for x, b in zip(inputs, batched)]
    return BatchTracer(_plain_entrywise(func, _aligned(values, batched)), level)


def _per_example_numpy(func, args, kwargs):
    """A NumPy query (np.argmax...) on a batch: asked of each example, then stacked."""
    fallbacks[f"np.{getattr(func, '__name__', 'function')}"] += 1
    stripped = [_strip(a) for a in args]
    level = _top_batch(stripped)
    size = next(shape_of(a.value)[0] for a in stripped
                if isinstance(a, BatchTracer) and a._level == level)
    rows = [func(*[a.value[i] if isinstance(a, BatchTracer) and a._level == level else a
                   for a in stripped], **kwargs) for i in range(size)]
    return BatchTracer(_stack_rows(rows), level)


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


class Call:
    """An operation called on a batch: the arguments (a batched one as its value, the
    batch axis first), which of them are batched, the batch size, the level."""

    __slots__ = ("prim", "values", "batched", "kwargs", "size", "level")

    def __init__(self, prim, values, batched, kwargs, size, level):
        self.prim, self.values, self.batched = prim, values, batched
        self.kwargs, self.size, self.level = kwargs, size, level

    def params(self, names, defaults):
        """The arguments after the first by name: positional ones, then keywords."""
        found = dict(zip(names, defaults))
        found.update(zip(names, self.values[1:]))
        found.update(self.kwargs)
        return found

    def only_first_batched(self):
        return self.batched[0] and not any(self.batched[1:])


def _at(tree, i, level):
    """Example i of every batched value in a tree of arguments (an index, kwargs)."""
    if isinstance(tree, BatchTracer) and tree._level == level:
        return tree.value[i]
    if isinstance(tree, dict):
        return {k: _at(v, i, level) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_at(v, i, level) for v in tree)
    return tree


def _stack_rows(rows):
    if isinstance(rows[0], (tuple, list)):
        return type(rows[0])(_stack_rows([r[k] for r in rows]) for k in range(len(rows[0])))
    if any(isinstance(r, Box) for r in rows):
        return ops.stack(rows)
    return xp.stack([xp.as_array(r) for r in rows])  # (traced rows, under cr.jit, stay so)


def _per_example(call):
    """The fallback: the operation on each example, the results stacked."""
    if not call.size:
        raise ValueError(f"cr.vmap: {call.prim.name} has no batching rule, and a batch "
                         f"of 0 examples gives nothing to run it on")
    fallbacks[call.prim.name] += 1
    rows = []
    for i in range(call.size):
        args = [v[i] if b else v for v, b in zip(call.values, call.batched)]
        rows.append(call.prim(*args, **_at(call.kwargs, i, call.level)))
    shapes = {shape_of(r) for r in rows if not isinstance(r, (tuple, list))}
    if len(shapes) > 1:
        raise ValueError(f"cr.vmap: {call.prim.name} gives results of different shapes "
                         f"from example to example ({', '.join(map(str, sorted(shapes)))}), "
                         f"which one batch cannot hold (a boolean mask of batched data?); "
                         f"use cr.where(mask, x, 0) to keep one shape")
    return _stack_rows(rows)


# ---------------------------------------------------------------------------------------
# Batching rules
# ---------------------------------------------------------------------------------------

def _pad(value, rank):
    """A batched value with 1s behind its batch axis, up to ``rank`` axes per example."""
    missing = rank - (_ndim(value) - 1)
    return ops.expand_dims(value, tuple(range(1, 1 + missing))) if missing > 0 else value


def _aligned(values, batched, extra=()):
    """Batched operands padded to the examples' common rank (``extra``: unbatched
    arrays that broadcast with them), so that broadcasting never pairs the batch axis
    with an example's axis."""
    rank = max([_ndim(v) - b for v, b in zip(values, batched)] +
               [_ndim(x) for x in extra] + [0])
    return [_pad(v, rank) if b else v for v, b in zip(values, batched)]


def _elementwise(call):
    extra = [v for v in call.kwargs.values() if isinstance(v, (np.ndarray, Box))]
    return call_unwrapped(call.prim, _aligned(call.values, call.batched, extra), call.kwargs)


def _axis(axis, rank, name):
    """An example's axis (or tuple of axes) as an axis of the batch, counted from the
    end: the rules take axes that way (their derivatives run behind the leading axes of
    a stack of seeds too), and from the end an example's axis is the batch's."""
    if isinstance(axis, (tuple, list)):
        return tuple(_axis(a, rank, name) for a in axis)
    if not -rank <= axis < rank:
        raise np.exceptions.AxisError(f"{name}: axis {axis} is out of bounds for an "
                                      f"example of {rank} dimensions (inside cr.vmap)")
    return axis % rank - rank


def _along_axis(call):
    if not call.only_first_batched():
        return _per_example(call)
    p = _along_axis_params(call.prim, call.values[1:], call.kwargs,
                           _ndim(call.values[0]) - 1)
    return call_unwrapped(call.prim, call.values[:1], p)


def _along_axis_params(prim, rest, kwargs, rank):
    """The parameters after the operand of an operation along an axis, by name (the
    positional ones ``rest``, then the keywords, then the record's defaults), with the
    example's axis made an axis of the batch (None: every axis but the batch's)."""
    p = dict(prim.batching.params)
    p.update(zip(list(p), rest))
    p.update(kwargs)
    p["axis"] = (tuple(range(1, rank + 1)) if p["axis"] is None
                 else _axis(p["axis"], rank, prim.name))
    return p


def _expand_dims(call):
    p = call.params(("axis",), (None,))
    axes = p["axis"] if isinstance(p["axis"], (tuple, list)) else (p["axis"],)
    rank = _ndim(call.values[0]) - 1 + len(axes)
    return ops.expand_dims(call.values[0], _axis(tuple(axes), rank, "expand_dims"))


def _squeeze(call):
    p, x = call.params(("axis",), (None,)), call.values[0]
    if p["axis"] is None:
        axes = tuple(i + 1 for i, n in enumerate(shape_of(x)[1:]) if n == 1)
    else:
        axes = _axis(p["axis"], _ndim(x) - 1, "squeeze")
    return call.prim(x, axes) if axes != () else x


def _swapaxes(call):
    p, x = call.params(("axis1", "axis2"), (None, None)), call.values[0]
    rank = _ndim(x) - 1
    return call.prim(x, _axis(p["axis1"], rank, "swapaxes"), _axis(p["axis2"], rank, "swapaxes"))


def _transpose(call):
    p, x = call.params(("axes",), (None,)), call.values[0]
    rank = _ndim(x) - 1
    axes = (tuple(range(rank, 0, -1)) if p["axes"] is None
            else tuple(a + rank + 1 for a in _axis(tuple(p["axes"]), rank, "transpose")))
    return call.prim(x, (0,) + axes)


def _reshape(call):
    return call.prim(call.values[0], (call.size,) + _shape_param(call))


def _broadcast_to(call):
    shape = _shape_param(call)
    return call.prim(_pad(call.values[0], len(shape)), (call.size,) + shape)


def _shape_param(call):
    shape = call.params(("shape",), (None,))["shape"]
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def _first_only(call):
    """An operation that already works on any leading axes (astype, linear algebra on
    stacks of matrices, the fused layer in x): the batch is one more."""
    if not call.only_first_batched():
        return _per_example(call)
    return call_unwrapped(call.prim, call.values, call.kwargs)


def _all_batched(call):
    """Every operand with the batch axis (an unbatched one repeated)."""
    return [v if b else ops.broadcast_to(v, (call.size,) + shape_of(v))
            for v, b in zip(call.values, call.batched)]


def _join(stack):
    def rule(call):
        values = _all_batched(call)
        axis = call.kwargs.get("axis", 0)
        if axis is None:  # concatenate flattens first
            return call.prim(*[ops.reshape(v, (call.size, -1)) for v in values], axis=1)
        rank = _ndim(values[0]) - 1 + stack
        return call.prim(*values, **{**call.kwargs, "axis": _axis(axis, rank, call.prim.name)})
    return rule


def _or_per_example(rule):
    """A rule that may return None (a call too irregular for it): then the fallback."""
    def run(call):
        out = rule(call)
        return _per_example(call) if out is None else out
    return run


def _matmul(call):
    if call.kwargs or len(call.values) != 2:
        return _per_example(call)
    a, b = call.values
    (ba, bb), ra, rb = call.batched, _ndim(a) - call.batched[0], _ndim(b) - call.batched[1]
    if (ba and not bb and rb <= 2) or (bb and not ba and ra <= 2 and rb >= 2):
        # NumPy's own broadcasting keeps the batch axis in front: a batch of vectors
        # times a matrix is one product of the stacked rows (as jacrev's seeds are)
        return call.prim(a, b)
    if bb and not ba and ra == 2 and rb == 1:
        # a matrix times a batch of vectors: each a @ v is a row of the stacked vectors
        # times a's transpose, one product (NumPy would loop over the batch instead)
        return call.prim(b, ops.swapaxes(a, -1, -2))
    va, vb = ra == 1, rb == 1
    a = ops.expand_dims(a, -2) if va else a
    b = ops.expand_dims(b, -1) if vb else b
    a, b = _aligned([a, b], call.batched)
    out = call.prim(a, b)
    if vb:
        out = ops.squeeze(out, -1)
    if va:  # (the row's axis is last once the column's is gone)
        out = ops.squeeze(out, -1 if vb else -2)
    return out


def _solve(call):
    if len(call.values) != 2:
        return _per_example(call)
    a, b = call.values
    vector = _ndim(b) - call.batched[1] == 1
    if vector:
        b = ops.expand_dims(b, -1)
    a, b = _aligned([a, b], call.batched)
    out = call.prim(a, b)
    return ops.squeeze(out, -1) if vector else out


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum(call):
    subscripts = call.kwargs.get("subscripts")
    if not isinstance(subscripts, str) or "." in subscripts:
        return _per_example(call)
    spec = subscripts.replace(" ", "")
    inputs, _, output = spec.partition("->")
    if "->" not in spec:  # NumPy's implicit output: the letters seen once, in order
        output = "".join(sorted(c for c in set(inputs) if c.isalpha() and
                                inputs.count(c) == 1))
    letter = next(c for c in _LETTERS if c not in spec)
    terms = [letter + t if b else t for t, b in zip(inputs.split(","), call.batched)]
    return call.prim(*call.values, **{**call.kwargs,
                                      "subscripts": ",".join(terms) + "->" + letter + output})


def _indexing(rule):
    """An indexing rule: the fallback where it gives up, and it takes a batched index."""
    run = _or_per_example(rule)
    run.takes_batched_params = True
    return run


# The operations whose batching is a function of their own, written here beside the
# helpers they share; every other operation's record names its kind (``Batching``).
for _prim, _rule in [
        (ops.expand_dims, _expand_dims), (ops.squeeze, _squeeze), (ops.swapaxes, _swapaxes),
        (ops.transpose, _transpose), (ops.shapes._reshape, _reshape),
        (ops.broadcast_to, _broadcast_to),
        (ops.joining._concatenate, _join(0)), (ops.joining._stack, _join(1)),
        (ops.matmul, _matmul), (ops.contractions._einsum, _einsum), (ops.solve, _solve),
        (ops.getitem, _indexing(indexing.getitem)),
        *[(update, _indexing(indexing.index_update)) for update in (
            ops.index_set, ops.index_add, ops.index_multiply, ops.index_min, ops.index_max)]]:
    _prim.batching = _rule

_KINDS = {"entrywise": _elementwise, "leading axes": _first_only, "along axis": _along_axis}


def _rule_of(prim):
    """The batching rule an operation's record names (the fallback where it names none)."""
    batching = prim.batching
    if batching is None:
        return _per_example
    if isinstance(batching, Batching):
        return _KINDS[batching.kind]
    return batching


def batching_rules() -> dict[str, int]:
    """How many of the rule table's operations batch at once, and how many take the
    per-example fallback."""
    prims = set(ops.primitives())
    fast = sum(1 for p in prims if p.batching is not None)
    return {"rule": fast, "fallback": len(prims) - fast}

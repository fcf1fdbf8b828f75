"""The batching rules of ``cr.vmap`` (``batching.py``): how each kind of operation, and
the operations with a way of their own, run once on a whole batch, the batch axis in
front; and the fallback, which runs the operation example by example.

A rule takes a ``Call``: the operation, its arguments (a batched one as its batched
value), which of them are batched, the batch size and the level. It returns the
batched result, the batch axis still in front.
"""

from collections import Counter

import numpy as np

from .. import arrays as xp
from .. import rules as ops
from ..primitive import Batching, Box, call_unwrapped, shape_of
from . import batching_indexing as indexing

fallbacks: Counter = Counter()  # operation name -> calls that looped over the batch


def _ndim(x):
    return len(shape_of(x))


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
    if isinstance(tree, Box) and tree._batched and tree._level == level:
        return tree._contents()[i]
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


def _einsum(call):
    """One einsum for the batch: each batched operand's labels and the output's get a
    letter no label uses, in front (its batch axis)."""
    subscripts = call.kwargs.get("subscripts")
    if not isinstance(subscripts, str):
        return _per_example(call)
    shapes = [shape_of(v)[1:] if b else shape_of(v)
              for v, b in zip(call.values, call.batched)]
    inputs, output, free = ops.contractions.explicit_labels(subscripts, shapes)
    letter = free[0]
    terms = [letter + t if b else t for t, b in zip(inputs, call.batched)]
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

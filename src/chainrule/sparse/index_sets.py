"""The index-set rules: an operation's result pattern from its operands' patterns.

A pattern is a sparse boolean matrix, one row per entry of a value (C order), one
column per input. Every rule here is a sparse product ``S @ P`` per traced operand,
summed: ``S`` (result entries by operand entries) says which operand entries each result
entry is computed from, and is built from the operation's record, not its name:

* ``ENTRYWISE`` (and astype): each result entry from the operand entries broadcasting
  puts there;
* ``along_axis``: each result entry from the whole fibre along the axes (a reduction,
  a cumulative sum, a softmax, an FFT);
* ``LEADING_AXES`` linear algebra (inv, det, eigh...): dense within each matrix of a
  stack;
* shapes and indexing (reshape, transpose, getitem, concatenate...): found by running
  the operation on the entries' numbers, since it only moves entries;
* indexed updates (``x.at[i].add(v)``): x where it is kept, v scattered to the index;
* contractions (matmul, einsum): by their index labels, skipping products with a
  constant operand's zeros.

Anything else (convolutions, solve, a user's primitive) takes ``dense``: every result
entry depends on every entry of its traced operands. Too full, never too empty.
"""

import numpy as np

from .. import rules as ops
from ..primitive import Batching, shape_of
from ..rules import (contractions, decompositions, determinants, eigen, joining,
                     matrix_functions, shapes, solves)
from .scipy_door import sparse_module

__all__ = ["Call", "rule_of", "dense", "SEVERAL_RESULTS"]

# An einsum or matmul enumerates every product of its index labels (its dense cost);
# past this many, the dense rule is cheaper and still right.
_MAX_PRODUCTS = 20_000_000


class Call:
    """One operation on traced values: the plain arguments (``primals``, ``kwargs``),
    the traced operands' patterns ({argnum: pattern}), the result, the inputs' count."""

    __slots__ = ("prim", "primals", "kwargs", "operands", "ans", "n", "local")

    def __init__(self, prim, primals, kwargs, operands, ans, n, local):
        self.prim, self.primals, self.kwargs = prim, primals, kwargs
        self.operands, self.ans, self.n, self.local = operands, ans, n, local

    @property
    def out_size(self):
        return int(np.size(self.ans))


# ---------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------

def _empty(rows, n):
    return sparse_module().csr_array((rows, n), dtype=bool)


def _pairs(rows, cols, shape):
    """The boolean matrix with True at (rows[k], cols[k])."""
    sparse = sparse_module()
    return sparse.csr_array((np.ones(len(rows), bool), (rows, cols)), shape=shape)


def _select(source, pattern):
    """The pattern of a value whose entry k is operand entry ``source[k]`` (-1: none)."""
    sparse = sparse_module()
    source = np.asarray(source, dtype=np.int64).ravel()
    kept = source >= 0
    indptr = np.concatenate([[0], np.cumsum(kept)])
    picker = sparse.csr_array((np.ones(int(indptr[-1]), bool), source[kept], indptr),
                              shape=(source.size, pattern.shape[0]))
    return picker @ pattern


def _sum(patterns, rows, n):
    total = None
    for p in patterns:
        total = p if total is None else total + p
    return _empty(rows, n) if total is None else total


def _ids(shape):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)


# ---------------------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------------------

def dense(call):
    """Every result entry on every entry of every traced operand."""
    sparse = sparse_module()
    union = np.zeros(call.n, bool)
    for pattern in call.operands.values():
        union |= np.asarray(pattern.sum(axis=0)).ravel() != 0
    columns = np.flatnonzero(union)

    def full(size):
        indptr = np.arange(size + 1, dtype=np.int64) * columns.size
        return sparse.csr_array((np.ones(size * columns.size, bool), np.tile(columns, size),
                                 indptr), shape=(size, call.n))
    if isinstance(call.ans, (tuple, list)):
        return [full(int(np.size(a))) for a in call.ans]
    return full(call.out_size)


def entrywise(call):
    out_shape = shape_of(call.ans)
    patterns = []
    for argnum, pattern in call.operands.items():
        source = np.broadcast_to(_ids(shape_of(call.primals[argnum])), out_shape).copy()
        if call.local:
            partial = _partial(call, argnum, out_shape)
            if partial is not None:
                source[partial == 0] = -1
        patterns.append(_select(source, pattern))
    return _sum(patterns, call.out_size, call.n)


def _partial(call, argnum, out_shape):
    """The partial derivative of an entrywise operation by one operand, entry by entry
    (its JVP with a tangent of ones), or None where the record has no JVP for it."""
    if argnum not in call.prim.jvps and not (call.prim.variadic and 0 in call.prim.jvps):
        return None
    operand = call.primals[argnum]
    ones = np.ones(shape_of(operand), dtype=np.result_type(operand, np.float64))
    partial = call.prim.jvp(argnum)(ones, call.ans, *call.primals, **call.kwargs)
    return np.broadcast_to(np.asarray(partial), out_shape)


def along_axis(call):
    if set(call.operands) != {0} or isinstance(call.ans, (tuple, list)):
        return dense(call)
    names, defaults = zip(*call.prim.batching.params)
    params = dict(zip(names, defaults))
    params.update(zip(names, call.primals[1:]))
    params.update({k: v for k, v in call.kwargs.items() if k in params})
    in_shape, out_shape = shape_of(call.primals[0]), shape_of(call.ans)
    rank = len(in_shape)
    axis = params["axis"]
    axes = set(range(rank)) if axis is None else {
        a % rank for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    kept = [d for d in range(rank) if d not in axes]
    fibres = tuple(in_shape[d] for d in kept)
    group_in = _fibre_of(in_shape, kept, fibres)
    if len(out_shape) == rank and all(out_shape[d] == in_shape[d] for d in kept):
        group_out = _fibre_of(out_shape, kept, fibres)  # same rank: cumsum, softmax, fft
    elif int(np.prod(out_shape)) == int(np.prod(fibres)) and (
            out_shape == fibres or len(out_shape) == rank):
        group_out = np.arange(int(np.prod(fibres)))  # a reduction, keepdims or not
    else:
        return dense(call)
    per_fibre = _pairs(group_in, np.arange(group_in.size),
                       (int(np.prod(fibres)), group_in.size)) @ call.operands[0]
    return _select(group_out, per_fibre)


def _fibre_of(shape, kept, fibres):
    """The fibre each entry of an array of ``shape`` lies on: its index along the kept
    axes, numbered in C order."""
    number = np.zeros(shape, dtype=np.int64)
    stride = 1
    for d, size in reversed(list(zip(kept, fibres))):
        axis_shape = [1] * len(shape)
        axis_shape[d] = shape[d]
        number = number + np.arange(shape[d]).reshape(axis_shape) * stride
        stride *= size
    return number.ravel()


def moved_entries(call):
    """An operation that only moves entries (reshape, transpose, getitem, concatenate):
    run on each traced operand's entry numbers (1, 2, ...; the other operands zeros),
    twice, with the numbers shifted the second time: a result entry that moved by the
    shift is a copy of that entry, one that stayed is a constant. Anything else shows
    the operation is not a plain move here, and takes the dense rule."""
    patterns = []
    for argnum, pattern in call.operands.items():
        operand = call.primals[argnum]
        size = int(np.size(operand))
        numbers = _ids(shape_of(operand)).astype(np.float64) + 1.0
        probes = []
        for shift in (0.0, float(size)):
            args = list(call.primals)
            if call.prim.variadic:  # (concatenate, stack: the other arrays as zeros)
                args = [np.zeros(shape_of(a)) for a in args]
            args[argnum] = numbers + shift
            probes.append(np.asarray(call.prim(*args, **call.kwargs), np.float64).ravel())
        first, moved = probes[0], probes[1] - probes[0]
        copy = (moved == size) & (first >= 1) & (first <= size) & (first == np.round(first))
        if not np.all(copy | (moved == 0)):
            return dense(call)
        patterns.append(_select(np.where(copy, first - 1, -1), pattern))
    return _sum(patterns, call.out_size, call.n)


def indexed_update(call):
    """``x.at[index].set/add/multiply/min/max(v)``: each entry of x, where it is kept,
    and each entry of v, at the places of x the index sends it to."""
    x, value = call.primals[0], call.primals[1]
    index = call.kwargs["index"] if "index" in call.kwargs else call.primals[2]
    if any(not isinstance(k, int) for k in call.operands):
        return dense(call)
    places = np.asarray(_ids(shape_of(x))[index])
    patterns = []
    if 0 in call.operands:
        source = np.arange(int(np.size(x)))
        if call.prim is ops.index_set:  # overwritten: no longer x's
            source[places.ravel()] = -1
        patterns.append(_select(source, call.operands[0]))
    if 1 in call.operands:
        sources = np.broadcast_to(_ids(shape_of(value)), places.shape)
        scatter = _pairs(places.ravel(), sources.ravel(), (int(np.size(x)), int(np.size(value))))
        patterns.append(scatter @ call.operands[1])
    return _sum(patterns, call.out_size, call.n)


def matrix_stack(call):
    """Linear algebra on a stack of matrices (..., r, c): each matrix's results on all
    its entries, and on no other matrix's."""
    if set(call.operands) != {0} or np.ndim(call.primals[0]) < 2:
        return dense(call)
    in_shape = shape_of(call.primals[0])
    lead = in_shape[:-2]
    outs = call.ans if isinstance(call.ans, (tuple, list)) else (call.ans,)
    if any(shape_of(o)[:len(lead)] != lead for o in outs):
        return dense(call)
    matrices = int(np.prod(lead))
    per_matrix = _pairs(np.arange(int(np.prod(in_shape))) // (in_shape[-2] * in_shape[-1]),
                        np.arange(int(np.prod(in_shape))),
                        (matrices, int(np.prod(in_shape)))) @ call.operands[0]
    patterns = [_select(np.arange(int(np.size(o))) // max(1, int(np.size(o)) // matrices),
                        per_matrix) if np.size(o) else _empty(0, call.n) for o in outs]
    return patterns if isinstance(call.ans, (tuple, list)) else patterns[0]


def einsum(call):
    subscripts = call.kwargs.get("subscripts")
    if not isinstance(subscripts, str):
        return dense(call)
    shapes = [shape_of(v) for v in call.primals]
    terms, output, _ = contractions.explicit_labels(subscripts, shapes)
    if len({(label, n) for term, shape in zip(terms, shapes)
            for label, n in zip(term, shape)}) != len(set("".join(terms))):
        return dense(call)  # (a label of two sizes: '...' axes that broadcast a 1)
    return _contraction(call, [(t, _ids(shape_of(v)), np.asarray(v))
                               for t, v in zip(terms, call.primals)], output)


def matmul(call):
    """a @ b as an einsum: batch axes broadcast (the operands' entry numbers with
    them), a 1-d operand a vector."""
    if len(call.primals) != 2 or call.kwargs:
        return dense(call)
    a, b = (np.asarray(v) for v in call.primals)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    letters = "".join(chr(ord("A") + k) for k in range(len(batch)))
    operands, output = [], letters
    for value, core in ((a, "nk"), (b, "km")):
        ids = _ids(value.shape)
        if value.ndim == 1:
            operands.append(("k", ids, value))
        else:
            operands.append((letters + core, np.broadcast_to(ids, batch + value.shape[-2:]),
                             np.broadcast_to(value, batch + value.shape[-2:])))
            output += core.replace("k", "")
    return _contraction(call, operands, output)


def _contraction(call, operands, output):
    """Result entry o depends on operand i's entry e when some assignment of the index
    labels names both, and the other operands' entries there are not constant zeros
    (at this point too, where the pattern is local)."""
    sizes = {}
    for term, ids, _ in operands:
        for label, size in zip(term, ids.shape):
            sizes[label] = size
    labels = list(dict.fromkeys("".join(t for t, _, _ in operands) + output))
    if int(np.prod([sizes[k] for k in labels])) > _MAX_PRODUCTS:
        return dense(call)
    coords = {k: np.arange(sizes[k]).reshape([-1 if j == i else 1 for j in range(len(labels))])
              for i, k in enumerate(labels)}
    grid = tuple(sizes[k] for k in labels)

    def at(array, term):
        return np.broadcast_to(array[tuple(coords[k] for k in term)] if term else array, grid)
    result = at(_ids(shape_of(call.ans)), output)
    patterns = []
    for argnum, pattern in call.operands.items():
        term, ids, _ = operands[argnum]
        used = np.ones(grid, bool)
        for other, (t, _, value) in enumerate(operands):
            if other != argnum and (call.local or other not in call.operands):
                used &= at(value, t) != 0
        into = _pairs(result[used], at(ids, term)[used], (call.out_size, pattern.shape[0]))
        patterns.append(into @ pattern)
    return _sum(patterns, call.out_size, call.n)


# ---------------------------------------------------------------------------------------
# Which rule an operation takes: its record's kind, or one of the families above
# ---------------------------------------------------------------------------------------

_FAMILIES = {
    **{p: moved_entries for p in (ops.getitem, shapes._reshape, ops.transpose,
                                  ops.broadcast_to, ops.expand_dims, ops.squeeze,
                                  ops.swapaxes, joining._concatenate, joining._stack)},
    **{p: indexed_update for p in (ops.index_set, ops.index_add, ops.index_multiply,
                                   ops.index_min, ops.index_max)},
    **{p: matrix_stack for p in (solves.inv, determinants.det,
                                 determinants._logabsdet, determinants._det_sign,
                                 decompositions.cholesky, decompositions._eigh,
                                 decompositions.eigvalsh, decompositions._svd,
                                 decompositions.svdvals, decompositions._qr,
                                 matrix_functions.pinv, eigen._eig)},
    ops.matmul: matmul,
    contractions._einsum: einsum,
    ops.astype: entrywise,
}


SEVERAL_RESULTS = (dense, matrix_stack)  # the rules that take an operation of several results


def rule_of(prim):
    """The index-set rule of an operation."""
    family = _FAMILIES.get(prim)
    if family is not None:
        return family
    batching = prim.batching
    if isinstance(batching, Batching):
        if batching.kind == "entrywise":
            return entrywise
        if batching.kind == "along axis":
            return along_axis
    return dense

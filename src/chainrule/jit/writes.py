"""Arrays a program makes and then writes into: which they are, and which nobody reads.

A rule that scatters a gradient (the gradient of ``x[:19]`` is ``x``'s shape of zeros
with the slice added in) makes a new array and writes into it in place. Where nothing
reads that array afterwards (a Hessian's forward pass computes the gradient itself,
whose value nobody returns), the writes are dead code; ``passes.live_calls`` keeps
every write unless told whose array it is, so ``private_arrays`` tells it.

``private_arrays`` follows the calls in order: a call's result that owns its memory and
shares none with what the call read (a copy, a ufunc's result) starts a new array; a
result that shares memory with one such array only (a slice, a reshape) is a view of
it. An array any of whose views is also a view of something else (an input, a
constant, another array) is left out: a write into it may be seen elsewhere. Which
memory is shared is read from the traced values, as ``passes.views`` does.

``written_memory`` is the other side: the slots whose numbers a write may change (those
written, and every slot whose array shares memory with one of them). ``simplify.py``
and ``broadcasts.py`` leave them alone (a slot stands for another, or a copy for an
operand, only where both keep their numbers from the call that made them to the last
call that reads them) and rewrite the rest of a program that writes.

``self_assignments`` drops the last line of ``v = a[i]; v += g; a[i] = v``, the way
Python spells an augmented assignment to a slice (``a[i] += g``): v is a view of
``a[i]``, so the assignment copies that memory onto itself, which changes no bit.

``permuted_scatters`` turns a gradient's scatter through a permutation (``np.roll``'s
gradient: ``a = np.array(C, copy=True); np.add.at(a, (:, idx), v)``, idx a permutation
of an axis) into a gather, ``a = np.add(C, v.take(inv, axis))`` with inv the inverse
permutation: two calls of a fifth of the time, the second a new array a kept buffer
can hold. Each entry of a is the one sum ``C[..j..] + v[..inv[j]..]`` in both (a
permutation hits each entry once, so add.at adds once), in the same order of
operands, in the same dtype.

Dropping a write into a private array that no kept call reads after it keeps every
number: the array's memory is its own (no other slot, input or constant shares it),
so the write can be seen only through the array and its views, and none of them is
read afterwards.
"""

import operator

import numpy as np

from .ops import Method, Op, Slot, pure

__all__ = ["private_arrays", "written_memory", "self_assignments", "permuted_scatters"]


def private_arrays(ops, values):
    """{slot: the slot of the new array whose memory it is in}, for the new arrays of
    the program whose memory no other array shares (and for their views)."""
    family, mixed = {}, set()
    for op in ops:
        reads = [n for n in op.slots_read() if type(values.get(n)) is np.ndarray]
        constants = []
        _constant_arrays((op.args, op.kwargs), constants)
        for out in op.results():
            value = values.get(out)
            if type(value) is not np.ndarray or out in family:
                continue  # (an array a call gives back, as += does, stays where it was)
            shared = {family.get(n) for n in reads
                      if np.may_share_memory(value, values[n])}
            if any(np.may_share_memory(value, c) for c in constants):
                shared.add(None)
            if not shared:
                if value.base is None and pure(op):
                    family[out] = out
            elif len(shared) == 1 and None not in shared:
                family[out] = shared.pop()
            else:
                mixed.update(f for f in shared if f is not None)
    return {n: f for n, f in family.items() if f not in mixed}


def _constant_arrays(template, found):
    if type(template) is np.ndarray:
        found.append(template)
    elif type(template) in (tuple, list):
        for item in template:
            _constant_arrays(item, found)
    elif type(template) is dict:
        for item in template.values():
            _constant_arrays(item, found)


def written_memory(ops, values):
    """The slots whose numbers a call of ``ops`` may change in place: the slots it
    writes, and every slot whose traced array may share memory with one of them (None
    where there are too many to compare: the caller rewrites nothing)."""
    written = {w for op in ops for w in op.writes}
    if not written:
        return set()
    arrays = [n for n, v in values.items() if type(v) is np.ndarray]
    if len(written) * len(arrays) > _COMPARISONS:
        return None
    found = set(written)
    for w in written:
        target = values.get(w)
        if type(target) is np.ndarray:
            found.update(n for n in arrays if np.may_share_memory(values[n], target))
    return found


_COMPARISONS = 1 << 20  # may_share_memory calls, at most (about a second)


def self_assignments(ops, values):
    """The calls ``ops`` with each ``a[i] = v``, where v is the view ``a[i]`` an
    earlier call made (the same slot a, the same constant index), made a call that
    does nothing (which ``passes.live_calls`` drops)."""
    views = {}  # slot of a view -> (its array's slot, the index)
    new = []
    for op in ops:
        if op.fn is operator.getitem and type(op.outs) is int and len(op.args) == 2 \
                and type(op.args[0]) is Slot and not op.kwargs and \
                _same_memory(values.get(op.outs), values.get(op.args[0].n)):
            key = _index_key(op.args[1])
            if key is not None:
                views[op.outs] = (op.args[0].n, key)
        elif op.fn is operator.setitem and len(op.args) == 3 and not op.kwargs and \
                type(op.args[0]) is Slot and type(op.args[2]) is Slot and \
                views.get(op.args[2].n) == (op.args[0].n, _index_key(op.args[1])):
            new.append(Op(_nothing, (), {}, None, ()))
            continue
        new.append(op)
    return new


def _nothing():
    """What an assignment of a view's memory to itself does."""


def _same_memory(view, array):
    return type(view) is np.ndarray and type(array) is np.ndarray and \
        np.may_share_memory(view, array)


def _index_key(index):
    """A hashable key of a constant basic index (ints, slices, None, Ellipsis), else
    None."""
    kind = type(index)
    if kind is tuple:
        keys = tuple(_index_key(i) for i in index)
        return None if None in keys else ("tuple",) + keys
    if kind is int:
        return ("int", index)
    if kind is slice and all(type(v) in (int, type(None))
                             for v in (index.start, index.stop, index.step)):
        return ("slice", index.start, index.stop, index.step)
    if index is None or index is Ellipsis:
        return ("none" if index is None else "ellipsis",)
    return None


def permuted_scatters(ops, values):
    """The calls ``ops`` with each ``a = np.array(C, copy=True)`` followed (as the next
    call that reads a) by ``np.add.at(a, index, v)``, where C is a constant, v has a's
    shape and dtype, and index takes one axis through a permutation, made ``t =
    v.take(inv, axis); a = np.add(C, t)`` (``t`` a new slot, its value added to
    ``values``)."""
    made = {}  # slot -> the index of the copy that made it, while nothing read it
    new, slot = list(ops), max(values, default=-1) + 1
    for i, op in enumerate(ops):
        if op.fn is np.array and type(op.outs) is int and len(op.args) == 1 and \
                type(op.args[0]) is np.ndarray and op.kwargs == {"copy": True} and \
                type(values.get(op.outs)) is np.ndarray:
            made[op.outs] = i
            continue
        reads = set(op.slots_read()) | set(op.writes)
        target = op.args[0].n if op.args and type(op.args[0]) is Slot else None
        if target in made and reads & set(made) == {target}:
            found = _permuted_add(op, values)
            if found is not None:
                copy = ops[made[target]]
                axis, inverse, v = found
                constant = copy.args[0]
                if constant.shape == values[target].shape and \
                        constant.dtype == values[target].dtype:
                    values[slot] = values[v.n].take(inverse, axis)
                    new[made[target]] = Op(_nothing, (), {}, None, ())
                    new[i] = [Op(_TAKE, (v, inverse, axis), {}, slot, ()),
                              Op(np.add, (constant, Slot(slot)), {}, target, ())]
                    slot += 1
        for n in reads:
            made.pop(n, None)
    return [item for op in new for item in (op if type(op) is list else [op])]


_TAKE = Method("take")


def _permuted_add(op, values):
    """(axis, the inverse permutation, v) of ``np.add.at(a, index, v)`` whose index
    takes one axis of a through a permutation and the others whole, v of a's shape
    and dtype (else None)."""
    if getattr(op.fn, "__self__", None) is not np.add or \
            getattr(op.fn, "__name__", None) != "at" or len(op.args) != 3 or \
            op.kwargs or op.writes != (op.args[0].n,):
        return None
    a, index, v = values[op.args[0].n], op.args[1], op.args[2]
    if type(v) is not Slot or type(values.get(v.n)) is not np.ndarray or \
            values[v.n].shape != a.shape or values[v.n].dtype != a.dtype:
        return None
    index = index if type(index) is tuple else (index,)
    arrays = [k for k, i in enumerate(index) if type(i) is np.ndarray]
    if len(arrays) != 1 or len(index) > a.ndim or not all(
            i == slice(None) for k, i in enumerate(index) if k != arrays[0]):
        return None
    axis = arrays[0]
    idx, n = index[axis], a.shape[axis]
    if idx.ndim != 1 or idx.dtype.kind not in "iu" or idx.size != n or n == 0:
        return None
    perm = np.where(idx < 0, idx + n, idx)
    if not np.array_equal(np.sort(perm), np.arange(n)):
        return None
    return axis, np.argsort(perm), v

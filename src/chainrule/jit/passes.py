"""The passes over a program's data, each a function that decides one thing.

``program.compile`` calls them in order; each reads the program's calls and the values
they had while tracing, and returns its decision, which the code generator reads:

* ``live_calls``: the calls that make what the program returns or writes;
* ``parts``: the parts of the program (forward, backward, update) as a reader names them;
* ``new_arrays``: the calls whose result is a new array (it could go into a buffer),
  a NumPy scalar included where ufuncs alone read it (``zero_d``);
* ``views``: the results that may share memory with what the call read;
* ``in_place``: new values of inputs computed into the input's own array;
* ``kept_buffers``: temporaries computed into buffers kept from run to run;
* ``unused_inputs``: the inputs no call reads (``used_inputs``: the others).

Blocks of rows, the longest pass, is ``blocks.py``.

A loop (``loops.py``) is one call to these passes: it reads its arguments (the initial
carry, the xs, what its body reads) and makes new arrays (its body's results, never a
kept buffer, and what it stacks), or gives back an argument itself where the body
passes a carry on unchanged (``Recording._wrap_one``: the same slot). What lives from
step to step lives inside the call, so no pass needs to see into it: it is not a new
array for a buffer (``new_arrays``), its results' views are found from their values as
any call's (``views``), and its body, a program of its own, went through the passes
when it was traced.
"""

import operator

import numpy as np

from .ops import UFUNC_OF, pure

__all__ = ["live_calls", "parts", "new_arrays", "views", "sharing", "in_place",
           "kept_buffers", "unused_inputs", "used_inputs", "elementwise", "ufunc_of", "last_uses",
           "zero_d"]


def live_calls(ops, marks, needed, private=None):
    """(the calls kept, {index among them: the part of the program that starts there}).

    A call is kept if something kept reads what it makes, or if it has an effect, or
    if it writes in place (kept, in order, as the traced run did), unless what it
    writes is in an array of ``private`` ({slot: its array}, ``writes.private_arrays``)
    none of whose slots a kept call after it reads: a write nobody sees."""
    private = private or {}
    needed = set(needed)
    seen = {private[n] for n in needed if n in private}
    kept = []
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if pure(op) and op.writes and not any(o in needed for o in op.results()) and \
                all(w in private and private[w] not in seen for w in op.writes):
            continue
        if not pure(op) or op.writes or any(o in needed for o in op.results()):
            kept.append(i)
            for n in op.slots_read() + list(op.writes):
                needed.add(n)
                if n in private:
                    seen.add(private[n])
    kept.reverse()
    sections, current, shown = {}, None, None
    starts = sorted(marks)
    for new, old in enumerate(kept):
        while starts and starts[0] <= old:
            current = marks[starts.pop(0)]
        if current != shown:
            sections[new] = shown = current
    return [ops[i] for i in kept], sections


def parts(program, parameters, replaces):
    """{index of a call: the part of the program that starts there}, from the parts the
    recording marked, with an update named for what it does: a part without a graph
    ("no_grad"), or a forward part after a backward pass, that changes a parameter's
    values (``parameters``: their input slots), in place or as its new value
    (``replaces``: {output: the input it replaces}), is an update, as ``w -= lr *
    w.grad`` is."""
    def updates(op):
        return any(n in parameters for n in op.writes) or \
            any(replaces.get(n) in parameters for n in op.results())

    starts = sorted(program.sections)
    named, after_backward = {}, False
    for start, stop in zip(starts, starts[1:] + [len(program.ops)]):
        name = program.sections[start]
        if (name == "no_grad" or name == "forward" and after_backward) and \
                any(updates(op) for op in program.ops[start:stop]):
            name = "update"
        after_backward = after_backward or name == "backward"
        if not named or named[max(named)] != name:
            named[start] = name
    return named


def new_arrays(program):
    """The indices of the calls that make a new array a ufunc or matmul could have
    written into a buffer (``out=``), or a broadcast copy could have filled; and of the
    ufunc calls (a reduction included) that make a NumPy scalar read by ufuncs alone
    (``zero_d``)."""
    found = set()
    readers = {}
    for op in program.ops:
        for n in op.slots_read():
            readers.setdefault(n, []).append(op)
    for i, op in enumerate(program.ops):
        fn, out = op.fn, op.outs
        if type(out) is not int or op.writes or "out" in op.kwargs:
            continue
        value = program.values[out]
        if (type(value) is np.ndarray and value.ndim > 0 and value.base is None
                and (isinstance(fn, np.ufunc) or fn in UFUNC_OF or fn is np.matmul
                     or getattr(fn, "fills_new_array", False))):
            found.add(i)
        elif zero_d(op, value, readers.get(out, ()), program.outputs):
            found.add(i)
    return found


def zero_d(op, value, readers, outputs):
    """Whether a NumPy scalar a call makes can be made in a 0-d buffer (``out=``): the
    call is a ufunc of one result, or its reduction (``np.add.reduce``, ``np.sum``),
    and each call that reads the scalar is a ufunc of one result (which takes a NumPy
    scalar as the 0-d array of its dtype, and makes a new result: nothing keeps the
    buffer). Its numbers are the same: out= only says where the one result goes.
    NumPy serves a 0-d array faster than a NumPy scalar (the scalar is converted to an
    array at every call)."""
    if not isinstance(value, np.generic) or value.dtype.kind not in "fc" or \
            op.outs in outputs or not readers:
        return False
    fn = ufunc_of(op)
    owner = getattr(fn, "__self__", None)
    made = (isinstance(fn, np.ufunc) and fn.nout == 1 and fn is not np.matmul) or \
        (isinstance(owner, np.ufunc) and owner.nout == 1 and fn.__name__ == "reduce") or \
        fn is np.sum
    return made and not op.kwargs.keys() - {"axis", "keepdims", "dtype"} and \
        all(elementwise(r) and op.outs not in r.writes for r in readers)


def views(program):
    """{slot: the slots whose memory it may share}, for the results that are not new
    arrays (reshape, transpose, indexing with slices)."""
    values, found = program.values, {}
    for i, op in enumerate(program.ops):
        if i in program.fresh:
            continue
        reads = op.slots_read()
        for out in op.results():
            if isinstance(values[out], np.ndarray):
                found[out] = [r for r in reads if isinstance(values.get(r), np.ndarray)
                              and np.may_share_memory(values[out], values[r])]
    return found


def sharing(slots, views):
    """The slots that may share memory with any of ``slots`` (through views, either
    way), those included."""
    found = set(slots)
    changed = True
    while changed:
        changed = False
        for view, bases in views.items():
            linked = view in found or any(b in found for b in bases)
            if linked and not (view in found and found.issuperset(bases)):
                found.add(view)
                found.update(bases)
                changed = True
    return found


def last_uses(ops):
    """{slot: the index of the last call that reads or writes it}."""
    last = {}
    for i, op in enumerate(ops):
        for n in op.slots_read():
            last[n] = i
        for n in op.writes:
            last[n] = i
    return last


def in_place(program, replaces):
    """{output: input} for each new value of an input (``replaces``) that a call can
    compute into the input's array: made by a ufunc or matmul of the same shape and
    dtype, after which nothing reads the input or a view of it, and no other result
    shares its memory."""
    ops, values, outputs = program.ops, program.values, set(program.outputs)
    chosen = {}
    for i, op in enumerate(ops):
        if i not in program.fresh or op.outs not in replaces:
            continue
        out = op.outs
        source = replaces[out]
        new, old = values[out], values[source]
        if (not isinstance(old, np.ndarray) or type(new) is not np.ndarray
                or new.shape != old.shape
                or new.dtype != old.dtype or source in chosen.values()):
            continue
        shared = sharing({source}, program.views)
        later = {n for later_op in ops[i + 1:]
                 for n in later_op.slots_read() + list(later_op.writes)}
        if shared & later or shared & (outputs - {out}):
            continue
        chosen[out] = source
    return chosen


def kept_buffers(program, skip=()):
    """{slot: a buffer} for the temporaries a replay computes into buffers kept from run
    to run: arrays a call makes new (ufuncs, matmul) that share no memory with what the
    program returns or takes. Temporaries whose lives do not overlap share a buffer (of
    their shape and dtype), so a run touches little memory, as NumPy's allocator reuses
    what was just freed."""
    ops, values, views_of = program.ops, program.values, program.views
    escaping = sharing(set(program.outputs) | set(program.inputs), views_of)
    last_use = last_uses(ops)
    # A view keeps its bases alive; the latest views first, so views of views count
    for view in sorted(views_of, reverse=True):
        for base in views_of[view]:
            last_use[base] = max(last_use.get(base, -1), last_use.get(view, -1))
    free = {}     # (shape, dtype) -> [(free after op i, buffer)]
    buffers = {}
    for i, op in enumerate(ops):
        if i not in program.fresh or op.outs in escaping or op.outs in skip:
            continue
        out = op.outs
        value = values[out]
        pool = free.setdefault((value.shape, value.dtype), [])
        reuse = None
        if elementwise(op):
            # An operand that dies here, in a buffer of the result's shape: the result
            # goes into it, entry by entry, as NumPy itself does for the temporaries of
            # an expression (a + b * c), so a run touches as little memory as one
            dying = {id(buffers[n]) for n in op.slots_read()
                     if n in buffers and last_use.get(n) == i
                     and values[n].shape == value.shape and values[n].dtype == value.dtype}
            reuse = next((k for k, (_, b) in enumerate(pool) if id(b) in dying), None)
        if reuse is None:
            # the buffer freed last, as an allocator would: the likeliest still in cache
            ready = [k for k, (after, _) in enumerate(pool) if after < i]
            reuse = max(ready, key=lambda k: pool[k][0]) if ready else None
        buffer = pool.pop(reuse)[1] if reuse is not None else \
            np.empty(value.shape, value.dtype)
        buffers[out] = buffer
        pool.append((last_use.get(out, i), buffer))
    return buffers


def unused_inputs(program):
    """The positions of the inputs no call reads (a gradient the function sets to
    None, say): a run lets them go before it starts."""
    used = set(program.outputs)
    for op in program.ops:
        used.update(op.slots_read())
        used.update(op.writes)
    return [i for i, n in enumerate(program.inputs) if n not in used]


def used_inputs(program):
    """The input slots some call reads or the program returns, in order (the compiled
    tier's arguments: a replay lets the others go before it starts)."""
    unused = set(program.unused)
    return [n for i, n in enumerate(program.inputs) if i not in unused]


_AUGMENTED_UFUNC = {operator.iadd: np.add, operator.isub: np.subtract,
                    operator.imul: np.multiply, operator.itruediv: np.true_divide}


def ufunc_of(op):
    """The ufunc a call runs, where it runs one (``+`` and ``+=`` included)."""
    return _AUGMENTED_UFUNC.get(op.fn) or UFUNC_OF.get(op.fn, op.fn)


def elementwise(op):
    """Whether a call works entry by entry (a ufunc of one result, ``+=`` and the like
    included), so that it may write its result over an operand of the same shape, or
    run by blocks of rows."""
    fn = ufunc_of(op)
    return isinstance(fn, np.ufunc) and fn.nout == 1 and fn is not np.matmul


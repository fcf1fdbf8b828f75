"""The pass that runs elementwise calls on large arrays block of rows by block of rows.

An optimizer's update of a weight matrix is a few elementwise calls in a row (lr * g,
then p -= that; Adam's, a dozen). Each streams the whole array through memory, and a
matrix of a megabyte or more has left the cache before the next call reads it. Run
block of rows by block of rows, the calls find each block in cache, and a temporary
that lives only inside the run needs a block's worth of memory, not a whole array's.
An elementwise call reads each entry of its operands at its own place only, so the
numbers are the same to the last bit.
"""

import numpy as np

from .ops import Slot, pure
from .passes import elementwise, last_uses, sharing

__all__ = ["Run", "row_blocks", "by_rows", "target"]

_BLOCK_BYTES = 128 * 1024   # a block: a small part of a core's cache (1-2 MB of L2)
_BLOCKED_FROM = 512 * 1024  # smaller arrays stay in cache from one call to the next
# A run of two calls (a bias and a ReLU, a ReLU's mask and its product, SGD's lr * g and
# p -= that) stays whole: the second call finds enough of the first one's result in the
# last-level cache, and a block's calls cost more than the misses they save (measured on
# the MLP steps of benchmarks/w3_tensor_mlp.py: 1-5% slower by blocks). Adam's dozen
# calls gain.
_SHORTEST_RUN = 3


class Run:
    """Calls ``ops`` (op indices, in order) run block by block over ``rows`` (slices of
    axis 0 of ``shape``); ``hoisted``: calls on numbers inside the run, made before it;
    ``scratch``: {slot: one array per block} for the temporaries that live only in the
    run."""

    def __init__(self, ops, hoisted, shape, rows, scratch):
        self.ops, self.hoisted, self.shape, self.rows = ops, hoisted, shape, rows
        self.scratch = scratch
        self.stop = ops[-1] + 1  # (the hoisted calls sit between its first and last)


def by_rows(value, shape):
    """Whether an operand of an elementwise call with a result of ``shape`` varies along
    its first axis (its blocks are taken), rather than being broadcast along it."""
    return (isinstance(value, np.ndarray) and value.ndim == len(shape)
            and value.shape[0] == shape[0])


def target(op):
    """The slot a call's result goes to: what it makes, or the array it writes into."""
    if type(op.outs) is int:
        return op.outs
    return op.writes[0] if len(op.writes) == 1 else None


def _row_wise(op, values):
    """The shape of the call's result if it is elementwise with operands that are either
    of that shape or broadcast along its first axis; else None."""
    if not (elementwise(op) and set(op.kwargs) <= {"out"} and pure(op)):
        return None
    written = target(op)
    if written is None or not isinstance(values[written], np.ndarray):
        return None
    shape = values[written].shape
    if len(shape) == 0 or shape[0] < 2:
        return None
    for template in op.args:
        value = values[template.n] if type(template) is Slot else template
        if isinstance(value, np.ndarray) and value.ndim:
            if not (value.ndim <= len(shape) and (
                    by_rows(value, shape) or value.ndim < len(shape)
                    or value.shape[0] == 1)):
                return None
        elif not isinstance(value, (np.generic, np.ndarray, float, int, complex)):
            return None
    return shape


def _on_numbers(op, values):
    """A pure call that makes numbers (a bias correction, a step count)."""
    return pure(op) and not op.writes and all(
        not isinstance(values[o], np.ndarray) or values[o].ndim == 0
        for o in op.results())


def row_blocks(program):
    """{index of its first call: Run} for each run of at least _SHORTEST_RUN elementwise
    calls on arrays of one shape, of at least _BLOCKED_FROM bytes, that can run by
    blocks."""
    ops, values = program.ops, program.values
    runs, i = {}, 0
    while i < len(ops):
        shape = _row_wise(ops[i], values)
        if shape is None:
            i += 1
            continue
        members, hoisted, made = [], [], set()
        j = i
        while j < len(ops):
            op = ops[j]
            if _row_wise(op, values) == shape:
                members.append(j)
                made.update(op.results())
                made.update(op.writes)
            elif _on_numbers(op, values) and not made & set(op.slots_read()):
                hoisted.append(j)
            else:
                break
            j += 1
        hoisted = [k for k in hoisted if k < members[-1]]
        run = _plan_run(program, members, hoisted, shape)
        if run is not None:
            runs[i] = run
        i = members[-1] + 1
    return runs


def _plan_run(program, members, hoisted, shape):
    """The Run of these calls, or None where blocks would not pay or not be safe."""
    ops, values, views = program.ops, program.values, program.views
    targets = [target(ops[k]) for k in members]
    itemsize = max(values[n].dtype.itemsize for n in targets)
    row_bytes = itemsize * int(np.prod(shape[1:], dtype=np.int64))
    if len(members) < _SHORTEST_RUN or row_bytes * shape[0] < _BLOCKED_FROM:
        return None
    # What the run writes may share memory with nothing else it reads: a transposed
    # view of a matrix it updates would be read at other places than written, and a
    # block would read entries an earlier block changed.
    written = {program.in_place.get(n, n) for n in targets}
    read = {n for k in members for n in ops[k].slots_read()}
    for w in written:
        linked = sharing({w}, views)
        for n in read - {w}:
            if n in linked or (isinstance(values[n], np.ndarray) and
                               np.may_share_memory(values[n], values[w])):
                return None
    escaping = sharing(set(program.outputs) | set(program.inputs), views)
    viewed = set(views) | {b for bases in views.values() for b in bases}
    last_use = last_uses(ops)
    last = members[-1]
    rows = max(1, _BLOCK_BYTES // row_bytes)
    blocks = [slice(start, min(start + rows, shape[0])) for start in
              range(0, shape[0], rows)]
    scratch = {}
    for k in members:
        out = ops[k].outs
        if (k not in program.fresh or out in escaping or out in viewed
                or out in program.outputs or last_use.get(out, k) > last):
            continue
        value = values[out]
        whole = np.empty((rows,) + value.shape[1:], value.dtype)
        scratch[out] = [whole[:b.stop - b.start] for b in blocks]
    return Run(members, hoisted, shape, blocks, scratch)

"""Operands broadcast by arithmetic on small arrays, copied out to the result's shape.

NumPy serves a ufunc whose operands all have the result's shape, contiguous, by a short
path; an operand it must broadcast (a vector beside a matrix, as a forward pass with a
batch of seeds reads the primal values) sends it through its general iterator, which
costs about 0.6 us more on a small array: three times the call. Copying the operand
into a buffer of the result's shape (``buffer[...] = x``, a fifth of a microsecond)
and reading that gives the short path; several calls that broadcast one operand to
one shape share the copy, made before the first of them.

It keeps every number: the calls changed are ``simplify.ARITHMETIC``'s (add,
subtract, multiply, divide), each entry of which is one correctly rounded IEEE
operation on the same two numbers whichever loop NumPy takes, and the copy holds those
numbers bit for bit, in the operand's own dtype (so NumPy casts as it did). A constant
operand is broadcast once, when the program is compiled.

Only for small results (``SMALL``: on a large one the iterator's cost is nothing beside
the arithmetic, and the copy would be another pass over memory), and only for
an operand that nothing writes into (``writes.written_memory``: the copy must stay the
operand's numbers), in a call that writes into none of its operands.
"""

import numpy as np

from . import writes
from .ops import Op, Slot, pure
from .passes import ufunc_of
from .simplify import ARITHMETIC

__all__ = ["broadcast_copy", "copy_broadcast_operands", "SMALL"]

SMALL = 2048  # entries of a result, at most


def broadcast_copy(x, shape):
    """A new C-contiguous array of ``shape`` holding ``x`` broadcast to it."""
    out = np.empty(shape, np.result_type(x))
    out[...] = x
    return out


broadcast_copy.fills_new_array = True  # passes.new_arrays: a kept buffer can hold it


def copy_broadcast_operands(ops, values):
    """The calls ``ops`` with each broadcast operand of a small arithmetic call read
    from a copy of the result's shape: a new call ``broadcast_copy`` (a new slot, its
    value added to ``values``) before the first call that reads it, a constant
    broadcast now."""
    written = writes.written_memory(ops, values)
    if written is None:
        return ops
    new, copies, constants = [], {}, {}
    slot = max(values, default=-1) + 1
    for op in ops:
        shape = _broadcasting(op, values) if not op.writes else None
        if shape is None:
            new.append(op)
            continue
        args = list(op.args)
        for k, a in enumerate(args):
            if type(a) is Slot:
                value = values[a.n]
                if type(value) is not np.ndarray or not value.ndim or \
                        value.shape == shape or a.n in written:
                    continue
                key = (a.n, shape)
                if key not in copies:
                    copies[key] = slot
                    values[slot] = broadcast_copy(value, shape)
                    new.append(Op(broadcast_copy, (a, shape), {}, slot, ()))
                    slot += 1
                args[k] = Slot(copies[key])
            elif type(a) is np.ndarray and a.ndim and a.shape != shape:
                key = (id(a), shape)
                if key not in constants:
                    constants[key] = (a, broadcast_copy(a, shape))  # (a kept alive)
                args[k] = constants[key][1]
        new.append(Op(op.fn, tuple(args), op.kwargs, op.outs, op.writes))
    return new


def _broadcasting(op, values):
    """The result's shape, where ``op`` is a small arithmetic call of two operands
    that broadcasts one of them (else None)."""
    if not pure(op) or ufunc_of(op) not in ARITHMETIC or len(op.args) != 2 or \
            op.kwargs or type(op.outs) is not int:
        return None
    result = values[op.outs]
    if type(result) is not np.ndarray or not 1 < result.size <= SMALL:
        return None
    shape = result.shape
    for a in op.args:
        value = values[a.n] if type(a) is Slot else a
        if type(value) is np.ndarray and value.ndim and value.shape != shape:
            return shape
    return None

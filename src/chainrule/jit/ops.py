"""The calls cr.jit records, as data: what the passes and the code generator read.

An ``Op`` is one call of a program, ``outs = fn(*args, **kwargs)``, with ``Slot``s
where traced values were. An ``Effect`` wraps the function of a call that does more than
make its result (a check that raises, a random draw), which every pass keeps in order
(``pure`` tells the two apart). ``Method`` and ``Attribute`` stand for an ndarray
method or computed attribute (``x.sum()``, ``x.T``) as a function of the array.
``UFUNC_OF`` names the NumPy ufunc behind an operator, for the calls that can write into
a kept buffer.

The recorder (``recording.py``) makes these, and the traced array (``traced.py``)
names its methods with them; the simplifier, the passes and the code generator
(``simplify.py``, ``passes.py``, ``writes.py``, ``broadcasts.py``, ``blocks.py``,
``codegen.py``) read them. They are a file of their own so that the compiling side of
cr.jit depends on the shape of a call alone, not on the traced array or the recorder
that made it.
"""

import operator

import numpy as np

__all__ = ["Op", "Effect", "Slot", "Method", "Attribute", "UFUNC_OF", "pure"]


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


# Operators on arrays that are NumPy ufuncs, and can write into a kept buffer.
UFUNC_OF = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
             operator.truediv: np.true_divide, operator.matmul: np.matmul,
             operator.neg: np.negative, operator.lt: np.less, operator.gt: np.greater,
             operator.le: np.less_equal, operator.ge: np.greater_equal,
             operator.eq: np.equal, operator.ne: np.not_equal}


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

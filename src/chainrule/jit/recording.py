"""cr.jit's recorder: the NumPy calls of a function, recorded as data.

A ``Recording`` is a trace in progress: the program's inputs, the value each slot had
while tracing, and the calls so far, each an ``Op`` (``ops.py``). A traced array
(``traced.py``) hands it each NumPy call that touches it: ``record`` calls the function
on the real values, keeps the call with ``Slot``s where traced values were, and gives
back the result with new traced values for its arrays and numbers. It is also the
recorder ``chainrule.arrays`` knows while cr.jit traces: a random draw (``draw``:
recorded, so each run draws anew), state adopted before chainrule changes it
(``touch``), the part of the program the calls belong to (``mark``: forward, backward, an
optimizer's update). A loop's body is a recording nested in another (``child``,
``chainrule/jit/loops.py``), whose values it reads as its own inputs.

``chainrule/jit/program.py`` turns the list of calls into the program a replay runs.

The recorder is a file of its own: it keeps the program's slots, calls and nesting;
the traced array (``traced.py``) answers NumPy, and the calls as data are ``ops.py``.
"""

import itertools

import numpy as np

from ..arrays import stand_in_hook
from ..origin import user_line
from ..tensor_data import foreign
from .errors import TracingError
from .ops import Effect, Op, Slot
from .randomness import RUNS_A_CALL
from .traced import Traced, _values

__all__ = ["Recording"]


_NOT_STOOD_IN = object()


def _stood_in(hook, fn, args, kwargs):
    """fn on the numbers ``hook`` gives for the traced values in args and kwargs, or
    _NOT_STOOD_IN where it gives none for one of them (or there are none)."""
    seen = {"hit": False, "miss": False}

    def swap(x):
        kind = type(x)
        if kind is Traced:
            numbers = hook(x)
            seen["miss" if numbers is None else "hit"] = True
            return x if numbers is None else numbers
        if kind is tuple or kind is list:
            return kind(swap(item) for item in x)
        if kind is dict:
            return {k: swap(v) for k, v in x.items()}
        if kind is slice:
            return slice(swap(x.start), swap(x.stop), swap(x.step))
        return x
    args, kwargs = swap(args), swap(kwargs)
    if seen["miss"] or not seen["hit"]:
        return _NOT_STOOD_IN
    return fn(*args, **kwargs)


class _Deeper(Exception):
    """A call reads a value of a loop's body nested in the recording asked to record
    it: the body records the call."""

    def __init__(self, trace):
        self.trace = trace


class Recording:
    """A recording in progress: the program's inputs and calls so far.

    A recording may be the *body* of a loop of another (``child``): a traced value of
    an enclosing recording that the body reads becomes an input of the body
    (``captured``), and a call on values of both is recorded by the body."""

    def __init__(self, section="forward", parent=None):
        self.parent = parent
        self.captured = []        # the enclosing recording's values the body reads
        self._captures = {}       # id(enclosing value) -> (it, the body's input for it)
        self.ops = []
        self.inputs = []          # slot numbers of the program's arguments, in order
        self.values = {}          # slot -> the value it had while tracing
        self.marks = {0: section}  # op index -> the part that starts there
        self.section = section    # the part the calls now belong to
        self.alive = True
        self.adopt = None         # adopt(obj): cr.jit makes a tensor's arrays inputs
        self.drawn = set()        # ids of the generators draw() drew from
        self._slots = itertools.count()

    def child(self):
        """A recording of a loop's body, nested in this one (``chainrule/jit/loops.py``):
        it adopts state and notes draws as this one does."""
        body = type(self)("forward", parent=self)
        body.adopt, body.drawn = self.adopt, self.drawn
        return body

    def encloses(self, other):
        """Whether ``other`` is a recording nested (at any depth) in this one."""
        other = other.parent
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False

    def capture(self, traced):
        """The body's input that stands for ``traced``, a value of an enclosing
        recording (made an input the first time the body reads it)."""
        if self.parent is None:
            raise TracingError("cr.jit: a value traced by another cr.jit call was "
                               "used here; pass it as an argument instead")
        found = self._captures.get(id(traced))
        if found is None:
            outer = traced if traced._trace is self.parent else self.parent.capture(traced)
            found = self._captures[id(traced)] = (traced, self.input(outer._value))
            self.captured.append(outer)
        return found[1]

    def input(self, value):
        """A new argument of the program, holding ``value`` while tracing."""
        traced = self._new(value)
        self.inputs.append(traced._slot)
        return traced

    def made_so_far(self):
        """A test of whether a traced array was made before now (or by another
        recording): what a function run from now on did not compute itself. (Slots are
        numbered in the order values are made.)"""
        before = max(self.values, default=-1)
        return lambda traced: traced._trace is not self or traced._slot <= before

    def draw(self, sample, args, kwargs):
        """A random draw, recorded as a call of the program, so that a replay draws new
        numbers from the same generator, as the eager code does."""
        self.drawn.add(id(getattr(sample, "__self__", None)))
        return self.record(sample, args, kwargs, pure=False, force=True)

    def touch(self, obj):
        """Adopt ``obj`` (a tensor, a module, an optimizer) before chainrule changes it
        outside any NumPy call: the program's inputs are what the state was when the
        function was called."""
        if self.adopt is not None:
            self.adopt(obj)

    def mark(self, section, switch=False):
        """Name the part of the program that the calls from now on belong to: "forward",
        "backward" (a backward pass: ``Tensor.backward``, the transforms'), "update
        (SGD)" (an optimizer's step). Returns the name it replaces, which the code that
        marked a part gives back here when the part ends (a backward pass inside
        ``cr.grad`` inside a ``no_grad`` block).

        ``switch``: the grad mode was switched ("no_grad" for ``no_grad()``, "forward"
        for ``enable_grad()`` inside it). That names a part of the computation only
        where no other name does: inside an optimizer's update (which runs under
        no_grad) or a backward pass, the part keeps its name."""
        previous = self.section
        if switch and previous not in ("forward", "no_grad"):
            return previous
        self.section = section
        self.marks[len(self.ops)] = section
        return previous

    def _new(self, value):
        slot = next(self._slots)
        self.values[slot] = value
        return Traced(value, slot, self)

    def record(self, fn, args, kwargs, writes=(), pure=True, force=False):
        """Call ``fn`` on the values, record the call, and return its result with
        traced values for arrays and numbers (the same Traced where the call gave back
        an array it was given, as ``out=`` and ``+=`` do)."""
        hook = stand_in_hook()
        if hook is not None:
            found = _stood_in(hook, fn, args, kwargs)
            if found is not _NOT_STOOD_IN:
                return found
        if not self.alive:
            raise TracingError(
                "cr.jit: a traced value was used after its trace ended: it escaped the "
                "traced function (kept in a global, or in an object the function does not "
                "take as an argument or read through a Tensor)")
        given = {}
        try:
            written = [self._written_slot(w, given) for w in writes]
            targs = self._template(args, given)
            tkwargs = self._template(kwargs, given)
        except _Deeper as deeper:  # a loop's body reads this value: the body records
            return deeper.trace.record(fn, args, kwargs, writes, pure, force)
        if not given and not force:
            return fn(*args, **kwargs)
        result = fn(*_values(args), **_values(kwargs))
        outs, wrapped = self._wrap(result, given)
        self.ops.append(Op(fn if pure else Effect(fn), targs, tkwargs, outs,
                           tuple(written)))
        return wrapped

    def _written_slot(self, target, given):
        if type(target) is Traced:
            return self._template(target, given).n
        # A plain array would be a constant of the program that each run changes (and
        # the plain results NumPy makes from it would not be recorded): refused.
        shape = getattr(target, "shape", "?")
        raise TracingError(
            f"cr.jit: a traced value is written into a NumPy array made outside the trace "
            f"(shape {shape}) at {user_line()}; make the array from traced values "
            f"(np.zeros_like(x), x.copy()) or build the result with np.where")

    def lookup(self, x):
        """x if it is a value of this program, else None."""
        if type(x) is Traced and x._trace is self:
            return x
        return None

    def _template(self, x, given):
        kind = type(x)
        if kind is Traced:
            if x._trace is not self:
                if self.encloses(x._trace):
                    raise _Deeper(x._trace)
                x = self.capture(x)  # (raises unless x is an enclosing recording's)
            given[id(x)] = x
            return Slot(x._slot)
        if kind is tuple or kind is list:
            return kind(self._template(item, given) for item in x)
        if kind is dict:
            return {k: self._template(v, given) for k, v in x.items()}
        if kind is slice:
            return slice(*(self._template(v, given)
                           for v in (x.start, x.stop, x.step)))
        return x

    def _wrap(self, result, given):
        """(output slots, the result with traced values) of a call's result."""
        if type(result) is tuple or type(result) is list or (
                isinstance(result, tuple) and hasattr(result, "_fields")):
            outs, items = [], []
            for item in result:
                out, wrapped = self._wrap_one(item, given)
                outs.append(out)
                items.append(wrapped)
            if hasattr(result, "_fields"):  # a named tuple (eigh, svd, slogdet)
                return tuple(outs), type(result)(*items)
            return tuple(outs), type(result)(items)
        return self._wrap_one(result, given)

    def _wrap_one(self, value, given):
        for traced in given.values():  # the call gave back an array it was given
            if traced._value is value and (type(value) is np.ndarray or foreign(value)):
                return None, traced
        if isinstance(value, (np.ndarray, np.generic, float, int, complex)) and \
                not isinstance(value, bool):
            traced = self._new(value)
            return traced._slot, traced
        if isinstance(value, bool) or foreign(value):
            # a Python truth value from data (np.allclose), or an array of another
            # library (a program over torch's or Dask's arrays)
            traced = self._new(value)
            return traced._slot, traced
        return None, value  # None, a dtype, a shape: not data

    def end(self):
        self.alive = False


RUNS_A_CALL.add(Recording.record.__code__)

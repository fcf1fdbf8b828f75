"""Loops kept as loops in a cr.jit program: ``cr.scan``, ``cr.fori_loop``, ``cr.while_loop``.

Traced step by step, a loop of a thousand steps would be a thousand copies of its body
in the program. Instead ``Recorder.scan`` and ``Recorder.while_loop`` trace the body
once, in a recording nested in the program's (``Recording.child``), with a new traced
input for each leaf of the carry and of the step's x; a value of the program the body
reads besides becomes an input of the body too (``Recording.capture``). The body is
compiled as a program of its own (``Program``: its passes, its kept buffers, its code),
and the loop is one call of the enclosing program: an ``Op`` whose ``fn`` is a ``Loop``,
which reads the initial carry, the xs and what the body reads, and makes the final
carry and the stacked ys. Its code (``codegen.loop_function``) is a Python ``for`` (or
``while``) that calls the body's function once a step: each program keeps its own
slots and buffers, and the enclosing program's passes see one call that reads its
arguments and makes new arrays.

A body that cannot be one program, for each step, says so (``Recorder.scan`` returns
the reason, and ``cr.scan`` records the steps one by one instead): a body that branches
on data (``if`` on a traced value), that returns a carry of another kind than it was
given (shape, dtype, or a Python number for an array), that returns values of a
transform (it closes over a value being differentiated) or constants, or that writes
into its inputs.
"""

import numpy as np

from .. import arrays as xp
from . import codegen, passes
from .errors import TracingError
from .ops import pure
from .program import compile_program
from .recording import Recording
from .traced import Traced

__all__ = ["Loop", "Recorder"]


def _kind(value):
    """What a carry must keep from step to step: whether it is a Python number (which
    promotes weakly) or NumPy's (a 0-d array and a NumPy scalar promote alike), its shape
    and dtype."""
    kind = np.ndarray if isinstance(value, (np.ndarray, np.generic)) else type(value)
    return kind, np.shape(value), np.result_type(value)


class Loop:
    """The ``fn`` of a loop's ``Op``: ``loop(*carry, *xs, *captured) -> (*carry, *ys)``.

    ``body``: the program of one step, ``body(*carry, *x, *captured) -> (*carry, *y)``
    (x: row i of each of the xs); ``cond`` (a while loop): the program of the condition,
    ``cond(*carry, *captured) -> (flag,)``. ``ys``: the (shape, dtype) of each y, stacked
    on a new leading axis of ``steps``."""

    def __init__(self, name, body, carries, xs=0, steps=None, reverse=False, ys=(),
                 cond=None):
        self.__name__ = name
        self.body, self.cond = body, cond
        self.carries, self.xs, self.steps = carries, xs, steps
        self.reverse, self.ys = reverse, list(ys)
        self.body_captured = len(body.inputs) - carries - xs
        self.cond_captured = 0 if cond is None else len(cond.inputs) - carries
        self._run = codegen.loop_function(self)

    def __call__(self, *inputs):
        return self._run(*inputs)

    def __repr__(self):
        return f"<loop {self.__name__}>"

    def source(self):
        """The Python of the loop (its body's is ``body.source()``)."""
        return self._run.source

    def parts(self):
        """(title, program) of each sub-program, for the listing."""
        if self.cond is None:
            order = ", reversed" if self.reverse else ""
            return [(f"body, {self.steps} steps{order}", self.body)]
        return [("condition", self.cond), ("body", self.body)]


def _compile(inner, outputs, names):
    """The program of a body, or None where it writes into its inputs (an input is the
    last step's carry or a value the enclosing program still holds)."""
    program = compile_program(inner, outputs, names)
    inputs = passes.sharing(set(program.inputs), program.views)
    if any(set(op.writes) & inputs for op in program.ops):
        return None
    return program


class Recorder(Recording):
    """cr.jit's recording, which keeps the loops of ``chainrule.transforms.control`` as
    loops of the program (``xp.recorder()`` is one while cr.jit traces)."""

    def scan(self, body, carry, xs, steps, reverse=False):
        """``(final carry, stacked ys)`` (lists of leaves) of a loop of ``steps`` steps,
        recorded as one call: ``body(carry, x) -> (carry, ys)`` (lists of leaves, x the
        step's row of each of ``xs``; None: the body cannot be traced as one step) is
        traced once. A string where it cannot be: the reason."""
        first = steps - 1 if reverse else 0
        inner = self.child()
        c = [inner.input(_value(v)) for v in carry]
        x = [inner.input(_value(leaf)[first]) for leaf in xs]
        made = _trace(inner, lambda: body(c, x))
        if type(made) is str:
            return made
        new, ys = made
        new, ys = _slots(inner, new), _slots(inner, ys)
        inner.end()  # (a value of the body used after this raises)
        if new is None or ys is None:
            return "the body returns values of a transform or constants"
        changed = _changed(c, new)
        if changed:
            return changed
        names = _names(inner, c)
        names.update({s._slot: f"x[{k}]" for k, s in enumerate(x)})
        program = _compile(inner, [t._slot for t in new + ys], names)
        if program is None:
            return "the body writes into its inputs"
        kinds = [(np.shape(t._value), np.result_type(t._value)) for t in ys]
        loop = Loop("scan", program, len(c), len(x), steps, reverse, kinds)
        out = self._record(loop, list(carry) + list(xs) + inner.captured, [program])
        if type(out) is str:
            return out
        return list(out[:len(c)]), list(out[len(c):])

    def while_loop(self, cond, body, carry):
        """The final carry (a list of leaves) of ``while cond(carry): carry =
        body(carry)``, recorded as one call: ``cond(carry) -> flag`` and ``body(carry)
        -> carry`` (lists of leaves; None: it cannot be traced) are traced once each. A
        string where they cannot be: the reason."""
        traced = []
        for function in (cond, body):
            inner = self.child()
            c = [inner.input(_value(v)) for v in carry]
            made = _trace(inner, lambda: function(c))
            if type(made) is str:
                return made
            out = _slots(inner, [made] if function is cond else made)
            inner.end()
            if out is None:
                return "the body returns values of a transform or constants" \
                    if function is body else "the condition is not computed from the carry"
            if function is body and _changed(c, out):
                return _changed(c, out)
            program = _compile(inner, [t._slot for t in out], _names(inner, c))
            if program is None:
                return "the body writes into its inputs"
            traced.append((program, inner.captured))
        (test, test_reads), (step, step_reads) = traced
        loop = Loop("while_loop", step, len(carry), cond=test)
        out = self._record(loop, list(carry) + test_reads + step_reads, [test, step])
        return out if type(out) is str else list(out)

    def _record(self, loop, args, programs):
        """Record the loop's call (it runs now, on the traced values), or the reason it
        cannot run as one program (a step takes another branch than the traced one)."""
        effects = any(not pure(op) for p in programs for op in p.ops)
        try:
            return self.record(loop, tuple(args), {}, pure=not effects, force=effects)
        except TracingError as error:
            return f"a step of the loop does not run as the traced one ({error})"


def _names(inner, carry):
    """The listing's names of a body's inputs: the carry's, and what it reads besides."""
    names = {s._slot: f"carry[{k}]" for k, s in enumerate(carry)}
    captured = inner.inputs[len(inner.inputs) - len(inner.captured):]
    names.update({n: f"read[{k}]" for k, n in enumerate(captured)})
    return names


def _value(x):
    return x._value if type(x) is Traced else x


def _trace(inner, run):
    """Run ``run`` (a body, a condition) with ``inner`` as this thread's recorder: what it
    returns, or why it cannot be one program (a string)."""
    previous = xp.set_recorder(inner)
    try:
        made = run()
    except TracingError as error:
        inner.end()
        return f"tracing it once raised: {error}"
    finally:
        xp.set_recorder(previous)
    if made is None:
        return "its result has another structure than the carry"
    return made


def _slots(inner, values):
    """The body's traced values for ``values`` (a value of an enclosing recording read
    by the body becomes its input), or None where one is not a traced value."""
    found = []
    for v in values:
        if type(v) is not Traced or not v._trace.alive:
            return None
        if v._trace is not inner:
            if inner.encloses(v._trace):
                return None
            v = inner.capture(v)
        found.append(v)
    return found


def _changed(before, after):
    """Why a carry the body returns cannot be the next step's, or ''."""
    for k, (b, a) in enumerate(zip(before, after)):
        if _kind(b._value) != _kind(a._value):
            kb, ka = _kind(b._value), _kind(a._value)
            return (f"the body turns carry[{k}] from a {kb[0].__name__} {kb[1]} "
                    f"{kb[2]} into a {ka[0].__name__} {ka[1]} {ka[2]}")
    return ""

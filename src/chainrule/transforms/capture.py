"""The capture level: one run of a function at a fresh, highest tracer level, which
finds the values the function closes over that carry derivatives and, in later runs,
puts given values in their place (closure conversion, which JAX does when it traces a
function to a jaxpr: ``closure_convert``).

A run wraps the function's inputs in ``Capture`` boxes of a new level, so every
operation on them passes through ``Capture._apply_primitive``, which

* turns a value the function closed over (a module's weights, an outer transform's
  tracer) into an input: the first run lifts it out (computing on its numbers, so a
  recording level records nothing), later runs replace the k-th such value met by the
  k-th value given (``closed=``). Order is how they are told apart, as in a trace: the
  function must run the same operations each time (as JAX requires);
* asks a policy (cr.checkpoint's) about each operation and keeps what it marks, and in
  a replaying run hands back the kept result in place of computing it again
  (``Replayed``: the operation's own rules, its forward replaced by the kept value).

Users: ``cr.checkpoint`` (ad_checkpoint.py) and the solutions differentiated by the
implicit function theorem (implicit.py: a solver's function may close over values
being differentiated).
"""

import numpy as np

from .. import arrays as xp
from ..primitive import Box, Primitive, new_level, raw, shape_of
from ..tensor import Tensor
from . import checkpoint_policies
from .batching import BatchTracer
from .forward import JVPTracer
from .pytrees import tree_flatten
from .tracer import Tracer

__all__ = ["Run", "Capture", "Replayed", "capture_run", "lifted", "records", "constant",
           "unboxed", "same"]


class Run:
    """One run of the function at the capture level: what it lifted or is given for
    the values it closed over, and what the policy keeps or has kept."""

    def __init__(self, who, policy=None, closed=None, kept=None, shapes=None, lift=None,
                 arrays=None):
        self.who = who
        # None, or whether a registered array type's value (cr.jit's traced array) is one
        # the function closes over (met as a closed-over value, as a box is), not one it
        # computed from its own values outside any operation this run sees (x > 0)
        self.arrays = arrays
        self.lift = lifted if lift is None else lift  # (first run) a closed value -> ?
        self.level = new_level()
        self.policy = policy          # first run (and fwd runs): ask, and keep
        self.closed = closed          # later runs: the values standing for closed-over ones
        self.met = []                 # the closed-over boxes, in the order met
        self.lifted = []              # (first run) what it computed with in their place
        self.seen = {}                # id(box) -> its position in met
        self.kept = {} if kept is None else kept  # operation count -> its result
        self.named = {}               # operation count -> the name that kept its result
        # operation count -> its arguments' shapes, where the policy is asked; a kept
        # result stands in for a later run's operation only where they are the same
        self.shapes = {} if shapes is None else shapes
        self.replay = kept is not None
        self.count = 0

    def stand_in(self, box):
        """What the function computes with in place of a closed-over box."""
        k = self.seen.get(id(box))
        if k is None:
            k = self.seen[id(box)] = len(self.met)
            self.met.append(box)  # (kept alive: ids stay unique during the run)
        if self.closed is None:
            if k == len(self.lifted):
                self.lifted.append(self.lift(box))
            return self.lifted[k]
        if k >= len(self.closed) or shape_of(box) != shape_of(self.closed[k]):
            raise ValueError(f"{self.who}: its second run met other values "
                             f"it closed over than its first (a value of shape "
                             f"{shape_of(box)}); the function must run the same "
                             f"operations each time it is called")
        return self.closed[k]

    def met_as_closed(self, x):
        """Whether x, an argument of an operation that is not this run's value, is a
        value the function closes over."""
        # (of those arrays, only real and complex ones: integers and booleans carry no
        # derivative)
        return isinstance(x, Box) or (self.arrays is not None and _registered(x) and
                                      x.dtype.kind in "fc" and self.arrays(x))


def _registered(x):
    """Whether x is a value of a registered array type other than NumPy's."""
    return type(x) is not np.ndarray and type(x) in xp.ARRAYS


def lifted(x):
    """x without the levels that record (reverse mode, a Tensor's graph, an outer
    checkpoint's run): what the first run computes with. Forward mode and vmap stay,
    as they keep nothing (the run computes their tangents and batches as it goes); a
    Tensor stays a Tensor, without its graph, so results keep their kind."""
    if not records(x):
        return x
    if isinstance(x, Tensor):
        return Tensor._make(x._data)
    if isinstance(x, JVPTracer):
        return JVPTracer(lifted(x.primal), lifted(x.tangent), x._level)
    if isinstance(x, BatchTracer):
        return BatchTracer(lifted(x.value), x._level)
    return lifted(x._contents())


def records(x):
    """Whether a level records x somewhere inside it (a graph that keeps values)."""
    while isinstance(x, Box):
        if isinstance(x, Tensor):
            return x.requires_grad
        if isinstance(x, JVPTracer):
            return records(x.primal) or records(x.tangent)
        if not x._batched:
            return True
        x = x._contents()
    return False


def constant(x):
    """Whether x has no derivative at any level: a plain array, a Tensor that does not
    require grad, a batch of those."""
    while isinstance(x, Box):
        if isinstance(x, Tensor):
            return not x.requires_grad
        if not x._batched:
            return False
        x = x._contents()
    return True


def unboxed(x):
    """What a recording level hands an operation for the lifted x (a Tensor's array)."""
    return x._data if isinstance(x, Tensor) else x


def same(a, b):
    """Whether a recording level hands back the first run's value b as a: the object
    itself, or (a reverse-mode node copies the user's arrays it keeps) equal numbers,
    or a tracer of the same level around the same."""
    if a is b:
        return True
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.all(a == b))
    if isinstance(a, JVPTracer) and isinstance(b, JVPTracer):
        return a._level == b._level and same(a.primal, b.primal) and \
            same(a.tangent, b.tangent)
    if isinstance(a, BatchTracer) and isinstance(b, BatchTracer):
        return a._level == b._level and same(a.value, b.value)
    return False


class Capture(Tracer):
    """A value of one run of a checkpointed function (see the module's docstring)."""

    __slots__ = ("value", "_level", "_run", "_made_by")
    _batched = False

    def __init__(self, value, run, made_by=None):
        self.value, self._run, self._level = value, run, run.level
        self._made_by = made_by  # the operation count that computed it (None: an input)

    def __repr__(self):
        return f"Capture({self.value!r}, level={self._level})"

    def _contents(self):
        return self.value

    @classmethod
    def _apply_primitive(cls, prim, args, kwargs):
        run = max((a for a in args if isinstance(a, cls)), key=lambda a: a._level)._run
        values = [a.value if isinstance(a, cls) and a._run is run else
                  run.stand_in(a) if run.met_as_closed(a) else a for a in args]
        n, run.count = run.count, run.count + 1
        kept = run.kept.get(n)
        if run.replay and kept is not None and not isinstance(raw(kept), Box) and \
                prim.replayable and run.shapes.get(n) == [shape_of(v) for v in values]:
            ans = Replayed(prim, raw(kept))(*values, **kwargs)
        else:
            ans = prim(*values, **kwargs)
        if not run.replay and run.policy is not None:
            run.shapes[n] = [shape_of(v) for v in values]
        if not run.replay and run.policy is not None and run.policy(prim, *values, **kwargs):
            if prim.name == checkpoint_policies.NAME_PRIMITIVE:  # keep what computed it
                made_by = args[0]._made_by if isinstance(args[0], cls) else None
                if made_by is not None:
                    run.kept[made_by] = values[0]
                    run.named[made_by] = kwargs.get("name")
            else:
                run.kept[n] = ans
        if not isinstance(ans, Box) and np.result_type(ans).kind not in "fc":
            return ans  # integers, booleans: no derivative, nothing to keep apart
        return cls(ans, run, n)


class Replayed(Primitive):
    """An operation whose result was kept: the operation's rules, and a forward that
    hands back the kept result instead of computing it."""

    def __init__(self, prim, value):
        self.__dict__.update(prim.__dict__)
        self.forward = lambda *args, **kwargs: value
        self.pullback = prim.pullback  # (a fused operation's shared pullback too)
        self.joint_jvp = prim.joint_jvp
        self.batching = None  # never batched: kept values under vmap are not reused


def capture_run(f, who, inputs, closed=None, policy=None, kept=None, shapes=None,
                lift=None, arrays=None):
    """f on ``inputs`` at a fresh capture level: its output leaves (unwrapped) and the
    run (what it met and kept). In a first run (no ``closed``), ``lift`` turns each
    closed-over value into what f computes with (``lifted``: without the levels that
    record). With ``arrays`` (a test of such a value), a value of a registered array type
    (cr.jit's traced array) that passes it is met as a closed-over value too."""
    run = Run(who, policy, closed, kept, shapes, lift, arrays)
    out = f([Capture(x, run) for x in inputs])
    leaves, treedef = tree_flatten(out)
    # (an output that is a value closed over and returned as it is: an input too)
    return [x.value if isinstance(x, Capture) and x._run is run else
            run.stand_in(x) if run.met_as_closed(x) else x for x in leaves], treedef, run

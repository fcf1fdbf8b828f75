"""What the transforms' traced values share: an array's surface, and no way out.

While ``grad`` or ``jvp`` runs a function, the function sees tracers where its inputs
were: ``ReverseTracer`` (reverse mode, ``reverse.py``) and ``JVPTracer`` (forward mode,
``forward.py``). Both stand for a number or an array, so they answer ``shape``,
``dtype``, ``len`` and comparisons as it would, and take every operator and method of a
Tensor (``ArrayMethods``).

What they refuse is turning into a plain number (``float(x)``, ``x.item()``,
``np.asarray(x)``): that number would carry no derivative, and whatever the function
computed from it would silently get none. Comparisons and truth values are allowed,
for ``if x > 0:``: they are piecewise constant, so they have no derivative to lose.
"""


import numpy as np

from ..origin import numpy_caller
from ..primitive import Box, raw, shape_of
from ..methods.array import ArrayMethods

__all__ = ["Tracer", "derivative_levels"]


def derivative_levels(value):
    """The levels whose derivatives ``value`` carries, at any depth: each transform's
    tracer, and 0 for a Tensor in a graph (a batch of cr.vmap carries none of its own).
    A user's function that closes over a value shows itself this way: what it computes
    carries a level its own inputs do not."""
    found = set()
    while isinstance(value, Box):
        if not value._batched and getattr(value, "requires_grad", True):
            found.add(value._level)
        value = value._contents()
    return found


class Tracer(ArrayMethods):
    """The base of the transforms' traced values: ``_level`` tells which transform."""

    __slots__ = ()
    __array_priority__ = 1000  # ndarray @ tracer calls tracer.__rmatmul__, as for Tensor

    level = property(lambda self: self._level, doc="The transform this value belongs to.")
    shape = property(lambda self: shape_of(self._contents()))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))
    dtype = property(lambda self: np.result_type(raw(self)))

    @property
    def data(self):
        return self._contents()

    @classmethod
    def _unwrap_top(cls, args, params=()):
        """An operation's arguments as the top level of this kind of tracer sees them:
        ``(level, values, positions)``, the highest level among ``args`` (and
        ``params``, which take part in choosing it), the arguments with that level's
        tracers replaced by what they carry, and their positions. An outer level's
        tracer, a Tensor or an array stays whole: the operation on ``values`` is handed
        on to it."""
        values, positions, level = list(args), [], -1
        for i, arg in enumerate(args):  # (one pass: the usual call has one level)
            if isinstance(arg, cls):
                if arg._level > level:
                    level, positions = arg._level, [i]
                elif arg._level == level:
                    positions.append(i)
        for param in params:
            if isinstance(param, cls) and param._level > level:
                level, positions = param._level, []
        for i in positions:
            values[i] = args[i]._contents()
        return level, values, positions

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # comparisons look at the numbers: they have no derivative
    def __lt__(self, other): return raw(self) < raw(other)
    def __le__(self, other): return raw(self) <= raw(other)
    def __gt__(self, other): return raw(self) > raw(other)
    def __ge__(self, other): return raw(self) >= raw(other)
    def __eq__(self, other): return raw(self) == raw(other)
    def __ne__(self, other): return raw(self) != raw(other)
    __hash__ = object.__hash__  # identity, as for any graph node

    def __bool__(self):
        return bool(raw(self))

    def _refuse(self, what):
        raise TypeError(
            f"{what} of a value a transform is differentiating (shape {self.shape}) would "
            f"be a plain number with no derivative, and everything computed from it "
            f"would silently get none; keep computing with it (cr.* operations), use "
            f"cr.where for a choice, or compare it (x > 0) for Python control flow")

    def __float__(self): self._refuse("float()")
    def __int__(self): self._refuse("int()")
    def __index__(self): self._refuse("using as an index")
    def __complex__(self): self._refuse("complex()")
    def item(self): self._refuse(".item()")
    def tolist(self): self._refuse(".tolist()")
    def numpy(self): self._refuse(".numpy()")

    def __array__(self, dtype=None, copy=None):
        self._refuse(_numpy_caller())


def _numpy_caller():
    """What asked for the array, in the user's words: ``np.vectorize.__call__()`` where
    the user called a NumPy function that converts its inputs, else ``np.asarray()``."""
    name = numpy_caller(3)
    if name is None:
        return "np.asarray()"
    return f"np.{name}() (which converts its input with np.asarray)"

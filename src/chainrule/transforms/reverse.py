"""Reverse mode for the transforms: values that record their own level's graph.

``grad``, ``vjp`` and ``jacrev`` draw a fresh *level* (the counter forward mode uses
too), wrap each input in a ``ReverseTracer`` of that level (``start``), and run the
function. An operation on tracers of several levels is handled by the highest: its
tracers are unwrapped, the operation runs on what they carry (which may be an outer
transform's tracer, a Tensor of the user's graph, or a plain array: then the call
recurses into that level, or is plain NumPy), and the result is wrapped again,
remembering its operands at this level. ``gradients`` then walks this level's graph
backwards with the tensor engine's backward loop (``backward.backward_pass``).

Why closures and nesting come out right. The rules run on what the tracers carry, so
the gradient is made of the outer levels' values: in
``grad(lambda x: x * grad(lambda y: x * y)(2.0))(1.0)`` the inner gradient ``x`` is
still the outer transform's tracer, which the outer transform differentiates like any
other value (the answer is 2x = 2). Nothing is cut off, and nothing is confused: the
inner walk only follows inner-level operands. This is HIPS autograd's scheme (boxes
with trace ids) and JAX's (a level per interpreter).
"""

import numpy as np

from ..graph import Roots, topological_order
from ..node import Node
from ..primitive import Box, call_unwrapped, objects_refused
from ..arrays import as_array, recorder, recorders_open
from ..backward import add_gradients, backward_pass
from ..saved import copied, copied_keywords, kept
from .tracer import Tracer

__all__ = ["ReverseTracer", "gradients"]


class ReverseTracer(Node, Tracer):
    """A value of one reverse-mode transform's graph: what it carries (``_data``), and,
    as a node (``node.Node``, the record a Tensor keeps too), the operation that made it
    and its operands at the same level, which the backward pass walks."""

    __slots__ = ("_data", "_level")

    @classmethod
    def start(cls, value, level):
        """An input of the transform at ``level``: a leaf of its graph (the user's own
        array is copied: its pullback, called later, computes at this point)."""
        value = kept(value)
        self = object.__new__(cls)
        self._data, self._level, self._prev = value, level, ()
        self._op = None
        return self

    def __repr__(self):
        return f"ReverseTracer({self._data!r}, level={self._level})"

    def _contents(self):
        return self._data

    @classmethod
    def _apply_primitive(cls, prim, args, kwargs):
        # Tracer._unwrap_top written out for this kind (no params), in one pass that
        # also collects the operands: the highest level's tracers, their positions, and
        # the arguments with each of them replaced by what it carries
        level, argnums, operands, unlocked = -1, [], [], []
        for i, arg in enumerate(args):
            if isinstance(arg, cls):
                if arg._level > level:
                    level, argnums, operands = arg._level, [i], [arg]
                elif arg._level == level:
                    argnums.append(i)
                    operands.append(arg)
            elif type(arg) is np.ndarray and arg.flags.writeable:
                # the user's own array (saved.user_arrays; a tracer's own array is the
                # transform's, never written): copied for the node, below
                unlocked.append(i)
        unwrapped = list(args)
        for i, arg in zip(argnums, operands):
            unwrapped[i] = arg._data
        vjps = prim.vjps
        for i in argnums:  # (the dict first: no method call in the usual case)
            if i not in vjps and not prim.differentiable(i):
                raise TypeError(f"{prim.name}: argument {i} is being differentiated, but "
                                f"the operation is not differentiable with respect to it")
        ans = call_unwrapped(prim, unwrapped, kwargs)  # may recurse into an outer level
        if not isinstance(ans, Box):
            if type(ans) is not np.ndarray:
                ans = as_array(ans)
            if ans.dtype.kind not in "fc":  # integers, booleans: no derivative
                if ans.dtype.hasobject:
                    raise objects_refused(prim.name)
                return ans
        if unlocked:
            args = copied(args, unwrapped, unlocked)
        node = object.__new__(cls)
        node._data, node._level = ans, level
        node._prev, node._op, node._args = tuple(operands), prim, args
        node._raw_args, node._grad_argnums = unwrapped, argnums
        node._kwargs = copied_keywords(kwargs) if kwargs else kwargs  # (a user's index)
        # nothing to check (a transform's values are never written), keep or name
        node._versions, node._retain, node._origin = (), False, None
        return node


def gradients(roots, seeds, starts, batch_shape=()):
    """The gradient of ``sum(seed * root)`` with respect to each start (None for a start
    the roots do not depend on). Seeds may carry ``batch_shape`` leading axes: a batch
    of cotangents pulled back in one pass (jacrev's rows)."""
    grads = {}
    for root, seed in zip(roots, seeds):
        previous = grads.get(id(root))
        grads[id(root)] = (root, seed if previous is None
                           else add_gradients(previous[1], seed),
                           False)
    order = topological_order(Roots(roots))[:-1]
    trace = recorder() if recorders_open[0] else None
    if trace is not None:  # cr.jit: the program's listing names this part
        previous = trace.mark("backward")
    arrived = backward_pass(grads, order, batch_shape=batch_shape)
    if trace is not None:
        trace.mark(previous)
    found = []
    for start in starts:  # what arrived, plus the seed of a start that is a root itself
        parts = [entry[1] for entry in (arrived.get(id(start)), grads.get(id(start)))
                 if entry is not None]
        found.append(None if not parts else parts[0] if len(parts) == 1
                     else add_gradients(parts[0], parts[1]))
    return found

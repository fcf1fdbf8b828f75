"""Forward mode: numbers that carry their tangent through every operation.

``jvp(f, primals, tangents)`` calls ``f`` on ``JVPTracer``s, pairs (primal, tangent).
Each Primitive called on a tracer computes its result from the primals and the result's
tangent from its JVP rules (``chainrule.rules``), in the same pass: the cost of one
evaluation of f, whatever the number of outputs.

Nested transforms and perturbation confusion. In
``jvp(lambda x: x * jvp(lambda y: x + y, (1.0,), (1.0,))[1], ...)`` the inner tangent
must not be mistaken for the outer one, though both flow through the same ``+``. So each
``jvp`` call draws a fresh *level* (a counter that only grows) and tags its tracers with
it. An operation on tracers of several levels works for the highest (innermost) level
only: those tracers are split into (primal, tangent); tracers of lower levels are left
whole inside the primals, so computing the primal result recurses into the outer
transform, which handles its own tangents the same way. Tangents of different
transforms never meet. (This is the scheme of JAX's autodidax: levels as tags.) Reverse
mode draws its levels from the same counter (``reverse.py``), so the two nest in any
order and depth: a primal here may be a reverse-mode tracer, and the other way round.
"""

import numpy as np

from .. import rules as ops
from ..primitive import call_unwrapped, ndim_of, objects_refused, raw, shape_of
from .tracer import Tracer

__all__ = ["JVPTracer", "tangent_of_result", "tangent_in_dtype"]


class JVPTracer(Tracer):
    """A primal value with its tangent, for one level of forward-mode differentiation."""

    __slots__ = ("primal", "tangent", "_level")

    def __init__(self, primal, tangent, level):
        self.primal, self.tangent, self._level = primal, tangent, level

    def __repr__(self):
        return f"JVPTracer(primal={self.primal!r}, tangent={self.tangent!r}, level={self.level})"

    def _contents(self):
        return self.primal

    @classmethod
    def _apply_primitive(cls, prim, args, kwargs):
        level, primals, positions = cls._unwrap_top(args)
        if prim.joint_jvp is not None:  # one rule for every tangent at once, which
            # gives the primal too (cr.custom_jvp's: transforms/custom_primitive.py)
            ans, tangent = prim.joint_jvp(primals, {argnum: args[argnum].tangent
                                                    for argnum in positions}, kwargs)
            return JVPTracer(ans, tangent, level)
        ans = call_unwrapped(prim, primals, kwargs)  # may recurse into an outer level
        if getattr(ans, "dtype", None) == object:
            raise objects_refused(prim.name)
        tangents = {argnum: args[argnum].tangent for argnum in positions}
        return JVPTracer(ans, tangent_of_result(prim, tangents, ans, primals, kwargs), level)


def tangent_of_result(prim, tangents, ans, args, kwargs):
    """The tangent of ``ans = prim(*args)`` given the tangents of some arguments
    ({argnum: tangent}): the sum of their JVP rules, broadcast to the result's shape.
    Tangents may carry leading batch axes (jacfwd's columns)."""
    tangent = None
    lead = ()
    for argnum, t in tangents.items():
        rule = prim.jvp(argnum)
        # (shape_of, not np.shape: a batch of vmap's answers at once, where NumPy's
        # function would go through its dispatch)
        t_shape = shape_of(t)
        lead = t_shape[:len(t_shape) - ndim_of(raw(args[argnum]))]  # batch axes
        if lead and not prim.batched:  # a user's rule: one row of the batch at a time
            rows = [_broadcast_like(rule(t[i], ans, *args, **kwargs), ans)
                    for i in np.ndindex(*lead)]
            contribution = ops.reshape(ops.stack(rows), lead + shape_of(raw(ans)))
        else:
            contribution = rule(t, ans, *args, **kwargs)
        tangent = contribution if tangent is None else tangent + contribution
    return _broadcast_like(tangent, ans, lead)


def _broadcast_like(tangent, ans, lead=()):
    """A tangent the shape of the result, behind its batch axes (a rule for a broadcast
    operand gives its own shape)."""
    shape = tuple(lead) + shape_of(raw(ans))
    if shape_of(tangent) == shape:
        return tangent
    return ops.broadcast_to(tangent, shape)


def tangent_in_dtype(tracer):
    """A result's tangent in its primal's dtype, as JAX's always is: complex where the
    primal is (a tangent that only real numbers reached, where the complex part does not
    move, is real), float32 where the primal is (a rule's factor, such as a maximum's
    1/2 at a tie or log(2) for 2 ** x, is a float64 number). Called once per result of
    jvp and jacfwd, not per operation; a complex tangent of a real primal stays as it is
    (its imaginary part is never dropped)."""
    dtype = np.result_type(raw(tracer.primal))
    found = np.result_type(raw(tracer.tangent))
    if found != dtype and dtype.kind in "fc" and not (dtype.kind == "f" and found.kind == "c"):
        return ops.astype(tracer.tangent, dtype)
    return tracer.tangent

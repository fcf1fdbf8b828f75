"""Forward mode: numbers that carry their tangent through every operation.

``jvp(f, primals, tangents)`` calls ``f`` on ``JVPTracer``s, pairs (primal, tangent).
Each Primitive called on a tracer computes its result from the primals and the result's
tangent from its JVP rules (``derivatives.py``), in the same pass: the cost of one
evaluation of f, whatever the number of outputs.

Nested transforms and perturbation confusion. In
``jvp(lambda x: x * jvp(lambda y: x + y, (1.0,), (1.0,))[1], ...)`` the inner tangent
must not be mistaken for the outer one, though both flow through the same ``+``. So each
``jvp`` call draws a fresh *level* (a counter that only grows) and tags its tracers with
it. An operation on tracers of several levels works for the highest (innermost) level
only: those tracers are split into (primal, tangent); tracers of lower levels are left
whole inside the primals, so computing the primal result recurses into the outer
transform, which handles its own tangents the same way. Tangents of different
transforms never meet. (This is the scheme of JAX's autodidax: levels as tags.)
"""

import itertools

import numpy as np

from .tensor import ArrayOperators, Tensor, Traced
from .value import Value

__all__ = ["JVPTracer", "new_level", "tangent_of_result"]

_levels = itertools.count(1)


def new_level():
    """A tag that no earlier transform used."""
    return next(_levels)


class JVPTracer(Traced, ArrayOperators):
    """A primal value with its tangent, for one level of forward-mode differentiation."""

    __slots__ = ("primal", "tangent", "level")
    __array_priority__ = 1000  # ndarray @ tracer calls tracer.__rmatmul__, as for Tensor

    def __init__(self, primal, tangent, level):
        self.primal, self.tangent, self.level = primal, tangent, level

    def __repr__(self):
        return f"JVPTracer(primal={self.primal!r}, tangent={self.tangent!r}, level={self.level})"

    @staticmethod
    def _apply_primitive(prim, args, kwargs):
        level = max(a.level for a in args if isinstance(a, JVPTracer))
        primals = [a.primal if isinstance(a, JVPTracer) and a.level == level else a
                   for a in args]
        ans = prim(*primals, **kwargs)  # may recurse into an outer level's tracers
        tangents = {argnum: arg.tangent for argnum, arg in enumerate(args)
                    if isinstance(arg, JVPTracer) and arg.level == level}
        return JVPTracer(ans, tangent_of_result(prim, tangents, ans, primals, kwargs), level)


    # the same surface as a Tensor, so that f can be written once for both
    shape = property(lambda self: np.shape(self.primal))
    ndim = property(lambda self: np.ndim(self.primal))
    size = property(lambda self: np.size(self.primal))
    dtype = property(lambda self: np.result_type(_innermost(self.primal)))

    @property
    def data(self):
        return self.primal

    def __len__(self):
        return len(self.primal)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # comparisons look at the primal: they have no derivative
    def __lt__(self, other): return _innermost(self) < _innermost(other)
    def __le__(self, other): return _innermost(self) <= _innermost(other)
    def __gt__(self, other): return _innermost(self) > _innermost(other)
    def __ge__(self, other): return _innermost(self) >= _innermost(other)



def tangent_of_result(prim, tangents, ans, args, kwargs):
    """The tangent of ``ans = prim(*args)`` given the tangents of some arguments
    ({argnum: tangent}): the sum of their JVP rules, broadcast to the result's shape.
    Tangents may carry leading batch axes (jacfwd's columns)."""
    tangent = None
    lead = ()
    for argnum, t in tangents.items():
        primal = args[argnum]
        lead = tuple(np.shape(t)[:np.ndim(t) - np.ndim(_innermost(primal))])  # batch axes
        if prim.broadcasts and lead and np.ndim(_innermost(primal)) < np.ndim(_innermost(ans)):
            # pad to the result's rank behind the batch axes, so they stay in front
            t = _ops.reshape(t, lead + (1,) * (np.ndim(_innermost(ans))
                                               - np.ndim(_innermost(primal)))
                             + np.shape(_innermost(primal)))
        rule = prim.jvps.get(argnum)
        if rule is None and prim.jvp_any is not None:
            rule = _bind(prim.jvp_any, argnum)
        elif rule is None:
            raise TypeError(f"jvp: the operation {prim.name} has no forward-mode rule "
                            f"for argument {argnum}; define one with .defjvp()")
        if lead and not prim.batch_safe:  # a user's rule: one row of the batch at a time
            rows = [_broadcast_like(rule(t[i], ans, *args, **kwargs), ans)
                    for i in np.ndindex(*lead)]
            contribution = _ops.reshape(_ops.stack(rows), lead + np.shape(_innermost(ans)))
        else:
            contribution = rule(t, ans, *args, **kwargs)
        tangent = contribution if tangent is None else tangent + contribution
    return _broadcast_like(tangent, ans, lead)


def _bind(rule_any, argnum):
    return lambda t, ans, *args, **kwargs: rule_any(argnum, t, ans, *args, **kwargs)


def _innermost(x):
    """The plain number or array under any number of tracers and Tensors."""
    while isinstance(x, JVPTracer):
        x = x.primal
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, Value):
        return x.data
    return x


def _broadcast_like(tangent, ans, lead=()):
    """A tangent the shape of the result, behind its batch axes (a rule for a broadcast
    operand gives its own shape)."""
    shape = tuple(lead) + np.shape(_innermost(ans))
    if np.shape(tangent) == shape:
        return tangent
    return _ops.broadcast_to(tangent, shape)


from . import derivatives as _ops  # noqa: E402


def _install_methods():
    from .derivatives import _METHODS, _as_method
    for name, function in _METHODS.items():
        if not hasattr(JVPTracer, name):
            setattr(JVPTracer, name, _as_method(function, name))


_install_methods()

"""autograd.extend: your own primitives, with autograd's way of giving their rules, and
your own vector spaces.

    @primitive
    def logsumexp(x): ...
    defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))

A VJP *maker* takes the result and the arguments and returns the function of the
gradient g; a JVP takes the tangent g, the result and the arguments. They become the
rules of a chainrule Primitive (``cr.primitive``), so they work in every transform.

A type of your own is differentiated once it has a ``VSpace`` (``VSpace.register``:
how its elements add, scale and start from zero) and a ``Box`` to be traced in
(``Box.register``); ``grad`` with respect to such a value is a vector of its space.
"""

from .core import (VSpace, defjvp, defjvp_argnum, defvjp, defvjp_argnum, def_linear,
                   vspace)
from .tracer import Box, notrace_primitive, primitive

__all__ = ["primitive", "defvjp", "defjvp", "defvjp_argnum", "defjvp_argnum", "def_linear",
           "notrace_primitive", "Box", "VSpace", "vspace"]

"""autograd.tracer: ``primitive``, ``notrace_primitive``, and ``isbox``/``getval`` to
ask whether a value is being differentiated and to see its plain numbers. chainrule's
traced values are all ``chainrule.Box`` (tracers, Tensors, Values); ``getval`` is
``chainrule.primitive.raw``.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.tracer import getval, isbox
    >>> grad(lambda x: x * getval(x) if isbox(x) else x)(3.0)   # getval(x) is a constant
    3.0
"""

from ...primitive import Box, raw
from .extend import notrace_primitive, primitive

__all__ = ["primitive", "notrace_primitive", "isbox", "getval", "Box"]


def isbox(x):
    """Whether x is a traced value (one some transform is differentiating)."""
    return isinstance(x, Box)


def getval(x):
    """The plain number or array inside a traced value (x itself if not traced)."""
    return raw(x)

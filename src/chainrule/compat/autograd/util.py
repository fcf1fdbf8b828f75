"""autograd.util: ``func``, the operation behind a method that ``@primitive`` made (to
give its rules), and ``subvals``/``subval``, a tuple with entries replaced."""

from .wrap_util import subvals

__all__ = ["func", "subvals", "subval"]


def func(f):
    """The operation (a Primitive) behind ``f``: ``func(Class.method)`` for a method made
    with ``@primitive``; read from its class, the method is the operation itself.

    >>> from chainrule.autograd import grad
    >>> from chainrule.autograd.extend import defvjp, primitive
    >>> class Scale:
    ...     @primitive
    ...     def twice(self, x):
    ...         return 2 * x
    >>> _ = defvjp(func(Scale.twice), None, lambda ans, s, x: lambda g: 2 * g)
    >>> grad(Scale().twice)(1.5)
    2.0
    """
    return f


def subval(args, position, value):
    """``args`` (a tuple) with the entry at ``position`` replaced by ``value``.

    >>> subval((1, 2, 3), 1, "b")
    (1, 'b', 3)
    """
    return subvals(args, [(position, value)])

"""autograd.misc.tracers: ``const_graph``, a function traced once and then replayed."""

import functools

from ....jit import jit

__all__ = ["const_graph"]


def const_graph(fun, *args, **kwargs):
    """``fun`` with the leading ``args`` and the ``kwargs`` fixed, traced at its first
    call and replayed after (``cr.jit``), as autograd's: its Python code runs once, so it
    must do the same operations whatever the values of the remaining arguments.

    >>> from chainrule.autograd.misc import const_graph
    >>> calls = []
    >>> def f(x, y):
    ...     calls.append(1)
    ...     return x * y + 1.0
    >>> g = const_graph(f, 2.0)
    >>> g(3.0), g(4.0), len(calls)
    (7.0, 9.0, 1)
    """
    return jit(functools.partial(fun, *args, **kwargs) if args or kwargs else fun)

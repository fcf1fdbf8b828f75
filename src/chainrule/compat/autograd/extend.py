"""autograd.extend: your own primitives, with autograd's way of giving their rules.

    @primitive
    def logsumexp(x): ...
    defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))

A VJP *maker* takes the result and the arguments and returns the function of the
gradient g; a JVP takes the tangent g, the result and the arguments. They become the
rules of a chainrule Primitive (``cr.primitive``), so they work in every transform.
"""

from ...primitive import Box, primitive

__all__ = ["primitive", "defvjp", "defjvp", "defvjp_argnum", "defjvp_argnum",
           "notrace_primitive", "Box"]


def defvjp(fun, *makers, argnums=None):
    """Reverse-mode rules for ``fun``'s arguments (0, 1, ... or ``argnums``): each
    ``maker(ans, *args, **kwargs)`` returns ``vjp(g)``; None: not differentiable."""
    positions = range(len(makers)) if argnums is None else argnums
    rules = [None] * (max(positions, default=-1) + 1)
    for position, maker in zip(positions, makers):
        if maker is not None:
            rules[position] = (lambda g, ans, *args, _maker=maker, **kwargs:
                               _maker(ans, *args, **kwargs)(g))
    return fun.defvjp(*rules)


def defjvp(fun, *jvps, argnums=None):
    """Forward-mode rules for ``fun``'s arguments: ``jvp(g, ans, *args, **kwargs)`` is
    the tangent of the result for the tangent g of that argument; None: not
    differentiable. ``"same"`` applies ``fun`` to the tangent (a linear function)."""
    positions = range(len(jvps)) if argnums is None else argnums
    rules = [None] * (max(positions, default=-1) + 1)
    for position, jvp in zip(positions, jvps):
        if jvp == "same":
            jvp = (lambda g, ans, *args, _at=position, **kwargs:
                   fun(*args[:_at], g, *args[_at + 1:], **kwargs))
        rules[position] = jvp
    return fun.defjvp(*rules)


def defvjp_argnum(fun, maker):
    """One reverse-mode rule for every argument: ``maker(argnum, ans, args, kwargs)``
    returns ``vjp(g)``."""
    count = fun.__wrapped__.__code__.co_argcount
    return fun.defvjp(*[(lambda g, ans, *args, _at=i, **kwargs: maker(_at, ans, args, kwargs)(g))
                        for i in range(count)])


def defjvp_argnum(fun, jvp):
    """One forward-mode rule for every argument: ``jvp(argnum, g, ans, args, kwargs)``."""
    count = fun.__wrapped__.__code__.co_argcount
    return fun.defjvp(*[(lambda g, ans, *args, _at=i, **kwargs: jvp(_at, g, ans, args, kwargs))
                        for i in range(count)])


def notrace_primitive(fun):
    """``fun`` run on the plain values inside any traced ones: a function whose result
    carries no derivative (a shape, an index, a random draw)."""
    from ...primitive import raw

    def plain(*args, **kwargs):
        return fun(*[raw(a) for a in args], **{k: raw(v) for k, v in kwargs.items()})
    plain.__name__, plain.__doc__ = fun.__name__, fun.__doc__
    return plain

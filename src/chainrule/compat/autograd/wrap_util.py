"""autograd.wrap_util: ``unary_to_nary``, the decorator autograd's operators are built
with, for writing operators of your own in autograd's style."""

import functools as _functools

__all__ = ["unary_to_nary", "subvals", "get_name"]


def subvals(args, replacements):
    """``args`` (a tuple) with the entries at the given positions replaced:
    ``replacements`` is an iterable of ``(position, value)`` pairs.

    >>> from chainrule.autograd.wrap_util import subvals
    >>> subvals((1, 2, 3), [(0, "a"), (2, "c")])
    ('a', 2, 'c')
    """
    args = list(args)
    for position, value in replacements:
        args[position] = value
    return tuple(args)


def get_name(fun):
    """A function's ``__name__`` (a chainrule Primitive's ``name``), or its ``repr``."""
    return getattr(fun, "__name__", None) or getattr(fun, "name", None) or repr(fun)


def unary_to_nary(unary_operator):
    """An operator written for a function of one argument, ``op(f, x, *extra)``, turned
    into autograd's form ``op(f, argnum=0, *extra)(*args, **kwargs)``: it acts on the
    argument ``argnum`` of a function of many (on the tuple of them for a tuple of
    positions), the others held fixed.

    >>> from chainrule.autograd.wrap_util import unary_to_nary
    >>> from chainrule.autograd.core import make_vjp
    >>> @unary_to_nary
    ... def my_grad(f, x):
    ...     vjp, _ = make_vjp(f, x)
    ...     return vjp(1.0)
    >>> my_grad(lambda a, b: a * b ** 2, 1)(3.0, 2.0)      # d/db at (3, 2)
    12.0
    """
    @_functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *op_args, **op_kwargs):
        @_functools.wraps(fun)
        def nary_f(*args, **kwargs):
            if isinstance(argnum, int):
                x = args[argnum]

                def unary_f(z):
                    return fun(*subvals(args, [(argnum, z)]), **kwargs)
            else:
                x = tuple(args[i] for i in argnum)

                def unary_f(z):
                    return fun(*subvals(args, zip(argnum, z)), **kwargs)
            unary_f.__name__ = get_name(fun)
            return unary_operator(unary_f, x, *op_args, **op_kwargs)
        return nary_f
    return nary_operator

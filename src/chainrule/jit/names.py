"""The names a program's listing shows for what a traced function reads: its
parameters' names for the arrays passed there (``x``, ``args[0]``), and the names of
the variables it reads besides (a closure's, the module's globals), for the tensors
they hold (``model.layers.0.weight``)."""

import inspect
import types

__all__ = ["argument_names", "variables", "unwrapped"]


def argument_names(fun, count):
    """The names of ``fun``'s first ``count`` positional parameters, as the listing shows
    the arrays passed there: ``x``, and ``args[0]`` for one that lands in ``*args``."""
    fun = unwrapped(fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return [f"arg{i}" for i in range(count)]
    names = list(code.co_varnames[:code.co_argcount])
    if inspect.ismethod(fun):
        names = names[1:]  # (self is bound already)
    rest = "arg"
    if code.co_flags & inspect.CO_VARARGS:
        rest = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
    return names + [f"{rest}[{i}]" for i in range(count - len(names))]


def variables(fun):
    """(name, value) of the variables ``fun`` reads besides its arguments, for the
    listing's names: its closure's, and the module's globals its code names."""
    fun = unwrapped(fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return []
    found = []
    for name, cell in zip(code.co_freevars, getattr(fun, "__closure__", None) or ()):
        try:
            found.append((name, cell.cell_contents))
        except ValueError:  # a variable not yet assigned
            pass
    namespace = getattr(fun, "__globals__", {})
    found.extend((name, namespace[name]) for name in global_names(code)
                 if name in namespace)
    return found


def global_names(code):
    """The names a function's code reads (its own and its comprehensions' and lambdas')."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(global_names(const))
    return names


def unwrapped(fun):
    """The function inside ``functools.wraps`` wrappers (a cr.jit of it, a decorator)."""
    for _ in range(100):  # (a wrapper that wraps itself ends the search)
        inner = getattr(fun, "__wrapped__", None)
        if inner is None:
            break
        fun = inner
    return fun

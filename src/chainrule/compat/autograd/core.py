"""autograd.core: the one-argument operators ``make_vjp(fun, x)`` and
``make_jvp(fun, x)``, ``vspace`` (the vector space a value lives in: its zeros, random
elements, inner product), ``VSpace`` (the base of a vector space of your own), and the
rule-giving names of ``autograd.extend``.

    >>> from chainrule.autograd.core import make_vjp, vspace
    >>> vjp, ans = make_vjp(lambda x: x ** 3, 2.0)
    >>> ans, vjp(1.0)
    (8.0, 12.0)
    >>> vspace({"w": np.ones(2), "b": 0.5}).zeros()
    {'w': array([0., 0.]), 'b': 0.0}

Numbers, arrays and trees of them are differentiated by chainrule's transforms; a
value of a type registered with ``VSpace.register`` (and ``Box.register``) by a trace
of its own (``user_space.py``). The vector spaces are in ``vspace.py``.
"""

import warnings

import numpy as _np

from ...primitive import Primitive, raw
from ...transforms import functional as _f
from ...transforms.pytrees import tree_map
from .tracer import Box, _Primitive
from .user_space import (has_user_spaces as _has_user_spaces,  # noqa: F401
                         in_user_space, user_jvp, user_value_and_grad, user_vjp)
from .vspace import VSpace, _undefined, vspace  # noqa: F401

__all__ = ["make_vjp", "make_jvp", "vspace", "VSpace", "primitive", "defvjp", "defjvp",
           "defvjp_argnum", "defjvp_argnum", "def_linear", "Box"]


def make_vjp(fun, x):
    """``(vjp, fun(x))``: fun at x, and the function taking a cotangent shaped like
    ``fun(x)`` to the vector-Jacobian product, shaped like x (x may be a tuple, list or
    dict of arrays, or a value of a registered vector space).

    >>> vjp, ans = make_vjp(lambda v: v * v, np.array([1.0, 2.0]))
    >>> vjp(np.ones(2))
    array([2., 4.])
    """
    if in_user_space((x,), 0):
        out, pullback = user_vjp(fun, (x,), {}, (0,))
        return (lambda g: pullback(g)[0]), out
    out, pullback = _f.vjp(_bools_as_constants(fun), x)
    return (lambda g: pullback(g)[0]), out


def make_jvp(fun, x):
    """``jvp(v) -> (fun(x), the derivative of fun at x along v)``, in forward mode.

    >>> from chainrule.autograd.core import make_jvp
    >>> make_jvp(lambda v: v ** 2, 3.0)(1.0)
    (9.0, 6.0)
    """
    if in_user_space((x,), 0):
        return lambda v: user_jvp(fun, (x,), {}, (0,), (v,))
    return lambda v: _f.jvp(fun, (x,), (v,))


def _bools_as_constants(fun):
    """``fun`` with a boolean result (a comparison) turned into floats: a constant,
    whose derivative autograd gives as zero."""
    def as_float(leaf):
        inner = raw(leaf)
        if getattr(inner, "dtype", None) == bool or isinstance(inner, bool):
            return _np.asarray(inner, dtype=float) if _np.ndim(inner) else float(inner)
        return leaf

    def constant_bools(*args, **kwargs):
        return tree_map(as_float, fun(*args, **kwargs))
    return constant_bools


# -------------------- rules of primitives, given as autograd gives them --------------------

class _PrimitiveWithDeprecations(_Primitive):
    """What ``autograd.primitive`` (and ``autograd.core.primitive``) makes, as autograd
    does: the operation ``tracer.primitive`` makes, which also answers autograd's
    deprecated methods of a primitive, with its warning: ``f.defvjp(vjp, argnum)`` (``vjp(g, ans, vs,
    gvs, *args)``), ``f.defgrad(maker, argnum)`` (``maker(ans, *args)`` returns
    ``vjp(g)``) and ``f.defvjp_is_zero(argnums)``."""

    def defvjp(self, vjp, argnum=0):
        _deprecated("defvjp")
        def maker(ans, *args, **kwargs):
            return lambda g: vjp(g, ans, vspace(args[argnum]), vspace(g), *args, **kwargs)
        return self._one_rule(argnum, maker)

    def defgrad(self, maker, argnum=0):
        _deprecated("defgrad")
        return self._one_rule(argnum, maker)

    def defvjp_is_zero(self, argnums=(0,)):
        _deprecated("defvjp_is_zero")
        for argnum in argnums:
            self._one_rule(argnum, None)
        return self

    def _one_rule(self, argnum, maker):
        """Argument ``argnum``'s rule (autograd's maker; None: zero), the others kept."""
        rules = dict(getattr(self, "_makers", {}))
        rules[argnum] = maker
        self._makers = rules
        positions = sorted(rules)
        defvjp(self, *[rules[k] for k in positions], argnums=positions)
        return self


def _deprecated(method):
    warnings.warn(f"The {method} method is deprecated (as in autograd): use "
                  f"autograd.extend.defvjp(fun, maker, argnums=...)", DeprecationWarning,
                  stacklevel=3)


def primitive(fun):
    """``fun`` as an operation (``tracer.primitive``) that also takes autograd's
    deprecated ``f.defvjp``, ``f.defgrad`` and ``f.defvjp_is_zero``: what
    ``autograd.primitive`` and ``autograd.core.primitive`` make."""
    return _PrimitiveWithDeprecations(fun)


def defvjp(fun, *makers, argnums=None):
    """Reverse-mode rules for ``fun``'s arguments (0, 1, ... or ``argnums``): each
    ``maker(ans, *args, **kwargs)`` returns ``vjp(g)``; None: the gradient is zero
    there (autograd's meaning). An argument given no rule is not differentiable.

    >>> from chainrule.autograd import grad
    >>> @primitive
    ... def logsumexp(x):
    ...     return np.log(np.sum(np.exp(x)))
    >>> _ = defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    >>> grad(logsumexp)(np.zeros(2))
    array([0.5, 0.5])
    """
    positions = range(len(makers)) if argnums is None else argnums
    rules = [None] * (max(positions, default=-1) + 1)
    for position, maker in zip(positions, makers):
        if maker is None:
            rules[position] = (lambda g, ans, *args, _at=position, **kwargs:
                               vspace(args[_at]).zeros())
        else:
            rules[position] = (lambda g, ans, *args, _maker=maker, **kwargs:
                               _maker(ans, *args, **kwargs)(g))
    return Primitive.defvjp(fun, *rules)


def defjvp(fun, *jvps, argnums=None):
    """Forward-mode rules for ``fun``'s arguments: ``jvp(g, ans, *args, **kwargs)`` is
    the tangent of the result for the tangent g of that argument; None: the tangent is
    zero there (autograd's meaning). ``"same"`` applies ``fun`` to the tangent (a
    linear function)."""
    positions = range(len(jvps)) if argnums is None else argnums
    rules = [None] * (max(positions, default=-1) + 1)
    for position, jvp in zip(positions, jvps):
        if jvp == "same":
            jvp = (lambda g, ans, *args, _at=position, **kwargs:
                   fun(*args[:_at], g, *args[_at + 1:], **kwargs))
        elif jvp is None:
            jvp = lambda g, ans, *args, **kwargs: vspace(ans).zeros()  # noqa: E731
        rules[position] = jvp
    return Primitive.defjvp(fun, *rules)


def defvjp_argnum(fun, maker):
    """One reverse-mode rule for every argument: ``maker(argnum, ans, args, kwargs)``
    returns ``vjp(g)``."""
    count = fun.__wrapped__.__code__.co_argcount
    return Primitive.defvjp(fun, *[(lambda g, ans, *args, _at=i, **kwargs: maker(_at, ans, args, kwargs)(g))
                        for i in range(count)])


def defjvp_argnum(fun, jvp):
    """One forward-mode rule for every argument: ``jvp(argnum, g, ans, args, kwargs)``."""
    count = fun.__wrapped__.__code__.co_argcount
    return Primitive.defjvp(fun, *[(lambda g, ans, *args, _at=i, **kwargs: jvp(_at, g, ans, args, kwargs))
                        for i in range(count)])


def def_linear(fun):
    """Say that ``fun`` is linear in each argument: its forward-mode rule for an
    argument is ``fun`` itself applied to the tangent there."""
    count = fun.__wrapped__.__code__.co_argcount
    return defjvp(fun, *["same"] * count)

"""HIPS autograd's names and module paths, on chainrule: a program written for autograd
runs after ``autograd`` is replaced by ``chainrule.autograd`` in its imports.

    import chainrule.autograd.numpy as np        # was: import autograd.numpy as np
    from chainrule.autograd import grad          # was: from autograd import grad

    >>> import chainrule.autograd.numpy as anp
    >>> from chainrule.autograd import grad, elementwise_grad
    >>> grad(lambda x: anp.tanh(x) ** 2)(0.5)
    0.7268...
    >>> elementwise_grad(anp.sin)(anp.array([0.0, anp.pi]))
    array([ 1., -1.])

Thin: every derivative comes from chainrule's transforms and rules. ``argnum`` picks
the argument to differentiate, as in autograd (an int, or a tuple of ints). ``grad``,
``value_and_grad`` and ``make_vjp`` also take a value of a vector space of your own
(``extend.VSpace``), which a trace of its own differentiates (``core.user_vjp``).
"""

import inspect as _inspect

import numpy as _np

from ... import rules as _rules
from ...primitive import raw as _raw, shape_of as _shape_of
from ...transforms import functional as _f, jacobians as _jac
from . import builtins
from .builtins import dict, isinstance, list, tuple, type  # noqa: A004
from .core import (_bools_as_constants, in_user_space as _in_user_space,
                   user_value_and_grad as _user_value_and_grad, user_vjp as _user_vjp)
from .tracer import primitive
from .wrap_util import get_name as _get_name

__all__ = ["grad", "elementwise_grad", "deriv", "jacobian", "hessian", "make_vjp",
           "make_jvp", "value_and_grad", "grad_and_aux", "grad_named", "multigrad_dict",
           "hessian_tensor_product", "hessian_vector_product", "make_hvp", "make_ggnvp",
           "vector_jacobian_product", "tensor_jacobian_product", "checkpoint", "primitive",
           "builtins", "dict", "isinstance", "list", "tuple", "type"]


def _named(operator, fun, argnum):
    """The function an operator returns, named as autograd names it
    (``grad_of_f_wrt_argnum_0``), with a line saying what it computes."""
    def name(function):
        function.__name__ = f"{operator}_of_{_get_name(fun)}_wrt_argnum_{argnum}"
        function.__doc__ = (f"    {operator} of function {_get_name(fun)} with respect to "
                            f"its argument {argnum}; called with {_get_name(fun)}'s "
                            f"arguments.\n")
        return function
    return name


def grad(fun, argnum=0):
    """The gradient of a scalar function of argument ``argnum``: ``grad(f)(x)``."""
    engine = _f.grad(fun, argnums=argnum)

    @_named("grad", fun, argnum)
    def gradient(*args, **kwargs):
        if _in_user_space(args, argnum):
            return _user_value_and_grad(fun, argnum, args, kwargs)[1]
        return engine(*args, **kwargs)
    return gradient


def value_and_grad(fun, argnum=0):
    """``(f(x), grad(f)(x))`` from one pass."""
    engine = _f.value_and_grad(fun, argnums=argnum)

    @_named("value_and_grad", fun, argnum)
    def value_and_gradient(*args, **kwargs):
        if _in_user_space(args, argnum):
            return _user_value_and_grad(fun, argnum, args, kwargs)
        return engine(*args, **kwargs)
    return value_and_gradient


def grad_and_aux(fun, argnum=0):
    """For ``fun`` returning ``(value, aux)``: ``(grad of value, aux)``."""
    return _named("grad_and_aux", fun, argnum)(_f.grad(fun, argnums=argnum, has_aux=True))


def elementwise_grad(fun, argnum=0):
    """The sum of the gradients of ``fun``'s outputs: the derivative of each entry for a
    function that works entry by entry (a vector-Jacobian product with ones)."""
    @_named("elementwise_grad", fun, argnum)
    def gradient(*args, **kwargs):
        out, pullback = _f.vjp(lambda *a: fun(*a, **kwargs), *args)
        # ones shaped like the output, which may be an outer derivative's value
        cotangents = pullback(_np.ones(_shape_of(out), dtype=_ones_dtype(out)))
        return _pick(cotangents, argnum)
    return gradient


deriv = elementwise_grad


def _ones_dtype(out):
    dtype = _np.result_type(_raw(out))
    return dtype if dtype.kind in "fc" else _np.float64


def jacobian(fun, argnum=0):
    """The Jacobian, of shape ``out.shape + x.shape``."""
    return _named("jacobian", fun, argnum)(_jac.jacrev(fun, argnums=argnum))


def hessian(fun, argnum=0):
    """The Hessian of a scalar function, of shape ``x.shape + x.shape``."""
    return _named("hessian", fun, argnum)(_jac.hessian(fun, argnums=argnum))


def make_vjp(fun, argnum=0):
    """``make_vjp(f)(x) -> (vjp, f(x))``, as autograd orders them."""
    @_named("make_vjp", fun, argnum)
    def maker(*args, **kwargs):
        if _in_user_space(args, argnum):
            positions = argnum if isinstance(argnum, tuple) else (argnum,)
            out, pullback = _user_vjp(fun, args, kwargs, positions)
            whole = isinstance(argnum, tuple)
            return (lambda g: pullback(g) if whole else pullback(g)[0]), out
        out, pullback = _f.vjp(lambda *a: _bools_as_constants(fun)(*a, **kwargs), *args)
        return (lambda g: _pick(pullback(g), argnum)), out
    return maker


def _of_one(fun, argnum, args, kwargs):
    """``fun`` as a function of its argument ``argnum`` alone, the others fixed."""
    def at(z):
        full = list(args)
        full[argnum] = z
        return fun(*full, **kwargs)
    return at


def make_jvp(fun, argnum=0):
    """``make_jvp(f)(x)(v) -> (f(x), the derivative of f at x along v)``."""
    def maker(*args, **kwargs):
        return lambda tangent: _f.jvp(_of_one(fun, argnum, args, kwargs), (args[argnum],),
                                      (tangent,))
    return maker


def tensor_jacobian_product(fun, argnum=0):
    """``tensor_jacobian_product(f)(x, v)``: ``v`` times the Jacobian of f at x, ``v``
    contracted with the leading ``v.ndim`` axes of f's output (all of them for a ``v``
    shaped like the output: a vector-Jacobian product)."""
    @_named("tensor_jacobian_product", fun, argnum)
    def product(*args, **kwargs):
        *args, tensor = args
        out, pullback = _f.vjp(_of_one(fun, argnum, args, kwargs), args[argnum])
        out_shape, lead = _np.shape(_raw(out)), _np.ndim(_raw(tensor))
        if _np.shape(_raw(tensor)) == out_shape:
            return pullback(tensor)[0]
        if _np.shape(_raw(tensor)) != out_shape[:lead]:
            raise ValueError(f"tensor_jacobian_product: a tensor of shape "
                             f"{_np.shape(_raw(tensor))} for an output of shape {out_shape}; "
                             f"expected the output's leading axes")

        def contracted(*a):
            return _rules.tensordot(tensor, fun(*a, **kwargs), axes=lead)
        return _jac.jacrev(contracted, argnums=argnum)(*args)
    return product


vector_jacobian_product = tensor_jacobian_product


def hessian_tensor_product(fun, argnum=0):
    """``hessian_tensor_product(f)(x, v)``: the Hessian of f at x contracted with v
    over all of v's axes (a Hessian-vector product for a vector)."""
    def product(*args, **kwargs):
        *args, tensor = args
        gradient = grad(fun, argnum)

        def along(*a):
            return _contract(gradient(*a, **kwargs), tensor)
        return grad(along, argnum)(*args)
    return product


hessian_vector_product = hessian_tensor_product


def make_hvp(fun, argnum=0):
    """``make_hvp(f)(x) -> (hvp, grad(f)(x))``: Hessian-vector products at one point."""
    return make_vjp(grad(fun, argnum), argnum)


def make_ggnvp(f, g=lambda x: 0.5 * _sum_of_squares(x), f_argnum=0):
    """``make_ggnvp(f, g)(x)(v)``: the generalized Gauss-Newton product J^T H_g J v of
    ``g(f(x))``, with J the Jacobian of f and H_g the Hessian of g at f(x)."""
    def maker(*args, **kwargs):
        f_of = _of_one(f, f_argnum, args, kwargs)
        f_vjp, f_x = make_vjp(f_of)(args[f_argnum])
        g_hvp, _ = make_hvp(g)(f_x)

        def ggnvp(v):
            _, f_jvp = make_jvp(f_of)(args[f_argnum])(v)
            return f_vjp(g_hvp(f_jvp))
        return ggnvp
    return maker


def grad_named(fun, argname):
    """The gradient in the argument called ``argname``."""
    position = list(_inspect.signature(fun).parameters).index(argname)
    return grad(fun, position)


def multigrad_dict(fun):
    """Every argument's gradient, in a dict by argument name."""
    names = list(_inspect.signature(fun).parameters)

    def gradients(*args, **kwargs):
        found = _f.grad(fun, argnums=tuple(range(len(args))))(*args, **kwargs)
        return {name: g for name, g in zip(names, found)}
    return gradients


def checkpoint(fun):
    """autograd recomputes ``fun``'s forward pass in the backward pass to save memory;
    the numbers are the same, and here ``fun`` itself is returned."""
    return fun


def _pick(cotangents, argnum):
    if isinstance(argnum, tuple):
        return tuple(cotangents[i] for i in argnum)
    return cotangents[argnum]


def _contract(a, b):
    return _rules.sum(a * b)


def _sum_of_squares(x):
    return _rules.sum(x * x, axis=-1)

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
the argument to differentiate, as in autograd (an int, or a tuple of ints). The
operators also take a value of a vector space of your own (``extend.VSpace``), which a
trace of its own differentiates (``core.user_vjp``, ``core.user_jvp``), built as
autograd builds them on its ``make_vjp`` and ``make_jvp``; ``hessian`` refuses one, as
autograd's does (``make_hvp`` and ``hessian_tensor_product`` take it).

PyTorch's ``torch.autograd.grad`` and ``torch.autograd.backward`` are here too, over
recorded tensors: ``grad`` given tensors in place of a function is PyTorch's
(``chainrule.api.torch_autograd``); and ``functional``, torch.autograd.functional.
"""

import builtins as _python  # isinstance below is autograd's, which looks through boxes
import inspect as _inspect
from typing import Any as _Any
import warnings as _warnings

import numpy as _np

from ... import rules as _rules
from ...api import torch_autograd as _torch_autograd
from .. import torch_autograd_functional as functional  # torch.autograd.functional
from ...api.torch_autograd import backward
from ...arguments import ObjectOperands as _ObjectOperands
from ...primitive import raw as _raw, shape_of as _shape_of
from ...transforms import functional as _f, jacobians as _jac
from . import builtins
from .builtins import dict, isinstance, list, tuple, type  # noqa: A004
from .core import (_bools_as_constants, _has_user_spaces, _undefined,
                   in_user_space as _in_user_space,
                   user_jvp as _user_jvp, user_value_and_grad as _user_value_and_grad,
                   user_vjp as _user_vjp, vspace as _vspace)
from .core import primitive
from .tracer import Box as _UserBox
from .wrap_util import get_name as _get_name

__all__ = ["grad", "holomorphic_grad", "elementwise_grad", "deriv", "jacobian", "hessian", "make_vjp",
           "make_jvp", "value_and_grad", "grad_and_aux", "grad_named", "multigrad_dict",
           "hessian_tensor_product", "hessian_vector_product", "make_hvp", "make_ggnvp",
           "vector_jacobian_product", "tensor_jacobian_product", "checkpoint", "primitive",
           "builtins", "dict", "isinstance", "list", "tuple", "type", "backward",
           "functional"]


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


def _engine_else_user_space(engine, user, args, kwargs):
    """``engine(*args, **kwargs)`` (chainrule's transforms); where the function makes a
    value of a vector space of your own from the arguments (a registered type, which
    those transforms cannot carry), ``user(...)``: the function run again in a trace of
    autograd's kind, which boxes every value (``core.user_vjp``)."""
    try:
        return engine(*args, **kwargs)
    except _ObjectOperands:
        if not _has_user_spaces():
            raise
        return user(*args, **kwargs)


def _scalars(result):
    """A result with each 0-d NumPy array a NumPy scalar, as autograd's results are
    where NumPy's arithmetic makes them (a gradient at a 0-d array, a scalar value);
    through tuples, lists and dicts; anything else (a traced value) as it is."""
    kind = _python.type(result)
    if kind is _np.ndarray:
        return result[()] if result.ndim == 0 and result.dtype != object else result
    if kind is _python.tuple or kind is _python.list:
        return kind(_scalars(x) for x in result)
    if kind is _python.dict:
        return {key: _scalars(x) for key, x in result.items()}
    return result


def _arrays(result):
    """A result with each number a 0-d NumPy array, as autograd's Jacobians are (reshaped
    to ``out.shape + x.shape``, which is () at a float); through tuples and lists."""
    kind = _python.type(result)
    if kind is _python.tuple or kind is _python.list:
        return kind(_arrays(x) for x in result)
    if kind is float or kind is complex or _python.isinstance(result, _np.generic):
        return _np.asarray(result)
    return result


def grad(fun: _Any, argnum: _Any = 0, *args: _Any, **kwargs: _Any) -> _Any:
    """The gradient of a scalar function of argument ``argnum``: ``grad(f)(x)``.

    Given tensors in place of a function, it is PyTorch's ``torch.autograd.grad``
    (``grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
    allow_unused=None, is_grads_batched=False, materialize_grads=False)``): the
    gradients of recorded outputs, one Tensor per input (``chainrule.api.torch_autograd``).
    """
    if not callable(fun) or args or kwargs:
        return _torch_autograd.grad(fun, argnum, *args, **kwargs)
    engine = _f.grad(fun, argnums=argnum)

    def user(*args, **kwargs):
        return _user_value_and_grad(fun, argnum, args, kwargs)[1]

    @_named("grad", fun, argnum)
    def gradient(*args, **kwargs):
        if _in_user_space(args, argnum):
            return user(*args, **kwargs)
        return _scalars(_engine_else_user_space(engine, user, args, kwargs))
    return gradient


def holomorphic_grad(fun, argnum=0):
    """The derivative f'(z) of a holomorphic function of a complex argument, as autograd
    computes it: the gradient of Re f, which for a holomorphic f is f'(z) (a warning
    where the argument is not complex)."""
    engine = grad(lambda *args, **kwargs: _rules.real(fun(*args, **kwargs)), argnum)

    @_named("holomorphic_grad", fun, argnum)
    def derivative(*args, **kwargs):
        positions = argnum if isinstance(argnum, tuple) else (argnum,)
        if not all(getattr(_vspace(args[i]), "iscomplex", False) for i in positions):
            _warnings.warn("holomorphic_grad: the input is not complex", stacklevel=2)
        return engine(*args, **kwargs)
    return derivative


def value_and_grad(fun, argnum=0):
    """``(f(x), grad(f)(x))`` from one pass."""
    engine = _f.value_and_grad(fun, argnums=argnum)

    def user(*args, **kwargs):
        return _user_value_and_grad(fun, argnum, args, kwargs)

    @_named("value_and_grad", fun, argnum)
    def value_and_gradient(*args, **kwargs):
        if _in_user_space(args, argnum):
            return user(*args, **kwargs)
        return _scalars(_engine_else_user_space(engine, user, args, kwargs))
    return value_and_gradient


def grad_and_aux(fun, argnum=0):
    """For ``fun`` returning ``(value, aux)``: ``(grad of value, aux)``."""
    engine = _f.grad(fun, argnums=argnum, has_aux=True)

    @_named("grad_and_aux", fun, argnum)
    def gradient_and_aux(*args, **kwargs):
        if not _in_user_space(args, argnum):
            return _scalars(engine(*args, **kwargs))
        kept = []

        def value(*boxed, **kw):  # aux as a value, without this trace's box
            out, aux = fun(*boxed, **kw)
            level = max((b._level for b in boxed if _python.isinstance(b, _UserBox)),
                        default=0)
            kept.append(aux._value if _python.isinstance(aux, _UserBox)
                        and aux._level == level else aux)
            return out
        return _user_value_and_grad(value, argnum, args, kwargs)[1], kept[0]
    return gradient_and_aux


def elementwise_grad(fun, argnum=0):
    """The sum of the gradients of ``fun``'s outputs: the derivative of each entry for a
    function that works entry by entry (a vector-Jacobian product with ones)."""
    @_named("elementwise_grad", fun, argnum)
    def gradient(*args, **kwargs):
        if _in_user_space(args, argnum):  # autograd's: the VJP of the result's ones()
            positions = argnum if isinstance(argnum, tuple) else (argnum,)
            out, pullback = _user_vjp(fun, args, kwargs, positions)
            grads = pullback(_vspace(out).ones())
            return grads if isinstance(argnum, tuple) else grads[0]
        positions = argnum if isinstance(argnum, tuple) else (argnum,)
        out, pullback = _f.vjp(_of_chosen(fun, positions, args, kwargs),
                               *[args[p] for p in positions])
        if _np.iscomplexobj(_raw(out)):  # (its ones() would be 1 + 1j: a sum of what?)
            raise TypeError(f"elementwise_grad: {_get_name(fun)} returns complex values "
                            f"(dtype {_np.result_type(_raw(out))}); as in autograd, only "
                            f"a real-output function has one (use jacobian or "
                            f"holomorphic_grad)")
        # ones shaped like the output, which may be an outer derivative's value
        cotangents = _scalars(pullback(_np.ones(_shape_of(out), dtype=_ones_dtype(out))))
        return cotangents if isinstance(argnum, tuple) else cotangents[0]
    return gradient


def deriv(fun, argnum=0):
    """The derivative along the argument's ``ones()``: for a function that works entry
    by entry, each entry's derivative (``elementwise_grad``, for numbers and arrays; in
    forward mode, as autograd's, for a value of a vector space of your own)."""
    reverse = elementwise_grad(fun, argnum)

    def derivative(*args, **kwargs):
        if _in_user_space(args, argnum):
            along = _vspace(args[argnum]).ones()
            return make_jvp(fun, argnum)(*args, **kwargs)(along)[1]
        return reverse(*args, **kwargs)
    derivative.__name__, derivative.__doc__ = reverse.__name__, reverse.__doc__
    return derivative


def _ones_dtype(out):
    dtype = _np.result_type(_raw(out))
    return dtype if dtype.kind in "fc" else _np.float64


def jacobian(fun, argnum=0):
    """The Jacobian, of shape ``out.shape + x.shape``. For a value x of a vector space of
    your own, as autograd's: the gradients for each element of the result's
    ``standard_basis()``, stacked as NumPy arrays (``np.asarray``: x's type defines
    ``__array__``) and shaped by the spaces' ``shape``."""
    engine = _jac.jacrev(fun, argnums=argnum)

    @_named("jacobian", fun, argnum)
    def jacobian_at(*args, **kwargs):
        if not _in_user_space(args, argnum):
            return _arrays(engine(*args, **kwargs))
        if isinstance(argnum, tuple):
            raise TypeError("jacobian: with respect to one value of a vector space of "
                            "your own at a time (an int argnum), as in autograd")
        out, pullback = _user_vjp(fun, args, kwargs, (argnum,))
        x = args[argnum]
        shape = _space_shape(out, "jacobian") + _space_shape(x, "jacobian")
        rows = [_as_array(pullback(e)[0], x) for e in _vspace(out).standard_basis()]
        return _np.reshape(_np.stack(rows), shape)
    return jacobian_at


def _space_shape(value, operation):
    """The ``shape`` of value's vector space; TypeError naming it where the space has
    none."""
    space = _vspace(value)
    shape = getattr(space, "shape", None)
    if shape is None:
        raise _undefined(space, "shape", f"{operation} (the Jacobian's shape is the "
                                         f"result's shape + the argument's)")
    return tuple(shape)


def _as_array(g, x):
    """A gradient as the NumPy array a Jacobian stacks; TypeError where its type gives
    none."""
    array = None if _python.isinstance(g, _UserBox) else _np.asarray(g)
    if array is None or array.dtype == object:
        name = type(x).__name__
        raise TypeError(f"jacobian: the gradient with respect to a {name} is a "
                        f"{type(g).__name__}, which NumPy cannot make an array of; define "
                        f"{name}.__array__ to stack them into a Jacobian")
    return array


def hessian(fun, argnum=0):
    """The Hessian of a scalar function, of shape ``x.shape + x.shape``. Not for a value
    of a vector space of your own: autograd's, ``jacobian(jacobian(f))``, stacks the
    inner Jacobian as a NumPy array, which is not an element of the space the outer one
    differentiates (autograd raises too); ``make_hvp`` and ``hessian_tensor_product``
    give its products."""
    engine = _jac.hessian(fun, argnums=argnum)

    @_named("hessian", fun, argnum)
    def hessian_at(*args, **kwargs):
        if _in_user_space(args, argnum):
            names = [type(args[i]).__name__ for i in (
                argnum if isinstance(argnum, tuple) else (argnum,)) if _in_user_space(args, i)]
            raise TypeError(f"hessian: not with respect to a {names[0]} (a vector space "
                            f"of your own), as in autograd, whose Jacobian of a Jacobian "
                            f"stacks the inner one as an array; use make_hvp or "
                            f"hessian_tensor_product")
        return _arrays(engine(*args, **kwargs))
    return hessian_at


def make_vjp(fun, argnum=0):
    """``make_vjp(f)(x) -> (vjp, f(x))``, as autograd orders them."""
    def user(*args, **kwargs):
        positions = argnum if isinstance(argnum, tuple) else (argnum,)
        out, pullback = _user_vjp(fun, args, kwargs, positions)
        whole = isinstance(argnum, tuple)
        return (lambda g: pullback(g) if whole else pullback(g)[0]), out

    def engine(*args, **kwargs):
        positions = argnum if isinstance(argnum, tuple) else (argnum,)
        out, pullback = _f.vjp(_of_chosen(_bools_as_constants(fun), positions, args, kwargs),
                               *[args[p] for p in positions])
        whole = isinstance(argnum, tuple)
        return (lambda g: _scalars(pullback(g) if whole else pullback(g)[0])), _scalars(out)

    @_named("make_vjp", fun, argnum)
    def maker(*args, **kwargs):
        if _in_user_space(args, argnum):
            return user(*args, **kwargs)
        return _engine_else_user_space(engine, user, args, kwargs)
    return maker


def _of_one(fun, argnum, args, kwargs):
    """``fun`` as a function of its argument ``argnum`` alone, the others fixed."""
    def at(z):
        full = list(args)
        full[argnum] = z
        return fun(*full, **kwargs)
    return at


def _of_chosen(fun, positions, args, kwargs):
    """``fun`` as a function of its arguments at ``positions``, the others fixed (as
    autograd differentiates: an argument not chosen is never traced, so an operation
    without a derivative may read it)."""
    def at(*chosen):
        full = list(args)
        for position, z in zip(positions, chosen):
            full[position] = z
        return fun(*full, **kwargs)
    return at


def make_jvp(fun, argnum=0):
    """``make_jvp(f)(x)(v) -> (f(x), the derivative of f at x along v)``."""
    def maker(*args, **kwargs):
        # any value of a user's space, differentiated or not: the tangents may pass
        # through it (a Vec times a traced float is a Vec's tangent)
        if _in_user_space(args, tuple(range(len(args)))):
            if isinstance(argnum, tuple):  # a tuple of tangents
                return lambda tangents: _user_jvp(fun, args, kwargs, argnum, tangents)
            return lambda tangent: _user_jvp(fun, args, kwargs, (argnum,), (tangent,))
        if isinstance(argnum, tuple):  # a tuple of tangents, one per argument
            return lambda tangents: _scalars(_f.jvp(_of_chosen(fun, argnum, args, kwargs),
                                                    tuple(args[p] for p in argnum),
                                                    tuple(tangents)))
        return lambda tangent: _scalars(_f.jvp(_of_one(fun, argnum, args, kwargs),
                                               (args[argnum],), (tangent,)))
    return maker


def tensor_jacobian_product(fun, argnum=0):
    """``tensor_jacobian_product(f)(x, v)``: ``v`` times the Jacobian of f at x, ``v``
    contracted with the leading ``v.ndim`` axes of f's output (all of them for a ``v``
    shaped like the output: a vector-Jacobian product)."""
    @_named("tensor_jacobian_product", fun, argnum)
    def product(*args, **kwargs):
        *args, tensor = args
        if _in_user_space(args, argnum):  # autograd's: the Jacobian of the contraction
            def contracted_user(*a):
                return _rules.tensordot(tensor, fun(*a, **kwargs), axes=_np.ndim(tensor))
            return jacobian(contracted_user, argnum)(*args)
        out, pullback = _f.vjp(_of_one(fun, argnum, args, kwargs), args[argnum])
        out_shape, lead = _np.shape(_raw(out)), _np.ndim(_raw(tensor))
        if _np.shape(_raw(tensor)) == out_shape:
            return _arrays(pullback(tensor)[0])
        if _np.shape(_raw(tensor)) != out_shape[:lead]:
            raise ValueError(f"tensor_jacobian_product: a tensor of shape "
                             f"{_np.shape(_raw(tensor))} for an output of shape {out_shape}; "
                             f"expected the output's leading axes")

        def contracted(*a):
            return _rules.tensordot(tensor, fun(*a, **kwargs), axes=lead)
        return _arrays(_jac.jacrev(contracted, argnums=argnum)(*args))
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


def _contract(a, b):
    """The sum of a * b; for a value of a vector space of your own, its inner product."""
    if _in_user_space((a,), 0):
        return _vspace(a).inner_prod(a, b)
    return _rules.sum(a * b)


def _sum_of_squares(x):
    return _rules.sum(x * x, axis=-1)

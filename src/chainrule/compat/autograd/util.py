"""autograd.util: ``func``, the operation behind a method that ``@primitive`` made (to
give its rules), ``subvals``/``subval``, a tuple with entries replaced, and the
deprecated ``quick_grad_check``."""

import warnings

from .wrap_util import subvals

__all__ = ["func", "subvals", "subval", "quick_grad_check"]


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


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=1e-4,
                     rtol=1e-4, atol=1e-6, rs=None):
    """Deprecated in autograd (use ``test_util.check_grads``), kept for its programs:
    ``check_grads`` of ``fun(arg0, *extra_args, **kwargs)`` in ``arg0``, reverse mode,
    first order (``verbose``, ``eps``, ``rtol``, ``atol`` and ``rs`` are ignored, as
    autograd ignores them)."""
    warnings.warn("quick_grad_check is deprecated (as in autograd): use "
                  "autograd.test_util.check_grads", DeprecationWarning, stacklevel=2)
    from .test_util import check_grads
    kwargs = {} if kwargs is None else kwargs
    check_grads(lambda x: fun(x, *extra_args, **kwargs), modes=["rev"], order=1)(arg0)

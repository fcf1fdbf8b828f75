"""NumPy's functions on Tensors: ``np.exp(t)``, ``np.sum(t)``, ``a % t``.

Tensors take part in NumPy's ``__array_ufunc__`` and ``__array_function__`` protocols
(as MyGrad's do), so that a NumPy function called on a Tensor never hands back an
array cut from the graph, which would drop a gradient without a word:

* a function chainrule has runs chainrule's differentiable operation (``np.exp(t)`` is
  ``cr.exp(t)``);
* a function whose result carries no derivative (a comparison, ``np.shape``,
  ``np.argmax``, ``np.isclose``) runs on the arrays and returns its plain result;
* any other function raises a TypeError that names it, if an argument is part of a
  graph (a Tensor that requires grad, or a transform's traced value); on Tensors
  outside any graph there is no gradient to lose, and it runs on their arrays.
"""

import numpy as np

from .. import rules as ops
from ..primitive import Box, raw
from ..tensor_data import foreign, users

__all__ = ["apply_ufunc", "apply_function", "full_like"]

# NumPy's function of the same name as each operation of the rule table (np.exp runs
# cr.exp, np.linalg.svd cr.svd), found in numpy and numpy.linalg: an operation added to
# the table is one NumPy understands on Tensors, with nothing to write here. What does
# not follow from the names is listed after.
def _same_names():
    found = {}
    for name in ops.__all__:
        for namespace in (np, np.linalg):
            function = getattr(namespace, name, None)
            if callable(function) and not isinstance(function, type):
                found[function] = getattr(ops, name)
    return found


TWINS = _same_names()
TWINS.update({
    np.amax: ops.max, np.amin: ops.min, np.positive: lambda x: x,
    np.linalg.norm: ops.linalg_norm,   # (cr.norm is the Tensor method's: a vector norm)
    np.linalg.multi_dot: ops.multi_dot,
})
if hasattr(np, "astype"):  # NumPy 2's np.astype(x, dtype), the method as a function
    TWINS[np.astype] = lambda x, dtype, /, *, copy=True, device=None: ops.astype(x, dtype)
if hasattr(np.linalg, "trace"):  # NumPy 2's array-API spellings: over the last two axes
    TWINS.update({
        np.linalg.trace: lambda x, offset=0, dtype=None: ops.trace(x, offset, -2, -1),
        np.linalg.diagonal: lambda x, offset=0: ops.diagonal(x, offset, -2, -1),
        np.linalg.vector_norm: ops.vector_norm, np.linalg.matrix_norm: ops.matrix_norm})

# ufuncs, called as f(*inputs); the rest, called as functions
UFUNCS = {f: op for f, op in TWINS.items() if isinstance(f, np.ufunc)}
FUNCTIONS = {f: op for f, op in TWINS.items() if not isinstance(f, np.ufunc)}
FUNCTIONS.update({getattr(np.fft, name): getattr(ops.fft, name)  # np.fft.fft(x)
                  for name in ops.fft.__all__ if not name.endswith("freq")})

# reductions of a ufunc, called as ufunc.reduce(x, axis=..., keepdims=...)
REDUCTIONS = {np.add: ops.sum, np.maximum: ops.max, np.minimum: ops.min,
              np.multiply: ops.prod}

# ufuncs that are piecewise constant (their derivative is 0 where it exists) or give
# booleans: the plain result is the right one
CONSTANT_UFUNCS = {np.less, np.less_equal, np.greater, np.greater_equal, np.equal,
                   np.not_equal, np.isfinite, np.isnan, np.isinf, np.signbit,
                   np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
                   np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
                   np.floor_divide}

# functions whose result carries no derivative: they run on the arrays
QUERIES = {np.shape, np.ndim, np.size, np.result_type, np.may_share_memory,
           np.shares_memory, np.isclose, np.allclose, np.array_equal, np.array_equiv,
           np.argmax, np.argmin, np.argsort, np.nonzero, np.count_nonzero, np.any,
           np.all, np.iscomplexobj, np.isrealobj, np.zeros_like, np.ones_like,
           np.empty_like, np.array2string, np.array_repr, np.array_str,
           np.searchsorted, np.can_cast, np.min_scalar_type, np.argpartition,
           np.flatnonzero, np.iscomplex, np.isreal}

# functions whose result's shape depends on the numbers (np.unique): on a Tensor they run
# chainrule's operation of the same name; a batch of cr.vmap asks each example apart
SHAPED_BY_DATA = {np.unique}


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """np.full_like: an array of ``a``'s shape (or ``shape``) and dtype (or ``dtype``)
    filled with ``fill_value``, which may carry a derivative."""
    plain = np.empty_like(raw(a), dtype=dtype, shape=shape)
    if plain.dtype.kind not in "fc":  # an integer or boolean fill: piecewise constant
        return np.full_like(plain, raw(fill_value))
    return ops.broadcast_to(ops.astype(fill_value, plain.dtype), plain.shape)


# Functions written here because one of their arguments may carry a derivative where
# NumPy's would drop it (np.full_like's fill value).
OWN = {np.full_like: full_like}


def apply_ufunc(ufunc, method, inputs, kwargs, make):
    """What ``ufunc.method(*inputs, **kwargs)`` gives when a Tensor is among them;
    ``make`` turns a plain result array into a Tensor outside any graph."""
    name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    if method == "__call__" and not kwargs and ufunc in UFUNCS:
        return UFUNCS[ufunc](*inputs)
    if method == "reduce" and ufunc in REDUCTIONS and set(kwargs) <= {"axis", "keepdims"}:
        axis = kwargs.get("axis", 0)
        return REDUCTIONS[ufunc](inputs[0], axis=axis, keepdims=kwargs.get("keepdims", False))
    if (method == "__call__" and ufunc in CONSTANT_UFUNCS and "out" not in kwargs) \
            or not _in_a_graph(inputs, kwargs):
        result = getattr(ufunc, method)(*_arrays(inputs), **_arrays(kwargs))
        return _handed_back(result, make, plain="out" in kwargs)
    raise TypeError(_refusal(name, kwargs))


def apply_function(func, args, kwargs, make):
    """What ``func(*args, **kwargs)`` gives when a Tensor is among the arguments."""
    module = getattr(func, "__module__", None) or ""
    name = ("np.linalg." if "linalg" in module else "np.fft." if "fft" in module
            else "np.") + func.__name__
    if func in OWN:
        return OWN[func](*args, **kwargs)
    if func in FUNCTIONS:
        try:
            return FUNCTIONS[func](*args, **kwargs)
        except TypeError:  # an argument NumPy has and chainrule's operation has not
            if _in_a_graph(args, kwargs):
                raise TypeError(_refusal(name, kwargs)) from None
    if func in QUERIES or not _in_a_graph(args, kwargs):
        result = func(*_arrays(args), **_arrays(kwargs))
        return _handed_back(result, make, plain=func in QUERIES)
    raise TypeError(_refusal(name, kwargs))


def _handed_back(result, make, plain):
    """A NumPy function's result on Tensors' arrays, as the user gets it: an array a
    Tensor outside any graph (``make``), or as it is where ``plain`` (a query's answer,
    an ``out=`` array); another library's array is that library's own, never the
    wrapper chainrule computes with (in a tuple too: np.nonzero)."""
    if type(result) is np.ndarray or foreign(result):
        return users(result) if plain else make(result)
    if type(result) is tuple or type(result) is list:
        return type(result)(users(r) for r in result)
    return result


def _refusal(name, kwargs):
    if name == "np.copyto":  # what NumPy's full and full_like call with the fill value
        return ("np.copyto (which np.full and np.full_like call) of a value a gradient "
                "flows through into a plain array would drop the gradient; use "
                "chainrule.numpy's full or full_like, or cr.broadcast_to")
    given = f" with {', '.join(sorted(kwargs))}" if kwargs else ""
    return (f"{name}{given} on a Tensor that is part of a graph: chainrule has no "
            f"differentiable version of it, and NumPy's would drop the gradient; use "
            f"chainrule's operations (cr.*), or call .detach() first if no gradient "
            f"should flow through it")


def _in_a_graph(args, kwargs):
    """Whether any argument (in nested lists, tuples and dicts) is a traced value or a
    Tensor that requires grad."""
    stack = [args, kwargs]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, Box) and (item._level != 0 or item.requires_grad):
            return True  # a tracer, a Value, or a Tensor that requires grad
    return False


def _arrays(tree):
    """The same arguments with every Tensor replaced by its array."""
    if isinstance(tree, (list, tuple)):
        return type(tree)(_arrays(item) for item in tree)
    if isinstance(tree, dict):
        return {key: _arrays(item) for key, item in tree.items()}
    return raw(tree) if isinstance(tree, Box) else tree

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

from . import rules as ops
from .primitive import Box, raw

__all__ = ["apply_ufunc", "apply_function"]

# ufuncs, called as f(*inputs)
UFUNCS = {
    np.add: ops.add, np.subtract: ops.subtract, np.multiply: ops.multiply,
    np.true_divide: ops.divide, np.negative: ops.negative, np.power: ops.power,
    np.exp: ops.exp, np.log: ops.log, np.log1p: ops.log1p, np.sqrt: ops.sqrt,
    np.sin: ops.sin, np.cos: ops.cos, np.tan: ops.tan, np.tanh: ops.tanh,
    np.arctan: ops.arctan, np.absolute: ops.absolute, np.sign: ops.sign,
    np.maximum: ops.maximum, np.minimum: ops.minimum, np.matmul: ops.matmul,
    np.remainder: ops.remainder, np.positive: lambda x: x,
    np.arcsin: ops.arcsin, np.arccos: ops.arccos, np.arctan2: ops.arctan2,
    np.hypot: ops.hypot, np.sinh: ops.sinh, np.cosh: ops.cosh, np.arcsinh: ops.arcsinh,
    np.arccosh: ops.arccosh, np.arctanh: ops.arctanh, np.expm1: ops.expm1,
    np.log2: ops.log2, np.log10: ops.log10, np.exp2: ops.exp2, np.logaddexp: ops.logaddexp,
    np.logaddexp2: ops.logaddexp2, np.square: ops.square, np.reciprocal: ops.reciprocal,
    np.deg2rad: ops.deg2rad, np.rad2deg: ops.rad2deg, np.radians: ops.deg2rad,
    np.degrees: ops.rad2deg, np.fabs: ops.fabs, np.fmax: ops.fmax, np.fmin: ops.fmin,
    np.fmod: ops.fmod, np.floor: ops.floor, np.ceil: ops.ceil, np.trunc: ops.trunc,
    np.rint: ops.rint, np.conjugate: ops.conj,
}

# reductions of a ufunc, called as ufunc.reduce(x, axis=..., keepdims=...)
REDUCTIONS = {np.add: ops.sum, np.maximum: ops.max, np.minimum: ops.min,
              np.multiply: ops.prod}

# ufuncs that are piecewise constant (their derivative is 0 where it exists) or give
# booleans: the plain result is the right one
CONSTANT_UFUNCS = {np.less, np.less_equal, np.greater, np.greater_equal, np.equal,
                   np.not_equal, np.isfinite, np.isnan, np.isinf, np.signbit,
                   np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
                   np.floor_divide}

# functions of the array API, with chainrule's arguments as NumPy names them
FUNCTIONS = {
    np.sum: ops.sum, np.mean: ops.mean, np.max: ops.max, np.min: ops.min,
    np.amax: ops.max, np.amin: ops.min, np.prod: ops.prod, np.var: ops.var,
    np.std: ops.std, np.reshape: ops.reshape, np.transpose: ops.transpose,
    np.swapaxes: ops.swapaxes, np.broadcast_to: ops.broadcast_to,
    np.squeeze: ops.squeeze, np.expand_dims: ops.expand_dims,
    np.concatenate: ops.concatenate, np.stack: ops.stack, np.split: ops.split,
    np.where: ops.where, np.clip: ops.clip, np.dot: ops.dot, np.outer: ops.outer,
    np.sinc: ops.sinc, np.round: ops.round, np.around: ops.round, np.fix: ops.trunc,
    np.nan_to_num: ops.nan_to_num, np.real: ops.real, np.imag: ops.imag, np.conj: ops.conj,
}


# cumulative operations, ordering, assembly and statistics: the same names
FUNCTIONS.update({getattr(np, name): getattr(ops, name) for name in (
    "cumsum", "cumprod", "diff", "sort", "partition", "take", "take_along_axis", "flip",
    "fliplr", "flipud", "rot90", "moveaxis", "rollaxis", "roll", "tile", "repeat", "pad",
    "tril", "triu", "diagonal", "diag", "atleast_1d", "atleast_2d", "atleast_3d",
    "hstack", "vstack", "dstack", "column_stack", "array_split", "hsplit", "vsplit",
    "dsplit", "ravel", "append", "select", "average", "quantile", "percentile", "median",
    "cov", "corrcoef")})

# numpy.linalg and the contractions (rules.decompositions, .matrix_functions,
# .contractions)
LINALG_FUNCTIONS = {
    np.linalg.inv: ops.inv, np.linalg.det: ops.det, np.linalg.slogdet: ops.slogdet,
    np.linalg.solve: ops.solve, np.linalg.cholesky: ops.cholesky, np.linalg.eigh: ops.eigh,
    np.linalg.eigvalsh: ops.eigvalsh, np.linalg.svd: ops.svd, np.linalg.qr: ops.qr,
    np.linalg.pinv: ops.pinv, np.linalg.matrix_power: ops.matrix_power,
    np.linalg.lstsq: ops.lstsq, np.linalg.norm: ops.linalg_norm, np.trace: ops.trace,
    np.einsum: ops.einsum, np.tensordot: ops.tensordot, np.inner: ops.inner,
    np.kron: ops.kron, np.vdot: ops.vdot, np.cross: ops.cross,
    np.linalg.multi_dot: ops.multi_dot,
}
if hasattr(np.linalg, "svdvals"):  # NumPy 2's array-API spellings in numpy.linalg
    LINALG_FUNCTIONS.update({
        np.linalg.svdvals: ops.svdvals, np.linalg.tensordot: ops.tensordot,
        np.linalg.cross: ops.cross, np.linalg.matmul: ops.matmul, np.linalg.outer: ops.outer,
        np.linalg.trace: lambda x, offset=0, dtype=None: ops.trace(x, offset, -2, -1),
        np.linalg.vector_norm: ops.vector_norm, np.linalg.matrix_norm: ops.matrix_norm})
FUNCTIONS.update(LINALG_FUNCTIONS)

# functions whose result carries no derivative: they run on the arrays
QUERIES = {np.shape, np.ndim, np.size, np.result_type, np.may_share_memory,
           np.shares_memory, np.isclose, np.allclose, np.array_equal, np.array_equiv,
           np.argmax, np.argmin, np.argsort, np.nonzero, np.count_nonzero, np.any,
           np.all, np.iscomplexobj, np.isrealobj, np.zeros_like, np.ones_like,
           np.empty_like, np.full_like, np.array2string, np.array_repr, np.array_str,
           np.unique, np.searchsorted, np.copyto, np.can_cast,
           np.min_scalar_type, np.argpartition, np.flatnonzero}


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
        return make(result) if isinstance(result, np.ndarray) and "out" not in kwargs \
            else result
    raise TypeError(_refusal(name, kwargs))


def apply_function(func, args, kwargs, make):
    """What ``func(*args, **kwargs)`` gives when a Tensor is among the arguments."""
    module = getattr(func, "__module__", None) or ""
    name = ("np.linalg." if "linalg" in module else "np.fft." if "fft" in module
            else "np.") + func.__name__
    if func in FUNCTIONS:
        try:
            return FUNCTIONS[func](*args, **kwargs)
        except TypeError:  # an argument NumPy has and chainrule's operation has not
            if _in_a_graph(args, kwargs):
                raise TypeError(_refusal(name, kwargs)) from None
    if func in QUERIES or not _in_a_graph(args, kwargs):
        result = func(*_arrays(args), **_arrays(kwargs))
        return make(result) if isinstance(result, np.ndarray) and func not in QUERIES \
            else result
    raise TypeError(_refusal(name, kwargs))


def _refusal(name, kwargs):
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

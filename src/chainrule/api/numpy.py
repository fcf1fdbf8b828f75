"""NumPy's namespace with chainrule's differentiable functions: code written for
``autograd.numpy`` or ``jax.numpy`` ports by changing its import.

>>> import chainrule.numpy as cnp
>>> cr.grad(lambda x: cnp.sum(cnp.sin(x) ** 2))(np.array([0.5, 1.0])).round(6).tolist()
[0.841471, 0.909297]

Every function chainrule differentiates is here under NumPy's name (``cnp.exp``,
``cnp.cumsum``, ``cnp.linalg.solve``...), with NumPy's arguments. The rest of NumPy's
namespace (dtypes, constants such as ``pi``, and the functions chainrule has no
derivative for) is NumPy's own: called on plain arrays they compute as NumPy does, and
called on a value some gradient flows through they raise a TypeError that names the
function, rather than cut the gradient off.

``array`` and ``asarray`` build an array from numbers, or, from a list that holds traced
values or Tensors, their differentiable stack (as ``autograd.numpy.array`` does).
"""

import builtins as _builtins

import numpy as _np

from ..methods import numpy_protocol as _numpy_protocol
from .. import arrays as _xp
from .. import rules as _rules
from ..rules import fft as _fft
from ..primitive import Box as _Box, raw as _raw
from .creation import tensor as _tensor
from ..methods.array import holds_box

# The operations and the predicates, spelt out because type checkers read only literal lists
__all__ = [  # written by scripts/make_exports.py: the operations
    # elementwise
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "log1p",
    "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "relu", "leaky_relu", "absolute",
    "sign", "clip", "softplus", "maximum", "minimum", "where", "gelu", "silu", "arctan",
    "remainder",
    # elementary
    "arcsin", "arccos", "arctan2", "hypot", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
    "expm1", "log2", "log10", "exp2", "logaddexp", "logaddexp2", "square", "logit",
    "reciprocal", "sinc", "deg2rad", "rad2deg", "radians", "degrees", "fabs", "fmax",
    "fmin", "mod", "fmod", "floor", "ceil", "round", "around", "rint", "trunc", "fix",
    "nan_to_num", "elu", "stop_gradient",
    # reductions
    "sum", "mean", "max", "min", "prod", "var", "std", "logsumexp", "softmax",
    "log_softmax", "norm", "trapezoid", "ptp", "nansum", "nanmean", "nanmax", "nanmin",
    # linalg
    "matmul", "dot", "outer",
    # shapes
    "reshape", "transpose", "permute", "swapaxes", "broadcast_to", "expand", "squeeze",
    "expand_dims", "unsqueeze", "flatten", "moveaxis",
    # joining
    "concatenate", "stack", "split",
    # ordering
    "cumsum", "cumprod", "diff", "sort", "topk", "partition", "unique", "take",
    "take_along_axis", "interp",
    # assembly
    "flip", "fliplr", "flipud", "rot90", "rollaxis", "roll", "tile", "repeat", "pad",
    "tril", "triu", "diagonal", "diag", "atleast_1d", "atleast_2d", "atleast_3d", "hstack",
    "vstack", "dstack", "column_stack", "array_split", "hsplit", "vsplit", "dsplit",
    "ravel", "append", "select",
    # statistics
    "average", "quantile", "percentile", "median", "cov", "corrcoef",
    # solves
    "inv", "solve", "solve_triangular",
    # determinants
    "det", "slogdet",
    # decompositions
    "cholesky", "eigh", "eigvalsh", "svd", "svdvals", "qr",
    # eigen
    "eig", "eigvals",
    # matrix_functions
    "pinv", "trace", "matrix_power", "lstsq",
    # contractions
    "einsum", "tensordot", "inner", "kron", "vdot", "cross", "convolve", "correlate",
    # complexes
    "real", "imag", "conj", "conjugate", "angle",
]
__all__ += [  # written by scripts/make_exports.py: the predicates
    # predicates
    "isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_not", "logical_xor",
    "all", "any", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
    "argmax", "argmin", "argsort", "searchsorted", "isclose", "allclose", "array_equal",
]
__all__ += ["abs", "array", "asarray", "full", "full_like", "linspace", "logspace",
            "geomspace", "r_", "c_", "row_stack", "gradient", "real_if_close"]

from ..rules import *  # noqa: E402,F401,F403
from ..rules.predicates import *  # noqa: E402,F401,F403

abs = absolute  # noqa: F405  (NumPy's name for it)


def array(obj, dtype=None):
    """``np.array``, except that a list holding traced values or Tensors becomes their
    differentiable stack (and a traced value or Tensor stays what it is).

    >>> import chainrule.numpy as cnp
    >>> cr.grad(lambda x: cnp.sum(cnp.array([x, 2 * x]) ** 2))(1.0)
    10.0
    """
    if isinstance(obj, _Box):
        return obj if dtype is None else obj.astype(dtype)
    if isinstance(obj, (list, tuple)) and holds_box(obj):
        return _tensor(list(obj), dtype=dtype)
    return _np.array(obj, dtype=dtype)


asarray = array


# ---------------------------------------------------------------------------------------
# Creation and assembly that take values a gradient flows through (a fill value, the ends
# of a range, the pieces of np.r_): NumPy's own would turn them into plain numbers.
# ---------------------------------------------------------------------------------------

def _traced(*values):
    return _builtins.any(isinstance(v, _Box) for v in values)  # (any is NumPy's here)


def full(shape, fill_value, dtype=None):
    """``np.full``, where the fill value may carry a derivative.

    >>> import chainrule.numpy as cnp
    >>> cr.grad(lambda x: cnp.sum(cnp.full((2, 3), x)))(1.5)
    6.0
    """
    # (a value cr.jit traces too: NumPy's would write it into an array made outside
    # the trace)
    if not _traced(fill_value) and not _xp.holds_traced((fill_value,)):
        return _np.full(shape, fill_value, dtype=dtype)
    shape = (shape,) if _np.ndim(shape) == 0 else tuple(shape)
    value = fill_value if dtype is None else _rules.astype(fill_value, _np.dtype(dtype))
    return _rules.broadcast_to(value, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    """``np.full_like``: the shape (and dtype) of ``a``, filled with a value that may carry
    a derivative.

    >>> import chainrule.numpy as cnp
    >>> cr.grad(lambda x: cnp.sum(cnp.full_like(np.zeros(4), x)))(1.5)
    4.0
    """
    if not _traced(fill_value) and not _xp.holds_traced((fill_value,)):
        return _np.full_like(a, fill_value, dtype=dtype, shape=shape)
    return _numpy_protocol.full_like(a, fill_value, dtype=dtype, shape=shape)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``np.linspace``, differentiable in ``start`` and ``stop``.

    >>> import chainrule.numpy as cnp
    >>> cr.grad(lambda b: cnp.sum(cnp.linspace(0.0, b, 5)))(1.0)     # 0 + 1/4 + ... + 1
    2.5
    """
    if not _traced(start, stop):
        return _np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    steps = _np.linspace(0.0, 1.0, num, endpoint)
    start, stop = asarray(start), asarray(stop)
    lead = _np.ndim(_raw(start + stop))
    steps = steps.reshape((-1,) + (1,) * lead)
    out = _rules.moveaxis(start + (stop - start) * steps, 0, axis) if lead else \
        start + (stop - start) * steps
    if dtype is not None:
        out = _rules.astype(out, _np.dtype(dtype))
    if retstep:
        return out, (stop - start) / _builtins.max(num - 1 if endpoint else num, 1)
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``np.logspace``: ``base ** linspace(start, stop)``, differentiable in the ends and
    the base."""
    if not _traced(start, stop, base):
        return _np.logspace(start, stop, num, endpoint, base, dtype, axis)
    return _rules.power(base, linspace(start, stop, num, endpoint, dtype=dtype, axis=axis))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``np.geomspace`` for positive ends: ``exp(linspace(log start, log stop))``, with
    the ends exact; differentiable in both."""
    if not _traced(start, stop):
        return _np.geomspace(start, stop, num, endpoint, dtype, axis)
    out = _rules.exp(linspace(_rules.log(start), _rules.log(stop), num, endpoint, axis=axis))
    return out if dtype is None else _rules.astype(out, _np.dtype(dtype))


class _Joiner:
    """``np.r_`` and ``np.c_``, where the pieces may carry derivatives."""

    def __init__(self, numpy_version, columns):
        self.numpy_version, self.columns = numpy_version, columns

    def __getitem__(self, items):
        items = items if isinstance(items, tuple) else (items,)
        if not _traced(*items) or _builtins.any(isinstance(item, str) for item in items):
            return self.numpy_version[items]
        pieces = [_np.r_[item] if isinstance(item, slice) else _rules.atleast_1d(item)
                  for item in items]
        if self.columns:
            pieces = [_rules.reshape(p, (-1, 1)) if _np.ndim(_raw(p)) == 1 else p
                      for p in pieces]
            return _rules.concatenate(pieces, axis=1)
        return _rules.concatenate(pieces, axis=0)


r_ = _Joiner(_np.r_, columns=False)
c_ = _Joiner(_np.c_, columns=True)


def row_stack(arrays):
    """``np.row_stack``, NumPy's older name for ``vstack``."""
    return _rules.vstack(arrays)


def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient`` with uniform spacings (numbers): central differences inside, one-
    sided ones at the ends, differentiable in ``f``.

    >>> import chainrule.numpy as cnp
    >>> cnp.gradient(np.array([1.0, 2.0, 4.0, 7.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    if not _traced(f, *varargs):
        return _np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    if edge_order != 1 or _builtins.any(_np.ndim(_raw(h)) for h in varargs):
        raise TypeError("gradient: chainrule differentiates np.gradient with "
                        "edge_order=1 and uniform spacings (numbers), not coordinates")
    ndim = _np.ndim(_raw(f))
    axes = tuple(range(ndim)) if axis is None else \
        tuple(a % ndim for a in ((axis,) if _np.ndim(axis) == 0 else axis))
    spacings = list(varargs) if len(varargs) > 1 else [varargs[0] if varargs else 1.0] * len(axes)
    out = []
    for a, h in zip(axes, spacings):
        def part(lo, hi):
            index = [slice(None)] * ndim
            index[a] = slice(lo, hi)
            return f[tuple(index)]
        inner = (part(2, None) - part(None, -2)) / (2.0 * h)
        first = (part(1, 2) - part(0, 1)) / h
        last = (part(-1, None) - part(-2, -1)) / h
        out.append(_rules.concatenate([first, inner, last], axis=a))
    if len(out) == 1:
        return out[0]
    # the container NumPy itself returns: a list before NumPy 2, a tuple since
    return _GRADIENTS_IN(out)


_GRADIENTS_IN = type(_np.gradient(_np.zeros((2, 2))))


def real_if_close(a, tol=100):
    """``np.real_if_close``: real numbers are returned as they are."""
    return a if _traced(a) else _np.real_if_close(a, tol)


class _Linalg:
    """``numpy.linalg`` with chainrule's functions where it has them (``cr.linalg``),
    NumPy's own otherwise (which refuse traced values, naming the function)."""

    def __getattr__(self, name):
        from . import linalg
        return getattr(linalg, name) if name in linalg.__all__ else getattr(_np.linalg, name)

    def __dir__(self):
        return sorted(set(dir(_np.linalg)))


linalg = _Linalg()


class _FFT:
    """``numpy.fft``: chainrule's transforms (``chainrule.rules.fft``: every one,
    differentiable, complex numbers as JAX differentiates them), NumPy's for the rest."""

    def __getattr__(self, name):
        return getattr(_fft, name) if name in _fft.__all__ else getattr(_np.fft, name)

    def __dir__(self):
        return sorted(set(dir(_np.fft)))


fft = _FFT()


def __getattr__(name):
    """The rest of NumPy's namespace (constants, dtypes, submodules such as random)."""
    return getattr(_np, name)

"""NumPy's ufuncs on arrays of another library: ``np.exp(x)``, ``np.add(x, y)``, and
their methods ``reduce``, ``accumulate``, ``outer`` and ``at``.

A ufunc is the namespace's function of the same name or of the standard's name for it
(``absolute`` is ``abs``), else a shim; arithmetic on truth arrays and Python numbers
takes NumPy's dtypes (``numeric``). ``np.add.at`` and its kin scatter into the target
(``shims.scatter``), which combines repeated indices as NumPy does.
"""

from . import shims
from .indexing import _index, setitem
from .shims import unsupported

__all__ = ["ufunc", "numeric"]


# NumPy's ufunc names that the standard spells otherwise.
_UFUNC_NAMES = {"absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
                "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh",
                "arctan2": "atan2", "power": "pow", "true_divide": "divide",
                "rint": "round", "conjugate": "conj", "invert": "bitwise_invert",
                "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
                "fabs": "abs"}
_LOGICAL = frozenset({"logical_and", "logical_or", "logical_xor", "equal", "not_equal",
                      "bitwise_and", "bitwise_or", "bitwise_xor"})
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}


def ufunc(lib, function, method, inputs, kwargs):
    """``function`` (a NumPy ufunc) called by ``method`` ("__call__", "reduce", "at",
    ...) on ``inputs``, in ``lib``'s namespace."""
    name = function.__name__
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    for drop in ("casting", "order", "subok", "signature"):
        kwargs.pop(drop, None)
    if kwargs.get("where", True) is not True:
        raise unsupported(lib, f"{name} with where=", name)
    kwargs.pop("where", None)
    if method == "__call__":
        args = [lib.take(x, name) for x in inputs]
        if len(args) == 2 and name not in _LOGICAL:
            args = numeric(lib, *args, divide=name in ("divide", "true_divide"))
        result = _elementwise(lib, name)(*args)
    elif method == "reduce":
        result = _reduce(lib, name, lib.take(inputs[0], name), **kwargs)
    elif method == "accumulate":
        result = _accumulate(lib, name, lib.take(inputs[0], name), **kwargs)
    elif method == "at":
        if name not in ("add", "multiply", "minimum", "maximum"):
            raise unsupported(lib, f"{name}.at", f"{name}.at")
        target = inputs[0]
        value = inputs[2] if len(inputs) > 2 else 1
        target._value = shims.scatter(lib, name, target._value, _index(lib, inputs[1]),
                                      lib.take(value, f"{name}.at"))
        return None
    elif method == "outer":
        a, b = (lib.take(x, name) for x in inputs)
        a = lib.ns.reshape(a, tuple(a.shape) + (1,) * b.ndim)
        result = _elementwise(lib, name)(a, b)
    else:
        raise unsupported(lib, f"{name}.{method}", f"{name}.{method}")
    if dtype is not None:
        result = lib.ns.astype(result, lib.dtype(dtype))
    wrapped = lib.wrap(result)
    if out is not None:  # written into the given array (np.add(a, b, out=a))
        target = out[0] if isinstance(out, tuple) else out
        setitem(lib, target, Ellipsis, wrapped)
        return target
    return wrapped


def numeric(lib, a, b, divide=False):
    """Two operands of arithmetic, a truth array among them made numbers, as NumPy
    makes them (``mask * g``; integers divided are float64); the standard refuses
    arithmetic on bool."""
    ns = lib.ns
    if divide and all(getattr(v, "dtype", None) is not None and ns.isdtype(
            v.dtype, ("integral", "bool")) for v in (a, b) if not isinstance(v, (int, float))):
        a, b = (v if isinstance(v, (int, float)) else ns.astype(v, ns.float64)
                for v in (a, b))
    a_bool = getattr(a, "dtype", None) == ns.bool
    b_bool = getattr(b, "dtype", None) == ns.bool
    if a_bool == b_bool:
        return _weak_pair(lib, a, b)
    if a_bool:
        return ns.astype(a, _dtype_for(lib, b)), b
    return a, ns.astype(b, _dtype_for(lib, a))


def _dtype_for(lib, other):
    if isinstance(other, bool):
        return lib.ns.bool
    if isinstance(other, int):
        return lib.ns.int64
    if isinstance(other, float):
        return lib.ns.float64
    return other.dtype


def _weak_pair(lib, a, b):
    # two Python numbers (np.where(c, 1.0, 0.2)'s branches): float64, as in NumPy
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return (lib.ns.asarray(a, dtype=_dtype_for(lib, a), device=lib.device), b)
    return a, b


def _elementwise(lib, name):
    found = lib._cache.get(name)
    if found is None:
        own = _UFUNC_NAMES.get(name, name)
        found = getattr(lib.ns, own, None) or shims.elementwise(lib, name) or \
            shims.own(lib, name)  # (scipy.special's ufuncs: torch.special's, ...)
        if found is None:
            raise unsupported(lib, name)
        lib._cache[name] = found
    return found


def _reduce(lib, name, x, axis=0, keepdims=False, initial=None):
    if initial is not None:
        raise unsupported(lib, f"{name}.reduce with initial=", f"{name}.reduce")
    axis = tuple(axis) if isinstance(axis, list) else axis
    if name == "logaddexp":
        return shims.logsumexp(lib, x, axis, keepdims)
    own = _REDUCTIONS.get(name)
    if own is None:
        raise unsupported(lib, f"{name}.reduce", f"{name}.reduce")
    return getattr(lib.ns, own)(x, axis=axis, keepdims=keepdims)


def _accumulate(lib, name, x, axis=0):
    if name == "add":
        return lib.ns.cumulative_sum(x, axis=axis)
    if name == "multiply":
        return shims.cumulative_prod(lib, x, axis)
    raise unsupported(lib, f"{name}.accumulate", f"{name}.accumulate")

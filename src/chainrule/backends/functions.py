"""NumPy's functions on arrays of another library: ``np.sum``, ``np.concatenate``,
``np.linalg.solve``, ...

``call`` looks a function up in two tables: ``_STATIC`` (called with the wrapped arrays
as they are: shape, ndim and dtype from their attributes, ``np.take`` with NumPy's
indices kept) and ``_FUNCTIONS`` (a handler that spells NumPy's call in the standard's
names and arguments: ``concatenate`` is ``concat``, ``ddof`` is ``correction``). A function in neither is the namespace's own of that name (in its
``linalg`` for ``np.linalg``'s, or ``dask_linalg.py``'s where Dask's is narrower); one
the library lacks raises, naming the library and the function.
"""

import math

import numpy as np

from . import dask_linalg, shims
from .indexing import _known, getitem, setitem
from .shims import unsupported
from .ufuncs import _dtype_for

__all__ = ["call"]


def call(lib, func, args, kwargs):
    """NumPy's function ``func`` on ``args`` (among them a ForeignArray), in ``lib``'s
    namespace; the result wrapped."""
    static = _STATIC.get(func)
    if static is not None:
        return static(lib, *args, **kwargs)
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    handler = _FUNCTIONS.get(func)
    name = func.__name__
    if handler is None:
        if func.__module__.endswith("linalg"):
            handler = _linalg(name)
        else:
            own = getattr(lib.ns, name, None)
            if own is None:
                raise unsupported(lib, name)
            handler = _plain(own)
    ns_args = [lib.take(a, name) for a in args]
    ns_kwargs = {k: (lib.dtype(v) if k == "dtype" else lib.take(v, name))
                 for k, v in kwargs.items()}
    result = lib.wrap(_known(lib, handler(lib, *ns_args, **ns_kwargs), name))
    if out is not None:
        setitem(lib, out, Ellipsis, result)
        return out
    return result


def _plain(own):
    return lambda lib, *args, **kwargs: own(*args, **kwargs)


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _reduction(own):
    def handler(lib, x, axis=None, dtype=None, keepdims=False, **rest):
        _no_extras(lib, own, rest, ("initial", "where"))
        if x.dtype == lib.ns.bool and own in ("sum", "prod", "mean"):
            x = lib.ns.astype(x, lib.ns.int64 if own != "mean" else lib.ns.float64)
        result = getattr(lib.ns, own)(x, axis=_axis(axis), keepdims=keepdims)
        return result if dtype is None else lib.ns.astype(result, dtype)
    return handler


def _no_extras(lib, name, rest, allowed_if_default):
    for key, value in rest.items():
        if key in allowed_if_default and (value is None or value is True or
                                          value is np._NoValue):
            continue
        raise unsupported(lib, f"{name} with {key}=", name)


def _statistic(own):
    def handler(lib, x, axis=None, dtype=None, ddof=0, keepdims=False, **rest):
        _no_extras(lib, own, rest, ("where",))
        return getattr(lib.ns, own)(x, axis=_axis(axis), correction=ddof, keepdims=keepdims)
    return handler


def _arg_reduction(own):
    def handler(lib, x, axis=None, keepdims=False):
        if axis is None:
            x, axis = lib.ns.reshape(x, (-1,)), 0
        return getattr(lib.ns, own)(x, axis=axis, keepdims=keepdims)
    return handler


def _transpose(lib, x, axes=None):
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(axes)
    return lib.ns.permute_dims(x, axes)


def _swapaxes(lib, x, a, b):
    order = list(range(x.ndim))
    order[a], order[b] = order[b], order[a]
    return lib.ns.permute_dims(x, tuple(order))


def _reshape(lib, x, shape=None, order="C", newshape=None, copy=None):
    shape = newshape if shape is None else shape
    if order not in ("C", "A", "K"):
        raise unsupported(lib, f"reshape with order={order!r}", "reshape")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    try:
        return lib.ns.reshape(x, shape)
    except NotImplementedError:
        # Dask reshapes only by merging or splitting axes, which going through one axis
        # always does: all merged, then split
        return lib.ns.reshape(lib.ns.reshape(x, (-1,)), shape)


def _squeeze(lib, x, axis=None):
    if axis is None:
        axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
    return lib.ns.squeeze(x, axis=_axis(axis))


def _expand_dims(lib, x, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    for a in sorted(a % ndim for a in axes):
        x = lib.ns.expand_dims(x, axis=a)
    return x


def _cumulative(own):
    def handler(lib, x, axis=None, dtype=None):
        if axis is None:
            x, axis = lib.ns.reshape(x, (-1,)), 0
        if own == "sum":
            result = lib.ns.cumulative_sum(x, axis=axis)
        else:
            result = shims.cumulative_prod(lib, x, axis)
        return result if dtype is None else lib.ns.astype(result, dtype)
    return handler


def _dot(lib, a, b):
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if b.ndim <= 2:
        return lib.ns.matmul(a, b)
    return lib.ns.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))


def _outer(lib, a, b):
    return lib.ns.reshape(a, (-1, 1)) * lib.ns.reshape(b, (1, -1))


def _inner(lib, a, b):
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return lib.ns.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def _where(lib, condition, x=None, y=None):
    if x is None and y is None:
        return lib.ns.nonzero(condition)
    x, y = _scalars_as(lib, x, y)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        x, y = _scalars_as(lib, lib.ns.asarray(x, dtype=_dtype_for(lib, x),
                                               device=lib.device), y)
    return lib.ns.where(condition, x, y)


def _scalars_as(lib, *values):
    """Python numbers among arrays, as 0-d arrays of the arrays' dtype (not every
    library takes numbers where the standard now allows them)."""
    like = next((v for v in values if hasattr(v, "dtype") and not isinstance(
        v, (int, float, bool))), None)
    if like is None:
        return values
    return tuple(lib.ns.asarray(v, dtype=like.dtype, device=lib.device)
                 if isinstance(v, (int, float, bool)) else v for v in values)


def _clip(lib, x, a_min=None, a_max=None, **rest):
    a_min = rest.pop("min", a_min)
    a_max = rest.pop("max", a_max)
    return lib.ns.clip(x, min=a_min, max=a_max)


def _like(own):
    def handler(lib, x, *args, dtype=None, **rest):
        _no_extras(lib, own, rest, ("order", "subok", "shape", "device"))
        if own == "full_like":
            return lib.ns.full_like(x, args[0], dtype=dtype)
        return getattr(lib.ns, own)(x, dtype=dtype)
    return handler


def _concatenate(lib, arrays, axis=0, dtype=None, **rest):
    if axis is None:
        arrays, axis = [lib.ns.reshape(a, (-1,)) for a in arrays], 0
    result = lib.ns.concat(list(_scalars_as(lib, *arrays)), axis=axis)
    return result if dtype is None else lib.ns.astype(result, dtype)


def _stack(lib, arrays, axis=0, dtype=None, **rest):
    result = lib.ns.stack(list(_scalars_as(lib, *arrays)), axis=axis)  # (numbers too)
    return result if dtype is None else lib.ns.astype(result, dtype)


def _sort(own):
    def handler(lib, x, axis=-1, kind=None, order=None, stable=None):
        if axis is None:
            x, axis = lib.ns.reshape(x, (-1,)), 0
        return getattr(lib.ns, own)(x, axis=axis, stable=bool(stable or kind == "stable"))
    return handler


def _take(lib, x, indices, axis=None, out=None, mode=None):
    """np.take, as the indexing x[:, ..., indices] it is (NumPy's indices stay NumPy's
    where the library indexes by them: Dask, ``_index``)."""
    if out is not None or mode not in (None, "raise"):
        raise unsupported(lib, "take with out= or mode=", "take")
    value = lib.take(x, "take")
    if axis is None:
        value, axis = lib.ns.reshape(value, (-1,)), 0
    return getitem(lib, lib.wrap(value), (slice(None),) * (axis % value.ndim) + (indices,))


def _astype(lib, x, dtype, copy=True, **rest):
    return lib.ns.astype(x, lib.dtype(dtype), copy=copy)


def _pinv(lib, x, rcond=None, hermitian=False, rtol=None):
    rtol = rcond if rtol is None else rtol
    pinv = _linalg_function(lib, "pinv")
    return pinv(x) if rtol is None else pinv(x, rtol=rtol)


def _copy(lib, x, *args, **kwargs):
    return lib.ns.asarray(x, copy=True)


def _round(lib, x, decimals=0):
    if decimals != 0:
        return lib.ns.round(x * 10.0 ** decimals) / 10.0 ** decimals
    return lib.ns.round(x)


def _broadcast_arrays(lib, *arrays):
    return tuple(lib.ns.broadcast_arrays(*arrays))


def _norm(lib, x, ord=None, axis=None, keepdims=False):
    linalg = lib.ns.linalg
    if isinstance(axis, tuple) and len(axis) == 2 or (axis is None and x.ndim == 2
                                                      and ord is not None):
        return _linalg_function(lib, "matrix_norm")(x, ord="fro" if ord is None else ord,
                                                    keepdims=keepdims)
    return linalg.vector_norm(x, axis=axis, ord=2 if ord is None else ord,
                              keepdims=keepdims)


def _svd(lib, x, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        return _linalg_function(lib, "svdvals")(x)
    return _linalg_function(lib, "svd")(x, full_matrices=full_matrices)


def _linalg(name):
    def handler(lib, *args, **kwargs):
        return _linalg_function(lib, name)(*args, **kwargs)
    return handler


def _linalg_function(lib, name):
    """The library's ``linalg.<name>``: on Dask, ``dask_linalg``'s where Dask's own is
    narrower than NumPy's (one matrix at a time, ...)."""
    if shims.root(lib) == "dask" and name in dask_linalg.__all__:
        own = getattr(dask_linalg, name)
        return lambda *args, **kwargs: own(lib, *args, **kwargs)
    found = getattr(getattr(lib.ns, "linalg", None), name, None)
    if found is None:
        raise unsupported(lib, f"linalg.{name}", f"linalg.{name}")
    return found


def _result_type(lib, *args):
    return np.result_type(*[a.dtype if hasattr(a, "_lib") else a for a in args])


def _complex(lib, x):
    return lib.ns.isdtype(x.dtype, "complex floating")


def _angle(lib, x, deg):
    ns = lib.ns
    imag = ns.imag(x) if _complex(lib, x) else ns.zeros_like(x)
    out = ns.atan2(imag, ns.real(x) if _complex(lib, x) else x)
    return out * (180 / math.pi) if deg else out


def _flags(answer):
    return lambda lib, *args, **kwargs: answer


_STATIC = {np.shape: lambda lib, x: x.shape, np.ndim: lambda lib, x: x.ndim,
           np.size: lambda lib, x, axis=None: x.size if axis is None else x.shape[axis],
           np.result_type: _result_type,
           np.iscomplexobj: lambda lib, x: x.dtype.kind == "c",
           np.isrealobj: lambda lib, x: x.dtype.kind != "c",
           np.may_share_memory: _flags(False), np.shares_memory: _flags(False),
           np.take: _take}

_FUNCTIONS = {
    np.sum: _reduction("sum"), np.prod: _reduction("prod"), np.max: _reduction("max"),
    np.min: _reduction("min"), np.amax: _reduction("max"), np.amin: _reduction("min"),
    np.mean: _reduction("mean"), np.all: _reduction("all"), np.any: _reduction("any"),
    np.std: _statistic("std"), np.var: _statistic("var"),
    np.argmax: _arg_reduction("argmax"), np.argmin: _arg_reduction("argmin"),
    np.cumsum: _cumulative("sum"), np.cumprod: _cumulative("prod"),
    np.transpose: _transpose, np.permute_dims: _transpose, np.swapaxes: _swapaxes,
    np.reshape: _reshape, np.squeeze: _squeeze, np.expand_dims: _expand_dims,
    np.ravel: lambda lib, x, order="C": lib.ns.reshape(x, (-1,)),
    np.concatenate: _concatenate, np.concat: _concatenate, np.stack: _stack,
    np.broadcast_arrays: _broadcast_arrays,
    np.dot: _dot, np.outer: _outer, np.inner: _inner, np.where: _where, np.clip: _clip,
    np.vdot: lambda lib, a, b: lib.ns.sum(lib.ns.reshape(a, (-1,)) *
                                          lib.ns.reshape(b, (-1,))),
    np.zeros_like: _like("zeros_like"), np.ones_like: _like("ones_like"),
    np.empty_like: _like("zeros_like"), np.full_like: _like("full_like"),
    np.sort: _sort("sort"), np.argsort: _sort("argsort"),
    np.astype: _astype, np.copy: _copy, np.round: _round, np.around: _round,
    np.matrix_transpose: lambda lib, x: lib.ns.matrix_transpose(x),
    np.linalg.norm: _norm, np.linalg.svd: _svd, np.linalg.pinv: _pinv,
    np.partition: shims.partition, np.argpartition: shims.argpartition,
    np.unique: shims.unique,
    np.linalg.matrix_transpose: lambda lib, x: lib.ns.matrix_transpose(x),
    np.einsum: shims.einsum, np.tril: shims.tril, np.triu: shims.triu,
    np.diagonal: shims.diagonal, np.trace: shims.trace,
    np.take_along_axis: shims.take_along_axis, np.pad: shims.pad,
    np.atleast_1d: shims.atleast(1), np.atleast_2d: shims.atleast(2),
    np.atleast_3d: shims.atleast(3), np.kron: shims.kron, np.sinc: shims.sinc,
    np.nan_to_num: shims.nan_to_num, np.isclose: shims.isclose,
    np.allclose: shims.allclose, np.diff: shims.diff, np.moveaxis: shims.moveaxis,
    # (the standard defines real and imag for complex arrays only; NumPy's for any)
    np.real: lambda lib, x: lib.ns.real(x) if _complex(lib, x) else x,
    np.imag: lambda lib, x: lib.ns.imag(x) if _complex(lib, x) else lib.ns.zeros_like(x),
    np.angle: lambda lib, x, deg=False: _angle(lib, x, deg),
}
for _name in ("solve", "cholesky", "inv", "det", "slogdet", "eigh", "eigvalsh", "qr",
              "pinv", "matrix_power", "svdvals", "vector_norm", "matrix_norm",
              "cross", "outer", "tensordot", "matmul", "multi_dot", "lstsq"):
    if hasattr(np.linalg, _name):
        _FUNCTIONS.setdefault(getattr(np.linalg, _name), _linalg(_name))

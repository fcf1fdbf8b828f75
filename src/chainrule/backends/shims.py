"""What the Array API standard lacks, and the engine needs: one place for all of it.

Each function here does one thing NumPy has and the standard does not, on any
library: with ``array_api_extra`` where it has it (``pad``, ``kron``, ``sinc``,
``at``), written with the standard's own functions where that is short (``tril``,
``diagonal``, ``logsumexp``), and from the library itself where only the library has
it (``einsum``, ``erf``, a scatter that combines repeated indices): the table
``_OWN`` says which library has what. A library without it raises, naming the
library and the operation: nothing here computes with NumPy.
"""

import math

import numpy as np

__all__ = ["unsupported", "elementwise", "logsumexp", "cumulative_prod", "scatter", "updated",
           "einsum", "tril", "triu", "diagonal", "trace", "take_along_axis", "pad",
           "atleast", "kron", "sinc", "nan_to_num", "isclose", "allclose", "diff",
           "moveaxis", "vectorized", "root", "indexed", "unique"]


def root(lib):
    """The library's package name: torch, cupy, dask, array_api_strict.

    >>> class Lib: array_type = np.ndarray
    >>> root(Lib)
    'numpy'
    """
    return lib.array_type.__module__.split(".")[0]


def _xpx():
    import array_api_extra
    return array_api_extra


def unsupported(lib, op, numpy_name=None):
    """The error of an operation a library has no way to do.

    >>> class Lib: name = "array_api_strict"
    >>> str(unsupported(Lib, "einsum"))
    'chainrule: array_api_strict has no einsum (operation np.einsum)'
    """
    return TypeError(f"chainrule: {lib.name} has no {op} (operation "
                     f"np.{numpy_name or op})")


_error = unsupported


# ---------------------------------------------------------------------------------------
# Each library's own: special functions, einsum, scatters with repeated indices
# ---------------------------------------------------------------------------------------

def _torch(name):
    def get():
        import torch
        found = {"lgamma": torch.lgamma, "einsum": torch.einsum,
                 "j0": torch.special.bessel_j0, "j1": torch.special.bessel_j1}.get(name)
        return found or getattr(torch.special, name, None)  # (SciPy's names: ndtr...)
    return get


def _cupy(name):
    def get():
        import cupy
        import cupyx.scipy.special as special
        if name == "einsum":
            return cupy.einsum
        return getattr(special, {"lgamma": "gammaln"}.get(name, name), None)
    return get


def _dask(name):
    def get():
        import dask.array as da
        if name == "einsum":
            return da.einsum
        import scipy.special as special
        function = getattr(special, {"lgamma": "gammaln"}.get(name, name), None)
        # a ufunc on a Dask array is one more lazy step of its graph, chunk by chunk
        return function if isinstance(function, np.ufunc) else None
    return get


_OWN = {"torch": _torch, "cupy": _cupy, "dask": _dask}


def own(lib, name):
    """The library's own function ``name`` (einsum, lgamma, and SciPy's special
    functions by their SciPy names: erf, ndtr, log_ndtr, i0...), or None where it has
    none."""
    key = ("own", name)
    if key not in lib._cache:
        maker = _OWN.get(root(lib))
        lib._cache[key] = maker(name)() if maker is not None else None
    return lib._cache[key]


def einsum(lib, subscripts, *operands, optimize=False, **rest):
    """np.einsum, by the library's einsum (the standard has none)."""
    function = own(lib, "einsum")
    if function is None:
        raise _error(lib, "einsum")
    if any(isinstance(o, (int, float, complex)) for o in operands):
        # a 0-d NumPy operand arrives as a number (Library.take), which torch's einsum
        # refuses: a 0-d array of the library, in the dtype of the other operands
        arrays = [o for o in operands if not isinstance(o, (int, float, complex))]
        dtype = arrays[0].dtype if arrays else lib.dtype(np.float64)
        operands = [lib.ns.asarray(o, dtype=dtype, device=lib.device)
                    if isinstance(o, (int, float, complex)) else o for o in operands]
    return function(subscripts, *operands)


# Python functions NumPy vectorizes in the rules (xp.call), and their names in _OWN
_VECTORIZED = {math.erf: "erf", math.lgamma: "lgamma", math.erfc: "erfc"}


def vectorized(lib, function):
    """The library's own version of ``np.vectorize(f)`` for a Python function ``f`` it
    knows (math.erf, math.lgamma), or None."""
    pyfunc = getattr(function, "pyfunc", function)
    name = _VECTORIZED.get(pyfunc)
    return None if name is None else own(lib, name)


# np.add.at, np.multiply.at, np.minimum.at, np.maximum.at: the standard's function that
# combines two arrays, PyTorch's reduction of scatter_reduce, the standard's reduction
_SCATTERS = {"add": ("add", None, "sum"), "multiply": ("multiply", "prod", "prod"),
             "minimum": ("minimum", "amin", "min"), "maximum": ("maximum", "amax", "max")}


def scatter(lib, ufunc, target, index, values):
    """``np.<ufunc>.at(target, index, values)`` for add, multiply, minimum and maximum:
    each value combined with the entry it lands on, repeated indices combining in turn;
    returns the updated array (written in place where the library can)."""
    ns = lib.ns
    combine, torch_reduce, reduce = _SCATTERS[ufunc]
    parts = index if isinstance(index, tuple) else (index,)
    if all(isinstance(p, (int, slice)) or p is None or p is Ellipsis or
           getattr(p, "dtype", None) == ns.bool for p in parts) or _distinct(
            lib, target, parts):  # (no repeats)
        return updated(lib, target, index,
                       getattr(ns, combine)(indexed(lib, target, index), values))
    # The flat position of each entry the index picks (repeats and all), by the
    # library's own indexing of a range; then the values combined at those positions.
    shape, size = tuple(target.shape), math.prod(target.shape)
    picked = _picked(lib, ns.reshape(ns.arange(size, device=lib.device), shape), index)
    positions = ns.reshape(picked, (-1,))
    values = ns.reshape(ns.broadcast_to(ns.asarray(values, dtype=target.dtype,
                                                   device=lib.device),
                                        tuple(picked.shape)), (-1,))
    flat = ns.reshape(target, (-1,))
    if root(lib) == "torch":
        if ufunc == "add":
            return flat.index_add(0, positions, values).reshape(shape)
        return flat.scatter_reduce(0, positions, values, torch_reduce,
                                   include_self=True).reshape(shape)
    if root(lib) == "cupy" and ufunc == "add":
        import cupyx
        flat = flat.copy()
        cupyx.scatter_add(flat, positions, values)
        return flat.reshape(shape)
    # The standard's functions only (Dask, strict): a one-hot matrix of which value lands
    # where; the sum is a product with it, the others a reduction over the values with
    # the entry itself where a value does not land (it changes no product, min or max).
    hot = ns.reshape(positions, (-1, 1)) == ns.reshape(ns.arange(size, device=lib.device),
                                                       (1, -1))
    if ufunc == "add":
        return target + ns.reshape(ns.matmul(ns.reshape(values, (1, -1)),
                                             ns.astype(hot, target.dtype)), shape)
    neutral = ns.ones_like(flat) if ufunc == "multiply" else flat
    landed = getattr(ns, reduce)(ns.where(hot, ns.reshape(values, (-1, 1)),
                                          ns.reshape(neutral, (1, -1))), axis=0)
    return ns.reshape(getattr(ns, combine)(flat, landed), shape)


def _distinct(lib, target, parts):
    """Whether the index is NumPy integer arrays (a constant of the rules: a mask's
    positions, a diagonal's) that pick no entry twice."""
    run = _array_run(lib, target, parts)
    if run is None or not all(isinstance(a, (np.ndarray, int)) for a in run[2]):
        return False
    positions = _flat_positions(lib, run[2], tuple(target.shape)[run[0]:run[1]])
    return np.unique(positions).size == positions.size


def _picked(lib, x, index):
    taken = as_take(lib, x, index)
    return indexed(lib, x, index) if taken is None else taken


def indexed(lib, x, index):
    """``x[index]`` by the library's own indexing; where it refuses several integer
    arrays at once (Dask's "nd fancy indexing", as cr.vmap's batched indexes make),
    the same entries by one ``take`` from ``x`` flattened over the indexed axes.

    >>> import dask.array as da
    >>> from chainrule.backends import library_of
    >>> x = da.arange(6).reshape(2, 3)
    >>> indexed(library_of(x), x, (da.asarray([0, 1, 1]), da.asarray([2, 0, -1]))).compute()
    array([2, 3, 5])
    """
    try:
        return x[index]
    except (NotImplementedError, IndexError, TypeError) as error:
        taken = _gathered(lib, x, index if type(index) is tuple else (index,))
        if taken is None:
            raise _error(lib, f"indexing by {_spelled(index)}", "getitem") from error
        return taken


def _gathered(lib, x, parts):
    """``x[parts]`` where the parts are full slices around one run of adjacent integer
    arrays (and integers), as one ``take``; None for any other index."""
    run = _array_run(lib, x, parts)
    if run is None:
        return None
    start, stop, arrays = run
    shape = tuple(x.shape)
    flat = _flat_positions(lib, arrays, shape[start:stop])
    positions = flat.reshape(-1) if isinstance(flat, np.ndarray) else lib.ns.reshape(flat, (-1,))
    picked = lib.ns.take(lib.ns.reshape(x, shape[:start] + (-1,) + shape[stop:]), positions,
                         axis=start)
    return lib.ns.reshape(picked, shape[:start] + tuple(flat.shape) + shape[stop:])


def _expanded(parts, ndim):
    """The parts of an index with its ``...`` spelled as full slices (a mask stands for
    as many axes as it has, None for none)."""
    if not any(p is Ellipsis for p in parts):
        return parts
    at = next(i for i, p in enumerate(parts) if p is Ellipsis)
    used = sum(0 if p is None else p.ndim if str(getattr(p, "dtype", "")).endswith("bool")
               else 1 for p in parts if p is not Ellipsis)
    return parts[:at] + (slice(None),) * (ndim - used) + parts[at + 1:]


def _array_run(lib, x, parts):
    """``(start, stop, arrays)`` where the index is full slices around one run of
    adjacent integer arrays (and integers) on axes start to stop, else None."""
    parts = _expanded(parts, x.ndim)
    advanced = [k for k, p in enumerate(parts) if not isinstance(p, slice)]
    if not advanced or advanced != list(range(advanced[0], advanced[-1] + 1)) or any(
            p != slice(None) for p in parts if isinstance(p, slice)) or any(
            p is None or p is Ellipsis or getattr(p, "dtype", None) == lib.ns.bool
            for p in parts):
        return None
    return advanced[0], advanced[-1] + 1, [parts[k] for k in advanced]


def _flat_positions(lib, arrays, dims):
    """The positions the integer arrays (and integers) pick on axes of sizes ``dims``,
    as one index into those axes flattened (row-major); NumPy's when they all are (a
    constant of the rules stays a constant)."""
    ns = np if all(isinstance(a, (np.ndarray, int)) for a in arrays) else lib.ns
    arrays = [ns.asarray(a) if ns is np else ns.asarray(a, device=lib.device)
              for a in arrays]
    flat = None
    for array, n in zip(ns.broadcast_arrays(*arrays), dims):
        array = ns.where(array < 0, array + n, array)  # (NumPy's negative indices)
        flat = array if flat is None else flat * n + array
    return flat


def _spelled(index):
    parts = index if type(index) is tuple else (index,)
    return "[" + ", ".join("array" if hasattr(p, "shape") else repr(p) for p in parts) + "]"


def flipped(lib, x, parts):
    """``(x, parts, axes)`` with each slice of negative step made positive on ``x`` flipped
    along that axis: the same entries in the same order, for a library that refuses
    negative steps (torch)."""
    if sum(p is Ellipsis for p in parts) == 1:
        at = next(i for i, p in enumerate(parts) if p is Ellipsis)
        parts = parts[:at] + (slice(None),) * (x.ndim - len(parts) + 1) + parts[at + 1:]
    if any(not isinstance(p, (int, slice)) for p in parts):
        raise _error(lib, "indexing by a negative step beside None or arrays", "getitem")
    new, axes = [], []
    for axis, p in enumerate(parts):
        if type(p) is slice and p.step is not None and p.step < 0:
            n = x.shape[axis]
            picked = range(*p.indices(n))
            x = lib.ns.flip(x, axis=axis)
            axes.append(axis)
            p = slice(0, 0) if not picked else slice(n - 1 - picked[0],
                                                     n - picked[-1], -p.step)
        new.append(p)
    return x, tuple(new) + (Ellipsis,), tuple(axes)


def as_take(lib, x, index):
    """``x[index]`` for one integer array on one axis, after full slices (``x[i]``,
    ``x[:, i]``, ``x[..., i]``), as the standard's ``take``; None for other indexes."""
    parts = index if type(index) is tuple else (index,)
    arrays = [k for k, p in enumerate(parts) if hasattr(p, "dtype") and p.dtype != lib.ns.bool]
    if len(arrays) != 1 or any(not (p == slice(None) or p is Ellipsis) for k, p in
                               enumerate(parts) if k != arrays[0]):
        return None
    k = arrays[0]
    if any(p is Ellipsis for p in parts[:k]):
        if any(p is Ellipsis for p in parts[k + 1:]) or len(parts) - 1 > k:
            return None
        axis = x.ndim - 1
    else:
        axis = k
    idx = parts[k]
    flat = idx.reshape(-1) if isinstance(idx, np.ndarray) else lib.ns.reshape(idx, (-1,))
    taken = lib.ns.take(x, flat, axis=axis)
    shape = tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:])
    return lib.ns.reshape(taken, shape)


def partition(lib, x, kth, axis=-1, **rest):
    """np.partition (array_api_extra.partition)."""
    return _xpx().partition(x, kth, axis=axis, xp=lib.ns)


def argpartition(lib, x, kth, axis=-1, **rest):
    """np.argpartition (array_api_extra.argpartition)."""
    return _xpx().argpartition(x, kth, axis=axis, xp=lib.ns)


def unique(lib, x, return_index=False, return_inverse=False, return_counts=False,
           axis=None, *, equal_nan=True, sorted=True):  # noqa: A002  (NumPy's name)
    """np.unique, from stable sorts: the standard's unique_all leaves the values' order
    open and takes no axis; NumPy's values are sorted (slices along ``axis``: by their
    entries in order), each index the value's first occurrence, which a stable sort
    puts first among its equals. NaNs are equal to each other unless ``equal_nan=False``,
    as in NumPy's."""
    ns = lib.ns
    if axis is None:
        slices = ns.reshape(x, (-1, 1))
    else:
        axis = axis % x.ndim
        slices = ns.reshape(ns.moveaxis(x, axis, 0), (x.shape[axis], -1))
    n, width = slices.shape
    order = ns.arange(n)
    for k in reversed(range(width)):  # a lexicographic order: the first entry last
        order = ns.take(order, ns.argsort(ns.take(slices[:, k], order), stable=True))
    first = ns.ones((n,), dtype=ns.bool)  # (0 or 1 slices: each is a first)
    if n > 1:  # a slice is a first where it differs from the one before it
        ordered = ns.take(slices, order, axis=0)
        before, after = ordered[:-1, :], ordered[1:, :]
        differs = before != after
        if equal_nan:
            differs = differs & ~(ns.isnan(before) & ns.isnan(after))
        first = ns.concat([first[:1], ns.any(differs, axis=1)])
    starts = ns.nonzero(first)[0]
    index = ns.take(order, starts)
    values = ns.take(ns.reshape(x, (-1,)), index) if axis is None else \
        ns.take(x, index, axis=axis)
    out = [values]
    if return_index:
        out.append(index)
    if return_inverse:  # each entry's value: its group in sorted order, put back in place
        group = ns.cumulative_sum(ns.astype(first, starts.dtype)) - 1
        inverse = ns.take(group, ns.argsort(order))
        out.append(ns.reshape(inverse, x.shape) if axis is None else inverse)
    if return_counts:
        bounds = ns.concat([starts, ns.asarray([n], dtype=starts.dtype)])
        out.append(bounds[1:] - bounds[:-1])
    return tuple(out) if len(out) > 1 else out[0]


def updated(lib, target, index, value):
    """``target`` with ``target[index] = value``: in place where the library writes in
    place, else a new array (array_api_extra's ``at``). Where the library refuses the
    index (Dask: several integer arrays, None, an empty region), the same entries are
    written by an index it takes (``_rewritten``)."""
    try:
        return _xpx().at(target, index).set(value, xp=lib.ns)
    except (IndexError, ValueError, NotImplementedError):
        written = _rewritten(lib, target, index if type(index) is tuple else (index,), value)
        if written is None:
            raise
        return written


def _mask_behind_ranges(lib, target, parts):
    """For ``x[:, :, mask, ...]`` (whole axes, then one boolean array, then whole axes:
    how vmap writes through a mask), the mask broadcast over the leading axes, which
    picks the same entries in the same order as the only index; else None."""
    k = next((i for i, p in enumerate(parts) if getattr(p, "dtype", None) == lib.ns.bool),
             None)
    if k is None or k == 0 or not all(isinstance(p, slice) and p == slice(None)
                                      for i, p in enumerate(parts) if i != k):
        return None
    shape = tuple(target.shape)[:k + parts[k].ndim]
    return lib.ns.broadcast_to(parts[k], shape)


def _rewritten(lib, target, parts, value):
    """``target[parts] = value`` by a plainer index with the same entries, or None
    where there is none: a region of no entries is no write; None's axes (of size 1)
    are dropped from the value; several adjacent integer arrays are one, on those axes
    flattened."""
    ns = lib.ns
    parts = _expanded(parts, target.ndim)
    region = tuple(indexed(lib, target, parts).shape)
    if 0 in region:
        return target
    value = ns.broadcast_to(ns.asarray(value, dtype=target.dtype, device=lib.device)
                            if isinstance(value, (int, float, bool)) else value, region)
    arrays = any(hasattr(p, "dtype") for p in parts)
    if any(p is None for p in parts):
        if arrays:  # (where NumPy puts the arrays' axes beside None's is its own rule)
            return None
        parts = tuple(p for p in parts if p is not None)
        value = ns.reshape(value, tuple(indexed(lib, target, parts).shape))
        return updated(lib, target, parts, value)
    mask = _mask_behind_ranges(lib, target, parts)
    if mask is not None:  # one boolean index over the leading axes: the standard's own
        trailing = tuple(target.shape)[mask.ndim:]
        return updated(lib, target, mask, ns.reshape(value, (-1,) + trailing))
    run = _array_run(lib, target, parts)
    if run is None or len(run[2]) < 2:
        return None
    start, stop, arrays = run
    shape = tuple(target.shape)
    flat_shape = shape[:start] + (-1,) + shape[stop:]
    positions = _flat_positions(lib, arrays, shape[start:stop])
    positions = positions.reshape(-1) if isinstance(positions, np.ndarray) else \
        ns.reshape(positions, (-1,))
    flat, value = ns.reshape(target, flat_shape), ns.reshape(value, flat_shape)
    try:
        flat = _xpx().at(flat, (slice(None),) * start + (positions,)).set(value, xp=ns)
    except IndexError:  # (array-api-strict writes by no integer array: by a mask)
        flat = _by_mask(lib, flat, start, positions, value)
        if flat is None:
            raise
    return ns.reshape(flat, shape)


def _by_mask(lib, flat, start, positions, value):
    """``flat[:, ..., positions] = value`` (``start`` whole axes first) by one boolean
    index, where the positions are distinct: the values put in the positions' ascending
    order, which is the order a mask picks in. None where a position repeats."""
    ns = lib.ns
    positions = ns.asarray(positions, device=lib.device)
    order = ns.argsort(positions)
    ascending = ns.take(positions, order)
    if ascending.shape[0] > 1 and bool(ns.any(ascending[1:] == ascending[:-1])):
        return None
    size = flat.shape[start]
    hit = ns.any(ns.reshape(ns.arange(size, device=lib.device), (-1, 1)) ==
                 ns.reshape(positions, (1, -1)), axis=1)
    mask = ns.broadcast_to(hit, tuple(flat.shape)[:start + 1])
    value = ns.take(value, order, axis=start)
    return updated(lib, flat, mask, ns.reshape(value, (-1,) + tuple(flat.shape)[start + 1:]))


# ---------------------------------------------------------------------------------------
# Elementwise functions NumPy has as ufuncs
# ---------------------------------------------------------------------------------------

def elementwise(lib, name):
    """NumPy's ufunc ``name`` written with the standard's functions, or None."""
    ns = lib.ns
    table = {
        "fmax": lambda a, b: ns.where(ns.isnan(b), a, ns.where(ns.isnan(a), b,
                                                               ns.maximum(a, b))),
        "fmin": lambda a, b: ns.where(ns.isnan(b), a, ns.where(ns.isnan(a), b,
                                                               ns.minimum(a, b))),
        "fmod": lambda a, b: a - b * ns.trunc(a / b),
        "reciprocal": lambda x: 1.0 / x,
        "deg2rad": lambda x: x * (math.pi / 180), "radians": lambda x: x * (math.pi / 180),
        "rad2deg": lambda x: x * (180 / math.pi), "degrees": lambda x: x * (180 / math.pi),
        "cbrt": lambda x: ns.sign(x) * ns.abs(x) ** (1.0 / 3.0),
        "exp2": lambda x: 2.0 ** x,
        "float_power": lambda a, b: ns.pow(ns.astype(a, ns.float64),
                                           ns.astype(b, ns.float64)
                                           if hasattr(b, "dtype") else b),
        "logaddexp2": lambda a, b: ns.logaddexp(a * math.log(2), b * math.log(2)) /
        math.log(2),
        "heaviside": lambda x, h: ns.where(x > 0, 1.0, ns.where(x < 0, 0.0, h)),
    }
    return table.get(name)


def logsumexp(lib, x, axis, keepdims):
    """``np.logaddexp.reduce``: log(sum(exp(x))) along axis, without overflow."""
    ns = lib.ns
    top = ns.max(x, axis=axis, keepdims=True)
    top = ns.where(ns.isfinite(top), top, ns.zeros_like(top))
    out = ns.log(ns.sum(ns.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else ns.squeeze(out, axis=axis if axis is not None else
                                           tuple(range(x.ndim)))


def cumulative_prod(lib, x, axis):
    """np.cumprod along an axis."""
    function = getattr(lib.ns, "cumulative_prod", None)
    if function is None:
        raise _error(lib, "cumulative_prod", "cumprod")
    return function(x, axis=axis)


# ---------------------------------------------------------------------------------------
# Shapes and matrices
# ---------------------------------------------------------------------------------------

def _band(lib, x, k, lower):
    ns = lib.ns
    rows = ns.reshape(ns.arange(x.shape[-2], device=lib.device), (-1, 1))
    cols = ns.reshape(ns.arange(x.shape[-1], device=lib.device), (1, -1))
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return ns.where(keep, x, ns.zeros_like(x))


def tril(lib, x, k=0):
    """np.tril: the entries on and below the k-th diagonal."""
    return _band(lib, x, k, True)


def triu(lib, x, k=0):
    """np.triu: the entries on and above the k-th diagonal."""
    return _band(lib, x, k, False)


def diagonal(lib, x, offset=0, axis1=0, axis2=1):
    """np.diagonal: the diagonal of axes axis1, axis2, as a last axis."""
    ns = lib.ns
    axis1, axis2 = axis1 % x.ndim, axis2 % x.ndim
    rest = [a for a in range(x.ndim) if a not in (axis1, axis2)]
    x = ns.permute_dims(x, tuple(rest) + (axis1, axis2))
    linalg = getattr(ns, "linalg", None)
    if linalg is not None and hasattr(linalg, "diagonal"):
        return linalg.diagonal(x, offset=offset)
    raise _error(lib, "diagonal")


def trace(lib, x, offset=0, axis1=0, axis2=1, dtype=None):
    """np.trace: the sum of the diagonal."""
    return lib.ns.sum(diagonal(lib, x, offset, axis1, axis2), axis=-1)


def take_along_axis(lib, x, indices, axis):
    """np.take_along_axis."""
    function = getattr(lib.ns, "take_along_axis", None)
    if function is None:
        raise _error(lib, "take_along_axis")
    if axis is None:
        x, axis = lib.ns.reshape(x, (-1,)), 0
    return function(x, indices, axis=axis)


def pad(lib, x, pad_width, mode="constant", constant_values=0, **rest):
    """np.pad with a constant (array_api_extra.pad)."""
    if mode != "constant" or rest:
        raise _error(lib, f"pad with mode={mode!r}", "pad")
    return _xpx().pad(x, pad_width, mode="constant", constant_values=constant_values,
                      xp=lib.ns)


def atleast(ndim):
    """np.atleast_1d / 2d / 3d (array_api_extra.atleast_nd)."""
    def handler(lib, *arrays):
        out = [_xpx().atleast_nd(a, ndim=ndim, xp=lib.ns) for a in arrays]
        return out[0] if len(out) == 1 else out
    return handler


def kron(lib, a, b):
    """np.kron (array_api_extra.kron)."""
    return _xpx().kron(a, b, xp=lib.ns)


def sinc(lib, x):
    """np.sinc (array_api_extra.sinc)."""
    return _xpx().sinc(x, xp=lib.ns)


def nan_to_num(lib, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """np.nan_to_num (array_api_extra.nan_to_num)."""
    return _xpx().nan_to_num(x, fill_value=nan, xp=lib.ns) if posinf is None and \
        neginf is None else lib.ns.where(lib.ns.isnan(x), nan, lib.ns.clip(
            x, min=neginf, max=posinf))


def isclose(lib, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.isclose (array_api_extra.isclose)."""
    return _xpx().isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan, xp=lib.ns)


def allclose(lib, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.allclose."""
    return lib.ns.all(isclose(lib, a, b, rtol, atol, equal_nan))


def diff(lib, x, n=1, axis=-1, **rest):
    """np.diff."""
    if rest:
        raise _error(lib, "diff with prepend= or append=", "diff")
    return lib.ns.diff(x, axis=axis, n=n)


def moveaxis(lib, x, source, destination):
    """np.moveaxis."""
    return lib.ns.moveaxis(x, source, destination)

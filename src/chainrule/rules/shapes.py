"""Shapes, assembly and indexing: reshaping, transposing, broadcasting, joining and
splitting arrays, reading and writing entries. These operations move entries without
changing them, so each gradient is g moved back: reshaped, transposed, summed over the
copies, sliced, or scattered into zeros.
"""

import math
from collections.abc import Sequence

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import LEADING_AXES, ndim_of, raw, shape_of
from ..arrays import as_array
from .common import TORCH_NAMES, Result, from_end, lead, op, tangent_lead, torch_names
from .elementwise import where

__all__ = ["reshape", "transpose", "permute", "swapaxes", "broadcast_to", "expand",
           "squeeze", "expand_dims", "unsqueeze", "flatten", "concatenate", "stack", "split",
           "moveaxis"]
METHODS = ["permute", "swapaxes", "expand", "broadcast_to", "squeeze", "flatten",
           "unsqueeze", "expand_dims", "split"]  # also methods of Tensor


@op("reshape")
def _reshape(x, shape):
    return xp.reshape(x, shape)


_reshape.defvjp(lambda g, ans, x, shape: _reshape(g, lead(g, ans) + shape_of(x)),
                text=("{g} reshaped back",))
_reshape.defjvp(lambda t, ans, x, shape: _reshape(t, tangent_lead(t, x) + shape_of(ans)))


def reshape(x: ArrayLike, shape: int | Sequence[int], order: str = "C") -> Result:
    """The same entries in a new shape (one entry may be -1: whatever fits), read and
    written in ``order``: "C" (the last axis changes fastest) or "F" (the first does).

    A view when NumPy can make one; the gradient is reshaped back to x's shape.

    >>> x = cr.arange(6.0, requires_grad=True)
    >>> y = cr.reshape(x, (2, 3))             # or x.reshape(2, 3)
    >>> y.data.tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    >>> y[1].sum().backward()                 # only the second row is used
    >>> x.grad.tolist()
    [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    >>> cr.reshape(cr.arange(6.0), (2, 3), order="F").data.tolist()
    [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    """
    if order == "C":
        return _reshape(x, shape)
    if order == "F":  # Fortran's order is C's on the axes reversed, before and after
        shape = (shape,) if isinstance(shape, (int, xp.integer)) else tuple(shape)
        return transpose(_reshape(transpose(x), shape[::-1]))
    raise ValueError(f"reshape: order={order!r} is not supported; expected 'C' or 'F' "
                     f"(NumPy's 'A' and 'K' depend on memory layout, which has no "
                     f"derivative meaning)")


@op("transpose")
def transpose(x, axes=None):
    """The axes in the order ``axes`` gives (reversed when None), like np.transpose.

    Axis i of the result is axis ``axes[i]`` of x; the gradient is transposed back.

    >>> x = cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> cr.transpose(x).data.tolist()         # or x.T
    [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    >>> cr.transpose(cr.zeros(2, 3, 4), (1, 0, 2)).shape
    (3, 2, 4)
    """
    return xp.transpose(x, axes)


def _transpose_back(g, ans, axes):
    """Undo a transpose, leaving g's leading batch axes where they are."""
    ndim, n = ndim_of(ans), len(lead(g, ans))
    order = range(ndim)[::-1] if axes is None else [a % ndim for a in axes]
    inverse = xp.argsort(order)
    return transpose(g, tuple(range(n)) + tuple(n + int(a) for a in inverse))


def _transpose_forward(t, x, axes):
    """The same transpose, behind a tangent's leading batch axes."""
    ndim, n = ndim_of(x), len(tangent_lead(t, x))
    order = range(ndim)[::-1] if axes is None else [a % ndim for a in axes]
    return transpose(t, tuple(range(n)) + tuple(n + a for a in order))


transpose.defvjp(lambda g, ans, x, axes=None: _transpose_back(g, ans, axes),
                 text=("{g} transposed back",))
transpose.defjvp(lambda t, ans, x, axes=None: _transpose_forward(t, x, axes))


def permute(x: ArrayLike, *axes: int) -> Result:
    """The axes in the given order: PyTorch's name for ``transpose(x, axes)``.

    >>> x = cr.zeros(2, 3, 4)
    >>> cr.permute(x, 2, 0, 1).shape          # or x.permute(2, 0, 1)
    (4, 2, 3)
    """
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return transpose(x, axes)


@op("swapaxes")
def swapaxes(x, axis1, axis2):
    """x with axes ``axis1`` and ``axis2`` exchanged.

    >>> cr.swapaxes(cr.zeros(2, 3, 4), 0, 2).shape      # or x.swapaxes(0, 2)
    (4, 3, 2)
    """
    return xp.swapaxes(x, axis1, axis2)


swapaxes.defvjp(lambda g, ans, x, axis1, axis2:
                swapaxes(g, *from_end((axis1, axis2), ndim_of(ans))))
swapaxes.defjvp(lambda t, ans, x, axis1, axis2:
                swapaxes(t, *from_end((axis1, axis2), ndim_of(x))))


@op("broadcast_to")
def broadcast_to(x, shape):
    """x repeated along new leading axes and size-1 axes to ``shape`` (a read-only view).

    Every copy of an entry contributes, so the gradient sums them back.

    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> y = cr.broadcast_to(x, (3, 2))        # three copies of the row
    >>> y.data.tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [3.0, 3.0]
    """
    return xp.broadcast_to(x, shape)


broadcast_to.defvjp(lambda g, ans, x, shape: g)           # the engine sums it back
broadcast_to.defjvp(lambda t, ans, x, shape: broadcast_to(
    reshape(t, tangent_lead(t, x) + (1,) * (len(shape) - ndim_of(x)) + shape_of(x)),
    tangent_lead(t, x) + tuple(shape)))


def expand(x: ArrayLike, *shape: int) -> Result:
    """PyTorch's name for ``broadcast_to``; a size of -1 keeps x's size on that axis.

    >>> x = cr.tensor([[1.0], [2.0]])         # shape (2, 1)
    >>> cr.expand(x, -1, 3).data.tolist()     # or x.expand(-1, 3)
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    lead = len(shape) - ndim_of(x)
    shape = tuple(shape_of(x)[i - lead] if n == -1 else n for i, n in enumerate(shape))
    return broadcast_to(x, shape)


@op("squeeze", aliases=TORCH_NAMES)
def squeeze(x, axis=None):
    """x without its size-1 axes (all of them, or those in ``axis``).

    >>> x = cr.zeros(1, 3, 1)
    >>> cr.squeeze(x).shape, cr.squeeze(x, 0).shape       # or x.squeeze()
    ((3,), (3, 1))
    """
    return xp.squeeze(x, axis)


squeeze.defvjp(lambda g, ans, x, axis=None: reshape(g, lead(g, ans) + shape_of(x)))
squeeze.defjvp(lambda t, ans, x, axis=None: reshape(t, tangent_lead(t, x) + shape_of(ans)))


@op("expand_dims", aliases=TORCH_NAMES)
def expand_dims(x, axis):
    """x with a new axis of size 1 at position ``axis`` (PyTorch's ``unsqueeze``).

    >>> x = cr.zeros(3)
    >>> cr.expand_dims(x, 0).shape, cr.unsqueeze(x, -1).shape   # or x.unsqueeze(0)
    ((1, 3), (3, 1))
    """
    return xp.expand_dims(x, axis)


expand_dims.defvjp(lambda g, ans, x, axis: reshape(g, lead(g, ans) + shape_of(x)))
expand_dims.defjvp(lambda t, ans, x, axis:
                   reshape(t, tangent_lead(t, x) + shape_of(ans)))

unsqueeze = expand_dims


def flatten(x: ArrayLike, start_dim: int = 0, end_dim: int = -1) -> Result:
    """The axes from ``start_dim`` to ``end_dim`` (both included) merged into one.

    PyTorch's flatten; by default all axes, giving a vector.

    >>> x = cr.zeros(2, 3, 4)
    >>> cr.flatten(x).shape, cr.flatten(x, 1).shape     # or x.flatten(1)
    ((24,), (2, 12))
    """
    shape = shape_of(x)
    if not shape:
        return reshape(x, (1,))
    start, end = start_dim % len(shape), end_dim % len(shape)
    merged = int(xp.prod(shape[start:end + 1]))
    return reshape(x, shape[:start] + (merged,) + shape[end + 1:])


@op("astype", batching=LEADING_AXES)
def astype(x, dtype):
    x = as_array(x)
    if x.dtype.kind == "c" and xp.dtype(dtype).kind != "c":  # the real part, as JAX casts
        x = x.real  # (without NumPy's warning that the imaginary part is dropped)
    return x.astype(dtype)


astype.defvjp(lambda g, ans, x, dtype: astype(g, xp.result_type(raw(x))))
astype.defjvp(lambda t, ans, x, dtype: astype(t, dtype))


def _slice_along(axis, ndim, index):
    """An index that takes ``index`` along ``axis``, written from the end (batch-safe)."""
    return (Ellipsis, index) + (slice(None),) * (ndim - 1 - axis % ndim)


@op("concatenate", variadic=True)
def _concatenate(*arrays, axis=0):
    return xp.concat(arrays, axis=axis)


def _piece(argnum, arrays, axis):
    """Where argument ``argnum`` sits along ``axis`` in the concatenation."""
    sizes = [shape_of(a)[axis] for a in arrays]
    start = int(xp.sum(sizes[:argnum]))
    return _slice_along(axis, ndim_of(arrays[0]), slice(start, start + sizes[argnum]))


_concatenate.defvjp(lambda g, ans, *arrays, argnum, axis=0:
                    getitem(g, index=_piece(argnum, arrays, axis)))
_concatenate.defjvp(lambda t, ans, *arrays, argnum, axis=0:
                    index_set(_zeros_like_raw(tangent_lead(t, arrays[argnum])
                                              + shape_of(ans), t), t,
                              index=_piece(argnum, arrays, axis)))


@torch_names
def concatenate(tensors: Sequence[ArrayLike], axis: int = 0) -> Result:
    """Tensors joined along an existing ``axis``; the other axes must agree.

    Each input gets back the slice of the gradient where it went.

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor([3.0], requires_grad=True)
    >>> c = cr.concatenate([a, b])            # shape (3,)
    >>> c.data.tolist()
    [1.0, 2.0, 3.0]
    >>> (c * cr.tensor([10.0, 20.0, 30.0])).sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()
    ([10.0, 20.0], [30.0])
    """
    return _concatenate(*tensors, axis=axis)


@op("stack", variadic=True)
def _stack(*arrays, axis=0):
    return xp.stack(arrays, axis=axis)


_stack.defvjp(lambda g, ans, *arrays, argnum, axis=0:
              getitem(g, index=_slice_along(axis, ndim_of(ans), argnum)))
_stack.defjvp(lambda t, ans, *arrays, argnum, axis=0:
              index_set(_zeros_like_raw(tangent_lead(t, arrays[argnum]) + shape_of(ans), t),
                        t, index=_slice_along(axis, ndim_of(ans), argnum)))


@torch_names
def stack(tensors: Sequence[ArrayLike], axis: int = 0) -> Result:
    """Tensors of one shape joined along a new ``axis``: n of shape s give (n, *s).

    >>> a = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> b = cr.tensor([3.0, 4.0], requires_grad=True)
    >>> cr.stack([a, b]).data.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> s = cr.stack([a, b], axis=1)          # shape (2, 2): columns a and b
    >>> s[0].sum().backward()                 # the first row: a[0] + b[0]
    >>> a.grad.tolist(), b.grad.tolist()
    ([1.0, 0.0], [1.0, 0.0])
    """
    return _stack(*tensors, axis=axis)


def split(x: ArrayLike, indices_or_sections: ArrayLike, axis: int = 0, *,
          dim: int | None = None) -> Result:
    """A list of pieces of x along ``axis``, as np.split: n equal ones, or cut at indices.

    Each piece is differentiable; the gradient of x gathers theirs. PyTorch's
    ``x.split(size, dim=d)`` means pieces of ``size`` each, so ``dim=`` is refused with
    a TypeError that says how to write it: ``x.split(x.shape[d] // size, axis=d)``.

    >>> x = cr.arange(6.0, requires_grad=True)
    >>> [p.data.tolist() for p in cr.split(x, 3)]       # or x.split(3)
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    >>> first, middle, last = cr.split(x, [1, 4])       # cut before 1 and before 4
    >>> middle.sum().backward()
    >>> x.grad.tolist()
    [0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    """
    if dim is not None:
        raise TypeError(f"split: NumPy's split, whose number is how many equal pieces "
                        f"(or a list of indices to cut at), along axis=; PyTorch's "
                        f"x.split(size, dim={dim}) is x.split(x.shape[{dim}] // size, "
                        f"axis={dim})")
    n = shape_of(x)[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ValueError(f"split: axis {axis} of size {n} does not divide into "
                             f"{indices_or_sections} equal sections (NumPy's split takes "
                             f"how many pieces, or the indices to cut at; PyTorch's takes "
                             f"the size of each piece)")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        bounds = [0, *indices_or_sections, n]
    ndim = ndim_of(x)
    return [getitem(x, index=_slice_along(axis, ndim, slice(lo, hi)))
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def moveaxis(x: ArrayLike, source: int | Sequence[int],
             destination: int | Sequence[int]) -> Result:
    """x with axes moved from ``source`` to ``destination`` (ints or sequences), the
    others keeping their order, as np.moveaxis (a transpose).

    >>> cr.moveaxis(cr.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    ndim = ndim_of(x)
    source = [a % ndim for a in xp.atleast_1d(source).tolist()]
    destination = [a % ndim for a in xp.atleast_1d(destination).tolist()]
    if len(source) != len(destination):
        raise ValueError(f"moveaxis: {len(source)} source axes but {len(destination)} "
                         f"destinations; give one destination per source axis")
    order = [a for a in range(ndim) if a not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(x, tuple(order))



# ---------------------------------------------------------------------------------------
# Indexing, and JAX's functional updates x.at[index].set(v) / .add(v) / .multiply(v)
# / .min(v) / .max(v)
# ---------------------------------------------------------------------------------------

def _is_basic(index):
    """Basic indexing (ints, slices, None, ...) never repeats an element."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, (int, xp.integer, slice)) or p is None or p is Ellipsis
               for p in parts)


@op("getitem")
def getitem(x, index):
    return as_array(x)[index]


def _writer(value, index):
    """What the copy written into must be a value of: the value, or a traced index (under
    cr.jit, the gradient of x[argmax(x)] writes plain numbers at a traced place)."""
    for part in (value, *(index if isinstance(index, tuple) else (index,))):
        if type(part) in xp.ARRAYS and type(part) is not xp.ndarray:
            return part
    return value


@op("index_set")
def index_set(x, value, index):
    out = xp.owned_by(as_array(x).copy(), _writer(value, index))  # (traced, under cr.jit)
    out[index] = value
    return out


@op("index_add")
def index_add(x, value, index):
    rows = _rows_of(x, index)
    if rows is not None:
        return _add_rows(x, value, rows)
    out = xp.owned_by(as_array(x).astype(xp.result_type(x, value)),  # (a copy)
                      _writer(value, index))
    if _is_basic(index) or (isinstance(index, xp.ndarray) and index.dtype == bool):
        out[index] += value
    else:
        xp.add.at(out, index, value)  # repeated indices add up
    return out


# A speed trick for the commonest scatter, an embedding's gradient: rows picked by one
# integer array, ``x[rows] += value`` with repeats adding up. NumPy's ``add.at`` along the
# first axis of a table is several times slower than ``add.at`` on a flat array (it walks
# each picked row as a subarray), so the rows are spelled as flat positions: the same
# additions, in the same order for each entry, hence the same numbers to the last bit.

def _rows_of(x, index):
    """The integer array of ``x[rows]`` (a table of two or more axes), or None where the
    index is anything else or an array is not NumPy's (the plain rule handles those)."""
    rows = index[0] if type(index) is tuple and len(index) == 1 else index
    if (getattr(rows, "dtype", None) is None or rows.dtype.kind not in "iu"
            or not xp.numpy_backed(rows) or not xp.numpy_backed(x) or ndim_of(x) < 2):
        return None
    return rows


def _add_rows(x, value, rows):
    """``index_add(x, value, index=rows)``, by ``add.at`` on flat positions."""
    shape = tuple(x.shape)
    n, row_size = shape[0], math.prod(shape[1:])
    xp.require(xp.all((rows >= -n) & (rows < n)), IndexError,
               f"index_add: an index is out of bounds for axis 0 with size {n}")
    rows = rows.astype(xp.intp)
    rows = xp.where(rows < 0, rows + n, rows)
    positions = (rows.reshape(-1, 1) * row_size + xp.arange(row_size)).reshape(-1)
    values = xp.broadcast_to(value, tuple(rows.shape) + shape[1:]).reshape(-1)
    flat = xp.owned_by(x.astype(xp.result_type(x, value), order="C"),  # (a copy)
                       _writer(value, rows)).reshape(-1)
    xp.add.at(flat, positions, values)
    return flat.reshape(shape)


def _combined(ufunc, x, value, index):
    """x with each entry at the index combined with the values landing there by
    ``ufunc`` (multiply, minimum, maximum), one value after another where the index
    repeats the entry (``ufunc.at``), as JAX's ``x.at[index].multiply/min/max``."""
    out = xp.owned_by(as_array(x).astype(xp.result_type(x, value)),  # (a copy)
                      _writer(value, index))
    if _is_basic(index) or (isinstance(index, xp.ndarray) and index.dtype == bool):
        out[index] = ufunc(out[index], value)  # no entry named twice
    else:
        ufunc.at(out, index, value)
    return out


@op("index_multiply")
def index_multiply(x, value, index):
    return _combined(xp.multiply, x, value, index)


@op("index_min")
def index_min(x, value, index):
    return _combined(xp.minimum, x, value, index)


@op("index_max")
def index_max(x, value, index):
    return _combined(xp.maximum, x, value, index)


def _behind(batch, index):
    """The same index, after the leading batch axes of a gradient. Where its arrays are
    apart (``x[1, :, i]``), NumPy puts their broadcast axes first, in front of the
    batch's: the batch axes are then indexed by ranges, which join the broadcast."""
    if not batch:
        return index
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [k for k, p in enumerate(parts)
              if not (isinstance(p, (int, xp.integer, slice)) or p is None or p is Ellipsis)]
    advanced = [k for k, p in enumerate(parts)
                if not (isinstance(p, slice) or p is None or p is Ellipsis)]
    if not arrays or advanced[-1] - advanced[0] + 1 == len(advanced):
        return (slice(None),) * len(batch) + parts
    rank = len(batch) + len(xp.broadcast_shapes(*[
        (1,) if getattr(parts[k], "dtype", None) == bool else shape_of(parts[k])
        for k in advanced]))
    return tuple(xp.arange(n).reshape((1,) * k + (n,) + (1,) * (rank - k - 1))
                 for k, n in enumerate(batch)) + parts


getitem.defvjp(lambda g, ans, x, index:
               index_add(_zeros_like_raw(lead(g, ans) + shape_of(x), g), g,
                         index=_behind(lead(g, ans), index)),
               text=("zeros with {g} placed at the index",))
getitem.defjvp(lambda t, ans, x, index: getitem(t, index=_behind(tangent_lead(t, x), index)))

def _landed(shape, index):
    """Which writes of ``x.at[index].set(v)`` stay in the result, shaped like the region
    the index selects (None: all of them). An index that names one entry twice writes it
    twice, and only the write that lands (NumPy's last, as JAX's) reaches the result, so
    only it has a derivative. Each write is tagged with its number and the tags are
    written the same way: a write landed where its own tag is read back."""
    if _is_basic(index) or getattr(index, "dtype", None) == bool:
        return None
    tags = xp.zeros(shape, dtype=xp.int64)
    region = shape_of(getitem(tags, index=index))
    numbers = xp.reshape(xp.arange(int(xp.prod(region))), region)
    return getitem(index_set(tags, numbers, index=index), index=index) == numbers


def _written(g, ans, x, value, index):
    """The cotangent of the values ``index_set`` wrote: g at the index, where they landed."""
    picked = getitem(g, index=_behind(lead(g, ans), index))
    landed = _landed(shape_of(x), index)
    return picked if landed is None else where(landed, picked, 0.0)


index_set.defvjp(lambda g, ans, x, value, index:
                 index_set(g, 0, index=_behind(lead(g, ans), index)),
                 _written)
index_set.defjvp(lambda t, ans, x, value, index:
                 index_set(t, 0, index=_behind(tangent_lead(t, x), index)),
                 lambda t, ans, x, value, index:
                 _place(index_set, t, tangent_lead(t, value), ans, index))

index_add.defvjp(lambda g, ans, x, value, index: g,
                 lambda g, ans, x, value, index: getitem(g, index=_behind(lead(g, ans), index)))
index_add.defjvp(lambda t, ans, x, value, index: t,
                 lambda t, ans, x, value, index:
                 _place(index_add, t, tangent_lead(t, value), ans, index))


def _place(update, t, batch, ans, index, weight=None):
    """The tangent of the written values (times ``weight``, shaped like the region the
    index selects), placed at the index in zeros shaped like the result (behind any
    batch axes)."""
    zeros = _zeros_like_raw(batch + shape_of(ans), t)
    if batch:  # the batch axes of t must line up with those of the zeros
        region = _region(ans, index)
        t = broadcast_to(reshape(t, batch + (1,) * (len(region) - (ndim_of(t) - len(batch)))
                                 + shape_of(t)[len(batch):]), batch + region)
    return update(zeros, t if weight is None else t * weight, index=_behind(batch, index))


def _region(x, index):
    """The shape of ``x[index]``, where the values land (a vmap's batched index answers
    one example's shape)."""
    return shape_of(getitem(xp.zeros(shape_of(x)), index=index))


# x.at[i].multiply(v): out[p] = x[p] * (the product of the values v_k landing at p)
#
#   d out[p] / d x[p]   = the product of the values landing at p (1 where none lands)
#   d out[p] / d v_k    = x[p] * the product of the OTHER values landing at p

def _landing(reduce, x, value, index, ans):
    """``reduce`` of the values landing at each entry of x, over ones (multiply) or
    zeros (add), read back at the index: one number per value, shaped like the region."""
    start = _zeros_like_raw(shape_of(x), ans)
    start = start + 1.0 if reduce is index_multiply else start
    return getitem(reduce(start, value, index=index), index=index)


def _product_of_the_other_values(x, value, index, ans):
    """For each value written, the product of the other values landing on its entry.

    ``product / v_k`` would divide by zero, so the zeros are kept apart, as in the
    gradient of ``prod``: the product of the non-zero others (exact) times the product
    of the *other zeros* landing there, written so that it stays differentiable in those
    zeros (their value is 0, their derivative is not): with one zero z at an entry, that
    product is z for every other value and 1 for z itself; with two, z1 * z2, or the
    other zero for each of them; with three or more, 0 with a first derivative of 0.
    Exact to second order.
    """
    region = _region(x, index)
    v = broadcast_to(value, region)  # one value per place written, repeats and all
    values = raw(v)
    is_zero = values == 0
    nonzero = where(is_zero, 1.0, v)
    others_nonzero = _landing(index_multiply, x, nonzero, index, ans) / nonzero
    count = _landing(index_add, x, where(is_zero, 1.0, 0.0), index, ans)
    if type(count) is xp.ndarray and not count.any():  # no zeros: the product rule
        return others_nonzero  # (a cr.jit program takes the general formula below)
    zeros = where(is_zero, v, 0.0)                     # the zeros themselves, else 0
    e1 = _landing(index_add, x, zeros, index, ans)
    e2 = (e1 ** 2 - _landing(index_add, x, zeros * zeros, index, ans)) / 2  # z1 * z2
    other_zeros = where(count == 1, where(is_zero, 1.0, e1),
                        where(count == 2, where(is_zero, e1 - zeros, e2), 0.0 * e1))
    return where(count == 0, others_nonzero, others_nonzero * other_zeros)


def _each_value_alone(index):
    """Whether no two values land on one entry (basic indexing or a mask)."""
    return _is_basic(index) or getattr(index, "dtype", None) == bool


def _multiplier(x, value, index, ans):
    """d out / d v_k = x[p] * the product of the other values landing at p."""
    at_x = getitem(x, index=index)
    return at_x if _each_value_alone(index) else \
        at_x * _product_of_the_other_values(x, value, index, ans)


def _product_landing(x, value, index, ans):
    """d out / d x: the product of the values landing at each entry (1 elsewhere)."""
    return index_multiply(_zeros_like_raw(shape_of(x), ans) + 1.0, value, index=index)


index_multiply.defvjp(lambda g, ans, x, value, index:
                      g * _product_landing(x, value, index, ans),
                      lambda g, ans, x, value, index:
                      getitem(g, index=_behind(lead(g, ans), index))
                      * _multiplier(x, value, index, ans))
index_multiply.defjvp(lambda t, ans, x, value, index:
                      t * _product_landing(x, value, index, ans),
                      lambda t, ans, x, value, index:
                      _place(index_add, t, tangent_lead(t, value), ans, index,
                             _multiplier(x, value, index, ans)))


# x.at[i].min(v), .max(v): out[p] = min (max) of x[p] and the values landing at p.
# Its derivative is 1 for the contributor that equals the result; where several do
# (ties), they share it evenly, as max and min do (docs/conventions.md):
#
#   d out[p] / d x[p] = [x[p] == out[p]] / n[p]
#   d out[p] / d v_k  = [v_k == out[p]] / n[p]
#
# with n[p] the number of contributors equal to out[p] (x[p] itself is one where nothing
# lands, so n >= 1).

def _extremum_shares(ans, x, value, index):
    """(the share of each entry of x, the share of each value written), constants."""
    result = raw(ans)
    at_x = where(raw(x) == result, 1.0, 0.0)
    at_v = where(broadcast_to(raw(value), _region(x, index))
                 == getitem(result, index=index), 1.0, 0.0)
    tied = at_x + index_add(_zeros_like_raw(shape_of(x), ans), at_v, index=index)
    return at_x / tied, at_v / getitem(tied, index=index)


def _share_of_x(x, value, index, ans):
    return _extremum_shares(ans, x, value, index)[0]


def _share_of_values(x, value, index, ans):
    return _extremum_shares(ans, x, value, index)[1]


for _extremum in (index_min, index_max):
    _extremum.defvjp(lambda g, ans, x, value, index: g * _share_of_x(x, value, index, ans),
                     lambda g, ans, x, value, index:
                     getitem(g, index=_behind(lead(g, ans), index))
                     * _share_of_values(x, value, index, ans))
    _extremum.defjvp(lambda t, ans, x, value, index: t * _share_of_x(x, value, index, ans),
                     lambda t, ans, x, value, index:
                     _place(index_add, t, tangent_lead(t, value), ans, index,
                            _share_of_values(x, value, index, ans)))


def _zeros_like_raw(shape, g):
    """A zero array of this shape, with the dtype of the gradient (a constant)."""
    return xp.zeros(shape, dtype=xp.result_type(raw(g)))

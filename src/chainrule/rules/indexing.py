"""Indexing: reading entries, ``x[index]`` (``getitem``), and JAX's functional updates
``x.at[index].set(v)`` / ``.add(v)`` / ``.multiply(v)`` / ``.min(v)`` / ``.max(v)``
(``index_set``, ``index_add``, ``index_multiply``, ``index_min``, ``index_max``). A
read's gradient is g scattered into zeros at the index; the values a write wrote get g
read back at the index (weighted, for a product or an extremum).

A file of its own because these rules have problems of their own: a batch's axes in
front of an index (``_behind``), an index that names one entry twice (the write that
lands, sums that add up), and the products and extrema of the values landing on one
entry. It is written with the shape operations (``shapes``) and is itself beneath
joining and splitting (``joining``), whose rules are slices. These operations have no
``cr.NAME``: Tensors reach them as ``x[...]`` and ``x.at[...]``.
"""

import math

from .. import arrays as xp
from ..primitive import ndim_of, raw, shape_of
from ..arrays import as_array
from .common import lead, op, tangent_lead
from .elementwise import where
from .shapes import broadcast_to, reshape


def _is_basic(index):
    """Basic indexing (ints, slices, None, ...) never repeats an element."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, (int, xp.integer, slice)) or p is None or p is Ellipsis
               for p in parts)


@op("getitem")
def getitem(x, index):
    array = as_array(x)
    if type(array) is xp.ndarray:
        traced = _traced_among(index if isinstance(index, tuple) else (index,))
        if traced is not None:  # (under cr.jit, a plain array read at a traced place:
            array = traced._owned(array)  # a value of the program, which NumPy's own
    return array[index]                   # indexing would ask the index for numbers)


def _traced_among(parts):
    """The first of ``parts`` that is a registered array type other than NumPy's (cr.jit's
    traced array), or None."""
    for part in parts:
        if type(part) in xp.ARRAYS and type(part) is not xp.ndarray:
            return part
    return None


def _writer(value, index):
    """What the copy written into must be a value of: the value, or a traced index (under
    cr.jit, the gradient of x[argmax(x)] writes plain numbers at a traced place)."""
    traced = _traced_among((value, *(index if isinstance(index, tuple) else (index,))))
    return value if traced is None else traced


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

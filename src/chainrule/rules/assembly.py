"""Building arrays from arrays, NumPy's names and semantics: flips and rotations, tiling,
repeating, rolling, padding, triangles and diagonals, stacking, splitting, select.

None of these needs a rule of its own. Each moves entries around (an index array along
an axis: ``take``), masks them (``where``), or joins and cuts (``concatenate``,
``getitem``): the gradient of each entry goes back to where it came from, and repeated
entries add up. So every order of derivative, and forward mode, come from those rules.
"""

from collections.abc import Sequence

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import Box, ndim_of, raw, shape_of
from ..arrays import as_array
from .common import Result, float_dtype
from .elementwise import where
from .ordering import take
from .indexing import getitem, index_set
from .joining import concatenate
from .shapes import moveaxis, reshape, swapaxes

__all__ = ["flip", "fliplr", "flipud", "rot90", "rollaxis", "roll", "tile", "repeat",
           "pad", "tril", "triu", "diagonal", "diag", "atleast_1d", "atleast_2d",
           "atleast_3d", "hstack", "vstack", "dstack", "column_stack", "array_split",
           "hsplit", "vsplit", "dsplit", "ravel", "append", "select"]
METHODS = ["diagonal", "ravel"]  # also methods of Tensor


def _axes(axis, ndim):
    return tuple(range(ndim)) if axis is None else \
        tuple(a % ndim for a in xp.atleast_1d(axis).tolist())


# ---------------------------------------------------------------------------------------
# Flips, rotations, moving axes
# ---------------------------------------------------------------------------------------

def flip(x: ArrayLike, axis: int | tuple[int, ...] | None = None) -> Result:
    """x reversed along ``axis`` (an int, a tuple, or None for every axis), as np.flip.

    >>> cr.flip(cr.tensor([[1.0, 2.0], [3.0, 4.0]]), 1).data.tolist()
    [[2.0, 1.0], [4.0, 3.0]]
    """
    flipped = _axes(axis, ndim_of(x))
    return getitem(x, index=tuple(slice(None, None, -1) if d in flipped else slice(None)
                                  for d in range(ndim_of(x))))


def fliplr(x: ArrayLike) -> Result:
    """x reversed along axis 1 (left to right), as np.fliplr.

    >>> cr.fliplr(cr.tensor([[1.0, 2.0]])).data.tolist()
    [[2.0, 1.0]]
    """
    return flip(x, 1)


def flipud(x: ArrayLike) -> Result:
    """x reversed along axis 0 (up and down), as np.flipud.

    >>> cr.flipud(cr.tensor([[1.0], [2.0]])).data.tolist()
    [[2.0], [1.0]]
    """
    return flip(x, 0)


def rot90(x: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Result:
    """x rotated by 90 degrees k times in the plane of ``axes``, as np.rot90.

    >>> cr.rot90(cr.tensor([[1.0, 2.0], [3.0, 4.0]])).data.tolist()
    [[2.0, 4.0], [1.0, 3.0]]
    """
    a, b = (ax % ndim_of(x) for ax in axes)
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a), b)
    if k == 1:
        return swapaxes(flip(x, b), a, b)
    return flip(swapaxes(x, a, b), b)


def rollaxis(x: ArrayLike, axis: int, start: int = 0) -> Result:
    """Axis ``axis`` moved to lie before ``start``, as np.rollaxis (prefer moveaxis).

    >>> cr.rollaxis(cr.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    ndim = ndim_of(x)
    axis, start = axis % ndim, start % (ndim + 1)
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start)


# ---------------------------------------------------------------------------------------
# Rolling, tiling, repeating, padding: entries gathered by an index array along an axis
# ---------------------------------------------------------------------------------------

def roll(x: ArrayLike, shift: ArrayLike,
         axis: int | tuple[int, ...] | None = None) -> Result:
    """x shifted by ``shift`` places along ``axis`` (None: flattened), entries wrapping
    around, as np.roll.

    >>> cr.roll(cr.tensor([1.0, 2.0, 3.0]), 1).data.tolist()
    [3.0, 1.0, 2.0]
    """
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), shape_of(x))
    shifts, axes = xp.broadcast_arrays(xp.atleast_1d(shift), xp.atleast_1d(axis))
    for s, a in zip(shifts.tolist(), axes.tolist()):
        n = shape_of(x)[a]
        x = take(x, (xp.arange(n) - s) % n, a)
    return x


def tile(x: ArrayLike, reps: ArrayLike) -> Result:
    """x repeated ``reps`` times along each axis (whole copies), as np.tile.

    >>> cr.tile(cr.tensor([1.0, 2.0]), 2).data.tolist()
    [1.0, 2.0, 1.0, 2.0]
    """
    reps = tuple(xp.atleast_1d(reps).tolist())
    ndim = max(len(reps), ndim_of(x))
    x = reshape(x, (1,) * (ndim - ndim_of(x)) + shape_of(x))
    reps = (1,) * (ndim - len(reps)) + reps
    for axis, r in enumerate(reps):
        if r != 1:
            x = take(x, xp.tile(xp.arange(shape_of(x)[axis]), r), axis)
    return x


def repeat(x: ArrayLike, repeats: ArrayLike, axis: int | None = None) -> Result:
    """Each entry repeated ``repeats`` times (an int, or one count per entry) along
    ``axis`` (None: flattened), as np.repeat.

    >>> cr.repeat(cr.tensor([1.0, 2.0]), 2).data.tolist()
    [1.0, 1.0, 2.0, 2.0]
    """
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return take(x, xp.repeat(xp.arange(shape_of(x)[axis]), repeats), axis)


_GATHERED = ("edge", "reflect", "symmetric", "wrap")


def pad(x: ArrayLike, pad_width: ArrayLike, mode: str = "constant",
        constant_values: ArrayLike = 0) -> Result:
    """x with entries added before and after along each axis, as np.pad: ``mode``
    constant (``constant_values``), edge, reflect, symmetric or wrap.

    ``pad_width`` is ((before, after), ...) per axis, or one pair, or one number.

    >>> cr.pad(cr.tensor([1.0, 2.0]), 1, mode="edge").data.tolist()
    [1.0, 1.0, 2.0, 2.0]
    """
    ndim = ndim_of(x)
    widths = xp.broadcast_to(xp.asarray(pad_width, dtype=int), (ndim, 2))
    if mode not in ("constant",) + _GATHERED:
        raise ValueError(f"pad: mode {mode!r} is not one of 'constant', "
                         f"{', '.join(repr(m) for m in _GATHERED)}")
    for axis, (before, after) in enumerate(widths.tolist()):
        if before == after == 0:
            continue
        if mode == "constant":
            pieces = []
            for width in (before, after):
                shape = list(shape_of(x))
                shape[axis] = width
                pieces.append(constant_values + xp.zeros(shape, float_dtype(x))
                              if isinstance(constant_values, Box) else
                              xp.full(shape, constant_values, float_dtype(x)))
            x = concatenate([pieces[0], x, pieces[1]], axis)
        else:  # NumPy pads the positions, and the entries follow
            x = take(x, xp.pad(xp.arange(shape_of(x)[axis]), (before, after), mode=mode),
                     axis)
    return x


# ---------------------------------------------------------------------------------------
# Triangles and diagonals
# ---------------------------------------------------------------------------------------

def tril(x: ArrayLike, k: int = 0) -> Result:
    """The lower triangle of the last two axes (entries above diagonal k set to 0).

    >>> cr.tril(cr.ones((2, 2))).data.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    n, m = shape_of(x)[-2:]
    return where(xp.tri(n, m, k, dtype=bool), x, 0.0)


def triu(x: ArrayLike, k: int = 0) -> Result:
    """The upper triangle of the last two axes (entries below diagonal k set to 0).

    >>> cr.triu(cr.ones((2, 2))).data.tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    n, m = shape_of(x)[-2:]
    return where(xp.tri(n, m, k - 1, dtype=bool), 0.0, x)


def _diagonal_positions(n, m, offset):
    if offset >= 0:
        length = max(0, min(n, m - offset))
        rows = xp.arange(length)
        return rows, rows + offset
    length = max(0, min(n + offset, m))
    cols = xp.arange(length)
    return cols - offset, cols


def diagonal(x: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Result:
    """The diagonal ``offset`` of the (axis1, axis2) planes, as the last axis (as
    np.diagonal).

    >>> cr.diagonal(cr.tensor([[1.0, 2.0], [3.0, 4.0]])).data.tolist()
    [1.0, 4.0]
    """
    last = moveaxis(x, (axis1, axis2), (-2, -1))
    rows, cols = _diagonal_positions(*shape_of(last)[-2:], offset)
    return getitem(last, index=(Ellipsis, rows, cols))


def diag(v: ArrayLike, k: int = 0) -> Result:
    """A 1-D v placed on diagonal k of a square matrix, or a 2-D v's diagonal k, as
    np.diag.

    >>> cr.diag(cr.tensor([1.0, 2.0])).data.tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if ndim_of(v) == 2:
        return diagonal(v, k)
    if ndim_of(v) != 1:
        raise ValueError(f"diag: expected a 1-D or 2-D array, got shape {shape_of(v)}")
    size = shape_of(v)[0] + abs(k)
    rows, cols = _diagonal_positions(size, size, k)
    return index_set(xp.zeros((size, size), float_dtype(v)), v, index=(rows, cols))


# ---------------------------------------------------------------------------------------
# At least n axes; stacking; splitting
# ---------------------------------------------------------------------------------------

def _at_least(x, ndim):
    shape = shape_of(x)
    if len(shape) >= ndim:
        return x
    if ndim == 3 and len(shape) == 2:
        return reshape(x, shape + (1,))
    if ndim == 3 and len(shape) == 1:
        return reshape(x, (1,) + shape + (1,))
    return reshape(x, (1,) * (ndim - len(shape)) + shape)


def atleast_1d(*arrays: ArrayLike) -> Result:
    """Each array with at least 1 axis (a number becomes shape (1,)), as np.atleast_1d.

    >>> cr.atleast_1d(cr.tensor(1.0)).shape
    (1,)
    """
    out = [_at_least(a, 1) for a in arrays]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arrays: ArrayLike) -> Result:
    """Each array with at least 2 axes ((n,) becomes (1, n)), as np.atleast_2d.

    >>> cr.atleast_2d(cr.tensor([1.0, 2.0])).shape
    (1, 2)
    """
    out = [_at_least(a, 2) for a in arrays]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arrays: ArrayLike) -> Result:
    """Each array with at least 3 axes ((n,) becomes (1, n, 1), (n, m) becomes
    (n, m, 1)), as np.atleast_3d.

    >>> cr.atleast_3d(cr.tensor([1.0, 2.0])).shape
    (1, 2, 1)
    """
    out = [_at_least(a, 3) for a in arrays]
    return out[0] if len(out) == 1 else out


def hstack(arrays: Sequence[ArrayLike]) -> Result:
    """The arrays joined along axis 1 (axis 0 for 1-D ones), as np.hstack.

    >>> cr.hstack([cr.tensor([1.0]), cr.tensor([2.0, 3.0])]).data.tolist()
    [1.0, 2.0, 3.0]
    """
    arrays = [_at_least(a, 1) for a in arrays]
    return concatenate(arrays, 0 if ndim_of(arrays[0]) == 1 else 1)


def vstack(arrays: Sequence[ArrayLike]) -> Result:
    """The arrays joined along axis 0, 1-D ones as rows, as np.vstack.

    >>> cr.vstack([cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])]).data.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return concatenate([_at_least(a, 2) for a in arrays], 0)


def dstack(arrays: Sequence[ArrayLike]) -> Result:
    """The arrays joined along axis 2 (depth), as np.dstack.

    >>> cr.dstack([cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])]).shape
    (1, 2, 2)
    """
    return concatenate([_at_least(a, 3) for a in arrays], 2)


def column_stack(arrays: Sequence[ArrayLike]) -> Result:
    """1-D arrays as columns (and 2-D ones as they are), joined along axis 1.

    >>> cr.column_stack([cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])]).data.tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """
    return concatenate([reshape(a, (-1, 1)) if ndim_of(a) < 2 else a for a in arrays], 1)


def array_split(x: ArrayLike, indices_or_sections: ArrayLike, axis: int = 0) -> Result:
    """x cut into pieces along ``axis``, as np.array_split: n pieces as equal as can be
    (the first ones one longer), or cut at the given indices.

    >>> [p.data.tolist() for p in cr.array_split(cr.arange(5.0), 2)]
    [[0.0, 1.0, 2.0], [3.0, 4.0]]
    """
    axis = axis % ndim_of(x)
    n = shape_of(x)[axis]
    if xp.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"array_split: the number of sections must be > 0, got "
                             f"{sections}")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = xp.concat([[0], xp.cumsum(sizes)]).tolist()
    else:
        bounds = [0, *list(indices_or_sections), n]
    before = (slice(None),) * axis
    return [getitem(x, index=before + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1],
                                                                          bounds[1:])]


def _equal_split(x, sections, axis, name):
    if xp.ndim(sections) == 0 and shape_of(x)[axis] % int(sections):
        raise ValueError(f"{name}: axis {axis} of size {shape_of(x)[axis]} does not "
                         f"divide into {sections} equal sections; use array_split")
    return array_split(x, sections, axis)


def hsplit(x: ArrayLike, sections: ArrayLike) -> Result:
    """x split along axis 1 (axis 0 if 1-D) into equal pieces or at indices.

    >>> [p.shape for p in cr.hsplit(cr.zeros((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    return _equal_split(x, sections, 0 if ndim_of(x) == 1 else 1, "hsplit")


def vsplit(x: ArrayLike, sections: ArrayLike) -> Result:
    """x split along axis 0 into equal pieces or at indices.

    >>> [p.shape for p in cr.vsplit(cr.zeros((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    return _equal_split(x, sections, 0, "vsplit")


def dsplit(x: ArrayLike, sections: ArrayLike) -> Result:
    """x split along axis 2 into equal pieces or at indices.

    >>> [p.shape for p in cr.dsplit(cr.zeros((1, 1, 4)), [1])]
    [(1, 1, 1), (1, 1, 3)]
    """
    return _equal_split(x, sections, 2, "dsplit")


def ravel(x: ArrayLike) -> Result:
    """x flattened to 1-D, as np.ravel (a Tensor method too).

    >>> cr.ravel(cr.tensor([[1.0, 2.0], [3.0, 4.0]])).data.tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    return reshape(x, (-1,))


def append(x: ArrayLike, values: ArrayLike, axis: int | None = None) -> Result:
    """values added at the end of x along ``axis`` (None: both flattened), as np.append.

    >>> cr.append(cr.tensor([1.0, 2.0]), 3.0).data.tolist()
    [1.0, 2.0, 3.0]
    """
    if axis is None:
        return concatenate([ravel(x), ravel(values)], 0)
    return concatenate([x, values], axis)


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0.0) -> Result:
    """Per entry, the choice of the first condition that holds, else ``default``, as
    np.select (the conditions are boolean arrays: they get no gradient).

    >>> x = cr.tensor([-1.0, 0.5, 2.0])
    >>> cr.select([x < 0, x > 1], [-x, x * 10]).data.tolist()
    [1.0, 0.0, 20.0]
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: {len(condlist)} conditions but {len(choicelist)} "
                         f"choices; give one choice per condition")
    out = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        out = where(as_array(raw(condition), bool), choice, out)
    return out


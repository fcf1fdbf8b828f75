"""Joining and splitting: concatenate, stack, split. Each input of a join gets back the
slice of the gradient where it went, and each piece of a split is a slice, so these
rules are indexing (``getitem`` of a slice, ``index_set`` into zeros): this file sits
above ``indexing``, which sits above ``shapes``. The joins and splits composed from
these three (hstack, vstack, array_split, hsplit...) are in ``assembly``.
"""

from collections.abc import Sequence

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import ndim_of, shape_of
from .common import Result, op, tangent_lead, torch_names
from .indexing import _zeros_like_raw, getitem, index_set

__all__ = ["concatenate", "stack", "split"]
METHODS = ["split"]  # also a method of Tensor


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

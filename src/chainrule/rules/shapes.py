"""Shapes: reshaping, transposing, moving and swapping axes, removing and adding size-1
axes, broadcasting, and the cast ``astype``. These operations move entries without
changing them, so each gradient is g moved back: reshaped, transposed, or summed over
the copies.

They are the floor of the table's array handling, a file of their own because the rules
of indexing (``indexing``) and of joining and splitting (``joining``) are written with
them: those files import this one, and this one neither of them.
"""

from collections.abc import Sequence

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import LEADING_AXES, ndim_of, raw, shape_of
from ..arrays import as_array
from .common import TORCH_NAMES, Result, from_end, lead, op, tangent_lead

__all__ = ["reshape", "transpose", "permute", "swapaxes", "broadcast_to", "expand",
           "squeeze", "expand_dims", "unsqueeze", "flatten", "moveaxis"]
METHODS = ["permute", "swapaxes", "expand", "broadcast_to", "squeeze", "flatten",
           "unsqueeze", "expand_dims"]  # also methods of Tensor


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

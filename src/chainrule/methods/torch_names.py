"""PyTorch's spellings of the Tensor methods its users type, where their meaning is
unambiguous: ``x.pow(2)``, ``x.mm(w)``, ``x.t()``, ``x.clamp(min=0)``, ``x.view(2, 3)``,
``x.masked_fill(mask, 0)``, ``x.gather(1, index)``, ``x.double()``, ``x.dim()``... Each is
one of the table's operations (or a composition of them), so it is differentiable
wherever the operation is, on Tensors and on the transforms' traced values alike.

Where NumPy and PyTorch give one name two meanings, NumPy's stays and the PyTorch
spelling says so: ``x.size`` is the element count (``x.shape`` is PyTorch's
``x.size()``), ``x.repeat`` repeats entries (``cr.tile`` is PyTorch's ``repeat``). What only a Tensor has (the in-place updates ``add_``,
``zero_``..., ``grad_fn``, ``x.size()``'s error) is in ``torch_tensor.py``.
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..rules.predicates import all as _all, any as _any, argmax as _argmax, \
    argmin as _argmin
from ..primitive import Box, raw, shape_of

__all__ = ["TorchMethods"]


def _require_ndim(name, want, *values):
    for value in values:
        if len(shape_of(value)) != want:
            shapes = " and ".join(str(tuple(shape_of(v))) for v in values)
            raise ValueError(f"{name}: expected {want}-d tensors, got shapes {shapes}")


_NO_VALUES_INDICES = ("a Tensor has no .{name}: x.max(dim) and x.min(dim) give the values "
                      "alone in chainrule (NumPy's meaning), not PyTorch's (values, "
                      "indices); write x.max(dim) for x.max(dim).values and x.argmax(dim) "
                      "for x.max(dim).indices (x.topk(k, dim) gives both)")


class TorchMethods:
    """PyTorch's method names, for Tensors and the transforms' traced values."""

    __slots__ = ()

    def pow(self, exponent: ArrayLike) -> Any:
        """``self ** exponent``.

        >>> cr.tensor([1.0, 2.0]).pow(2).data.tolist()
        [1.0, 4.0]
        """
        return ops.power(self, exponent)

    def mm(self, other: ArrayLike) -> Any:
        """The product of two matrices (2-d only, as torch.mm).

        >>> cr.ones(2, 3).mm(cr.ones(3, 4)).shape
        (2, 4)
        """
        _require_ndim("mm", 2, self, other)
        return ops.matmul(self, other)

    def bmm(self, other: ArrayLike) -> Any:
        """The products of two batches of matrices (3-d only, as torch.bmm).

        >>> cr.ones(5, 2, 3).bmm(cr.ones(5, 3, 4)).shape
        (5, 2, 4)
        """
        _require_ndim("bmm", 3, self, other)
        return ops.matmul(self, other)

    def t(self) -> Any:
        """The transpose of a matrix (a vector or a number as it is), as torch's ``t()``.

        >>> cr.ones(2, 3).t().shape
        (3, 2)
        """
        if len(shape_of(self)) > 2:
            raise ValueError(f"t: expected a tensor of at most 2 dimensions, got shape "
                             f"{tuple(shape_of(self))}; use x.transpose(...) or "
                             f"x.swapaxes(a, b)")
        return ops.transpose(self) if len(shape_of(self)) == 2 else self

    def clamp(self, min: ArrayLike | None = None,
              max: ArrayLike | None = None) -> Any:
        """The entries limited to [min, max] (either may be None), as torch.clamp.

        >>> cr.tensor([-1.0, 0.5, 3.0]).clamp(min=0.0, max=1.0).data.tolist()
        [0.0, 0.5, 1.0]
        """
        return ops.clip(self, min, max)

    def view(self, *shape: int) -> Any:
        """``reshape`` where the new shape can share the numbers (a write into one shows
        in the other, as torch's view); a ``RuntimeError`` where it would need a copy
        (a transposed tensor flattened): ``reshape`` copies then.

        >>> cr.arange(6.0).view(2, 3).shape
        (2, 3)
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        data = getattr(self, "_data", None)
        if type(data) is np.ndarray:
            try:
                np.reshape(data, shape, copy=False)
            except ValueError as err:
                if "copy" not in str(err):
                    raise
                raise RuntimeError(f"view: shape {tuple(data.shape)} cannot be viewed as "
                                   f"{shape} without a copy (its numbers are not in "
                                   f"row-major order, e.g. a transpose); use "
                                   f".reshape(...), which copies") from None
        return ops.reshape(self, shape)

    def view_as(self, other: Any) -> Any:
        """Reshaped to ``other``'s shape.

        >>> cr.arange(6.0).view_as(cr.zeros(3, 2)).shape
        (3, 2)
        """
        return ops.reshape(self, tuple(shape_of(other)))

    def expand_as(self, other: Any) -> Any:
        """Broadcast to ``other``'s shape.

        >>> cr.ones(3, 1).expand_as(cr.zeros(3, 4)).shape
        (3, 4)
        """
        return ops.broadcast_to(self, tuple(shape_of(other)))

    def numel(self) -> int:
        """The number of entries (NumPy's ``size``).

        >>> cr.zeros(2, 3).numel()
        6
        """
        return int(np.prod(shape_of(self)))

    def nelement(self) -> int:
        """The number of entries (PyTorch's other name for ``numel``).

        >>> cr.zeros(2, 3).nelement()
        6
        """
        return self.numel()

    @property
    def device(self) -> str:
        """Where the numbers live: "cpu" for NumPy's arrays; another library's array
        (a Tensor over torch's or CuPy's) tells its own ("cuda:0").

        >>> cr.zeros(2).device
        'cpu'
        """
        array = self
        while isinstance(array, Box):
            array = array._contents()
        array = getattr(array, "_value", array)  # (the wrapped array of another library)
        return str(getattr(array, "device", "cpu"))

    def dim(self) -> int:
        """The number of axes (NumPy's ``ndim``).

        >>> cr.zeros(2, 3).dim()
        2
        """
        return len(shape_of(self))

    def type(self, dtype: DTypeLike | None = None) -> Any:
        """With a dtype: the values cast to it (as ``astype``); without: the dtype's name.

        >>> cr.tensor([1.0]).type(np.float32).dtype, cr.tensor([1.0]).type()
        (dtype('float32'), 'float64')
        """
        return str(np.result_type(raw(self))) if dtype is None else self.astype(dtype)

    def to(self, *args: Any, dtype: DTypeLike | None = None,
           device: str | None = None) -> Any:
        """Cast to a dtype (``x.to(np.float32)``, ``x.to(other_tensor)``); a device may
        only be the CPU, which is where chainrule computes.

        >>> cr.tensor([1.0]).to("cpu", np.float32).dtype
        dtype('float32')
        """
        for arg in args:
            if isinstance(arg, str) and not _is_dtype_name(arg):
                device = arg
            elif not isinstance(arg, type) and hasattr(arg, "shape") and hasattr(arg, "dtype"):
                dtype = arg.dtype  # another tensor's
            else:
                dtype = arg
        if device is not None and str(device).split(":")[0] != "cpu":
            raise ValueError(f"to: chainrule computes on the CPU, got device {device!r}")
        return self if dtype is None else self.astype(dtype)

    def float(self) -> Any:
        """Cast to float32 (PyTorch's ``float``).

        >>> cr.tensor([1.0]).float().dtype
        dtype('float32')
        """
        return self.astype(np.float32)

    def double(self) -> Any:
        """Cast to float64 (PyTorch's ``double``).

        >>> cr.tensor([1.0], dtype=np.float32).double().dtype
        dtype('float64')
        """
        return self.astype(np.float64)

    def long(self) -> Any:
        """Cast to int64 (no derivative flows through integers).

        >>> cr.tensor([1.7, -2.2]).long().data.tolist()
        [1, -2]
        """
        return self.astype(np.int64)

    def masked_fill(self, mask: ArrayLike, value: ArrayLike) -> Any:
        """``value`` where ``mask`` is True, the entries elsewhere (as torch).

        >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> y = x.masked_fill(x.data > 1.5, 0.0)
        >>> y.data.tolist()
        [1.0, 0.0, 0.0]
        """
        return ops.where(np.asarray(raw(mask), dtype=bool), value, self)

    def where(self, condition: ArrayLike, other: ArrayLike) -> Any:
        """``self`` where ``condition``, else ``other`` (torch's ``x.where(c, y)``).

        >>> cr.tensor([1.0, 2.0]).where(np.array([True, False]), 0.0).data.tolist()
        [1.0, 0.0]
        """
        return ops.where(np.asarray(raw(condition), dtype=bool), self, other)

    def gather(self, dim: int, index: ArrayLike) -> Any:
        """The entries at ``index`` along ``dim`` (index has self's number of axes), as
        torch.gather: NumPy's ``take_along_axis``.

        >>> x = cr.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> x.gather(1, np.array([[1], [0]])).data.tolist()
        [[2.0], [3.0]]
        """
        return ops.take_along_axis(self, np.asarray(raw(index)), axis=dim)

    def scatter_add(self, dim: int, index: ArrayLike, src: Any) -> Any:
        """A copy with ``src``'s entries added at ``index`` along ``dim`` (repeated
        indices add up), as torch's ``scatter_add``; differentiable in self and src.

        >>> cr.zeros(3).scatter_add(0, np.array([0, 2, 0]), cr.ones(3)).data.tolist()
        [2.0, 0.0, 1.0]
        """
        index = np.asarray(raw(index))
        ndim = len(shape_of(self))
        dim = dim % ndim
        grid = list(np.indices(index.shape, sparse=True))
        grid[dim] = index
        values = src[tuple(slice(0, n) for n in index.shape)]
        return ops.index_add(self, values, index=tuple(grid))

    def index_select(self, dim: int, index: ArrayLike) -> Any:
        """The slices at ``index`` along ``dim``, as torch.index_select.

        >>> cr.tensor([[1.0, 2.0], [3.0, 4.0]]).index_select(0, np.array([1])).data.tolist()
        [[3.0, 4.0]]
        """
        return ops.take(self, np.asarray(raw(index)), axis=dim)

    def narrow(self, dim: int, start: int, length: int) -> Any:
        """``length`` entries from ``start`` along ``dim``, as torch.narrow.

        >>> cr.arange(5.0).narrow(0, 1, 3).data.tolist()
        [1.0, 2.0, 3.0]
        """
        index = [slice(None)] * len(shape_of(self))
        index[dim] = slice(start, start + length)
        return self[tuple(index)]

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Any, ...]:
        """At most ``chunks`` pieces along ``dim``, each of ceil(n / chunks) entries (the
        last may be shorter), as torch.chunk.

        >>> [c.shape for c in cr.arange(5.0).chunk(2)]
        [(3,), (2,)]
        """
        n = shape_of(self)[dim]
        size = -(-n // chunks)
        return tuple(self.narrow(dim, start, min(size, n - start))
                     for start in range(0, n, size))

    def add(self, other: ArrayLike, alpha: float = 1) -> Any:
        """``self + alpha * other``, as torch.add.

        >>> cr.tensor([1.0]).add(cr.tensor([2.0]), alpha=3).data.tolist()
        [7.0]
        """
        return self + (other if alpha == 1 else alpha * other)

    def sub(self, other: ArrayLike, alpha: float = 1) -> Any:
        """``self - alpha * other``, as torch.sub.

        >>> cr.tensor([5.0]).sub(cr.tensor([1.0]), alpha=2).data.tolist()
        [3.0]
        """
        return self - (other if alpha == 1 else alpha * other)

    def mul(self, other: ArrayLike) -> Any:
        """``self * other``.

        >>> cr.tensor([2.0]).mul(3.0).data.tolist()
        [6.0]
        """
        return self * other

    def div(self, other: ArrayLike) -> Any:
        """``self / other``.

        >>> cr.tensor([3.0]).div(2.0).data.tolist()
        [1.5]
        """
        return self / other

    def neg(self) -> Any:
        """``-self``.

        >>> cr.tensor([3.0]).neg().data.tolist()
        [-3.0]
        """
        return -self

    def eq(self, other: ArrayLike) -> Any:
        """``self == other`` (no derivative).

        >>> cr.tensor([1.0, 2.0]).eq(2.0).tolist()
        [False, True]
        """
        return self == other

    def ne(self, other: ArrayLike) -> Any:
        """``self != other`` (no derivative).

        >>> cr.tensor([1.0, 2.0]).ne(2.0).tolist()
        [True, False]
        """
        return self != other

    def lt(self, other: ArrayLike) -> Any:
        """``self < other`` (no derivative).

        >>> cr.tensor([1.0, 2.0]).lt(2.0).tolist()
        [True, False]
        """
        return self < other

    def le(self, other: ArrayLike) -> Any:
        """``self <= other`` (no derivative).

        >>> cr.tensor([1.0, 2.0]).le(2.0).tolist()
        [True, True]
        """
        return self <= other

    def gt(self, other: ArrayLike) -> Any:
        """``self > other`` (no derivative).

        >>> cr.tensor([1.0, 2.0]).gt(1.0).tolist()
        [False, True]
        """
        return self > other

    def ge(self, other: ArrayLike) -> Any:
        """``self >= other`` (no derivative).

        >>> cr.tensor([1.0, 2.0]).ge(2.0).tolist()
        [False, True]
        """
        return self >= other

    def all(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """Whether every entry (along ``dim``) is true, as torch.all.

        >>> bool(cr.tensor([1.0, 2.0]).gt(0).all())
        True
        """
        return _all(self, axis=dim, keepdims=keepdim)

    def any(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """Whether some entry (along ``dim``) is true, as torch.any.

        >>> cr.tensor([[1.0, -2.0]]).gt(0).any(dim=1).tolist()
        [True]
        """
        return _any(self, axis=dim, keepdims=keepdim)

    # (a Tensor has its own argmax, argmin, clone and detach, in tensor.py: these are the
    # traced values', inside vmap, grad or cr.jit, where PyTorch's torch.func takes them)
    def argmax(self, axis: int | None = None, dim: int | None = None,
               keepdims: bool = False, keepdim: bool = False) -> Any:
        """The index of the largest entry (along ``axis``, PyTorch's ``dim``): integers,
        with no derivative.

        >>> cr.vmap(lambda x: x.argmax())(np.array([[1.0, 3.0], [4.0, 2.0]])).tolist()
        [1, 0]
        """
        return _argmax(self, axis=axis if dim is None else dim, keepdims=keepdims or keepdim)

    def argmin(self, axis: int | None = None, dim: int | None = None,
               keepdims: bool = False, keepdim: bool = False) -> Any:
        """The index of the smallest entry (along ``axis``, PyTorch's ``dim``).

        >>> cr.vmap(lambda x: x.argmin(dim=0))(np.array([[1.0, 3.0], [4.0, 2.0]])).tolist()
        [0, 1]
        """
        return _argmin(self, axis=axis if dim is None else dim, keepdims=keepdims or keepdim)

    def clone(self) -> Any:
        """The same values, in the graph (the gradient flows back), as torch's clone.

        >>> cr.grad(lambda x: (x.clone() * x).sum())(np.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
        """
        return ops.multiply(self, 1)

    def detach(self) -> Any:
        """The same values with no derivative (``stop_gradient``), as torch.func reads
        ``x.detach()`` inside a transform.

        >>> cr.grad(lambda x: (x.detach() * x).sum())(np.array([1.0, 2.0])).tolist()
        [1.0, 2.0]
        """
        return ops.stop_gradient(self)

    def norm(self, p: "float | str | None" = "fro", dim: "int | tuple[int, ...] | None" = None,
             keepdim: bool = False, dtype: DTypeLike | None = None) -> Any:
        """The ``p``-norm of the entries (along ``dim``), as torch's ``x.norm``: "fro"
        (or 2, the default) the square root of the sum of squares, 1 the sum of
        absolute values, ``inf`` the largest, any other number (sum |x|^p)^(1/p);
        "nuc" the nuclear norm of a matrix (``dim`` two axes).

        >>> cr.tensor([3.0, -4.0]).norm().item(), cr.tensor([3.0, -4.0]).norm(1).item()
        (5.0, 7.0)
        """
        x = self if dtype is None else ops.astype(self, np.dtype(dtype))
        if p == "nuc":
            axes = dim or (-2, -1)
            if len(shape_of(x)) < 2 or isinstance(axes, int) or len(axes) != 2:
                raise ValueError(f"norm: p='nuc' is the norm of a matrix; got shape "
                                 f"{tuple(shape_of(x))} and dim={dim}, expected two axes")
            return ops.matrix_functions.linalg_norm(x, "nuc", axis=dim or (-2, -1),
                                                    keepdims=keepdim)
        return ops.matrix_functions.vector_norm(x, axis=dim, keepdims=keepdim,
                                                ord=2 if p in ("fro", None) else p)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        """The ``k`` largest entries along ``dim`` and where they were, as torch's
        ``x.topk``: ``(values, indices)`` (``cr.topk``).

        >>> cr.tensor([1.0, 5.0, 3.0]).topk(1).values.tolist()
        [5.0]
        """
        return ops.topk(self, k, axis=dim, largest=largest, sorted=sorted)

    @property
    def values(self) -> None:
        """Not here: ``x.max(dim)`` and ``x.min(dim)`` give the values alone, as NumPy's,
        where PyTorch's give ``(values, indices)``; the AttributeError says what to write.

        >>> x = cr.tensor([[1.0, 5.0, 3.0]])
        >>> x.max(1).tolist(), x.argmax(1).tolist()   # torch's x.max(1).values, .indices
        ([5.0], [1])
        """
        raise AttributeError(_NO_VALUES_INDICES.format(name="values"))

    @property
    def indices(self) -> None:
        """Not here: see ``values``; ``x.argmax(dim)`` is torch's ``x.max(dim).indices``.

        >>> cr.tensor([[1.0, 5.0, 3.0]]).argmin(1).tolist()   # torch's x.min(1).indices
        [0]
        """
        raise AttributeError(_NO_VALUES_INDICES.format(name="indices"))

    def repeat(self, *args: Any, **kwargs: Any) -> Any:
        """NumPy's ``repeat`` where ``axis=`` says it is NumPy's (each entry repeated:
        PyTorch's takes no axis); otherwise refused: NumPy's repeats each entry,
        PyTorch's tiles the whole tensor, and the error names the function for each.

        >>> cr.tensor([1.0, 2.0]).repeat(2, axis=0).data.tolist()
        [1.0, 1.0, 2.0, 2.0]
        >>> cr.tile(cr.tensor([1.0, 2.0]), 2).data.tolist()      # PyTorch's x.repeat(2)
        [1.0, 2.0, 1.0, 2.0]
        """
        if "axis" in kwargs and len(args) <= 1:
            return ops.repeat(self, *args, **kwargs)
        raise TypeError("x.repeat means one thing in NumPy and another in PyTorch: for "
                        "PyTorch's (tile the whole tensor) use cr.tile(x, reps), for "
                        "NumPy's (repeat each entry) cr.repeat(x, repeats, axis)")

    @property
    def mH(self) -> Any:
        """The conjugate transpose of the last two axes (a stack of matrices at once),
        as PyTorch's ``x.mH``; for a real x the transpose.

        >>> cr.tensor([[1.0 + 2.0j, 3.0j]]).mH.data.tolist()
        [[(1-2j)], [-3j]]
        """
        if len(shape_of(self)) < 2:
            raise ValueError(f"mH: expected a tensor of at least 2 dimensions, got shape "
                             f"{tuple(shape_of(self))}")
        return ops.conj(ops.swapaxes(self, -1, -2))

    def is_complex(self) -> bool:
        """Whether the entries are complex numbers (PyTorch's name).

        >>> cr.tensor([1.0j]).is_complex(), cr.tensor([1.0]).is_complex()
        (True, False)
        """
        return bool(np.result_type(raw(self)).kind == "c")

    def conj_physical(self) -> Any:
        """The complex conjugate (PyTorch's eager ``conj``; chainrule's ``conj`` copies
        too, there being no lazy conjugate bit).

        >>> cr.tensor([1.0 + 2.0j]).conj_physical().data.tolist()
        [(1-2j)]
        """
        return ops.conj(self)

    def cpu(self) -> Any:
        """The tensor itself: chainrule computes on the CPU.

        >>> x = cr.zeros(2)
        >>> x.cpu() is x
        True
        """
        return self

    def contiguous(self) -> Any:
        """The tensor itself where its numbers lie in row-major order, else a copy that
        does (as torch's: a write into the copy never reaches the tensor it came from).

        >>> x = cr.zeros(2, 3)
        >>> x.contiguous() is x
        True
        >>> np.shares_memory(x.t().contiguous().data, x.data)    # a transpose: copied
        False
        """
        data = getattr(self, "_data", None)
        if type(data) is np.ndarray and not data.flags.c_contiguous:
            return self.clone()
        return self


def _is_dtype_name(text):
    try:
        np.dtype(text)
    except TypeError:
        return False
    return True

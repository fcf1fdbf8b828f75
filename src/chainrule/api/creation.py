"""Creating tensors: ``tensor`` (which also stacks a list of Tensors), zeros, ones, full,
eye, arange, linspace and the *_like functions. ``rand`` and ``randn`` live in
chainrule.torch_random, with PyTorch's other random functions, and are imported here too.

float64 unless ``dtype`` says otherwise; ``requires_grad=True`` makes a leaf whose
operations are recorded. Each takes PyTorch's ``device=`` too: the CPU (``"cpu"``,
``x.device``) or None, as everything here computes on the CPU; another is refused.
"""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import rules as ops
from ..methods.array import holds_box, stack_of
from ..primitive import Box, raw
from ..tensor import Tensor
from .torch_random import cpu_only, rand, randn

__all__ = ["tensor", "zeros", "ones", "full", "eye", "arange", "linspace", "zeros_like", "ones_like",
           "rand", "randn"]

# A shape, given as one int or tuple, or as several ints: zeros(2, 3) or zeros((2, 3)).
Shape = int | tuple[int, ...] | list[int]


# A list of traced values gives what carries their graph (a tracer, inside a transform,
# which has the Tensor's methods); Tensor is what callers may rely on.
def tensor(data: ArrayLike, dtype: DTypeLike = None, requires_grad: bool = False, *,
           device: str | None = None) -> Tensor:
    """A Tensor from a number, a (nested) list, an ndarray, or a list that holds Tensors
    (then the result is their differentiable stack).

    The data's dtype is kept, as PyTorch and NumPy keep it: floats are float64 (a
    float32 array stays float32), integers int64 (an index, a class label: ``C[X]`` looks
    up rows), booleans bool; ``dtype`` casts. With ``requires_grad=True`` the operations
    on it are recorded for ``backward()``; only a float or complex tensor can require
    grad, as in PyTorch.

    >>> cr.tensor([[1.0, 2.0], [3.0, 4.0]])
    tensor([[1., 2.],
            [3., 4.]])
    >>> cr.tensor([0, 2, 1]).dtype                  # integers stay integers
    dtype('int64')
    >>> cr.tensor(3.0, requires_grad=True)
    tensor(3., requires_grad=True)
    >>> cr.tensor([1.0, 2.0], dtype=np.float32).dtype
    dtype('float32')
    """
    cpu_only("tensor", device)
    if isinstance(data, (list, tuple)) and holds_box(data):
        if requires_grad:
            raise ValueError("tensor: a list that holds Tensors is already part of a "
                             "graph; set requires_grad on its parts instead")
        return stack_of(data, dtype)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _default(dtype):
    return np.float64 if dtype is None else dtype


def zeros(*shape: Shape, dtype: DTypeLike = None, requires_grad: bool = False,
          device: str | None = None) -> Tensor:
    """A Tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``; float64 unless told.

    >>> cr.zeros(2)
    tensor([0., 0.])
    >>> cr.zeros(2, 3).shape, cr.zeros((2, 3)).shape
    ((2, 3), (2, 3))
    """
    cpu_only("zeros", device)
    return Tensor._make(np.zeros(_shape(shape), dtype=_default(dtype)), requires_grad)


def ones(*shape: Shape, dtype: DTypeLike = None, requires_grad: bool = False,
         device: str | None = None) -> Tensor:
    """A Tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``; float64 unless told.

    >>> cr.ones(2, dtype=np.float32)
    tensor([1., 1.], dtype=float32)
    """
    cpu_only("ones", device)
    return Tensor._make(np.ones(_shape(shape), dtype=_default(dtype)), requires_grad)


# A fill value in a graph gives what carries that graph (a tracer, inside a transform,
# which has the Tensor's methods); Tensor is what callers may rely on.
def full(shape: Shape, fill_value: ArrayLike, dtype: DTypeLike = None,
         requires_grad: bool = False, *, device: str | None = None) -> Tensor:
    """A Tensor of ``shape`` (an int or a tuple) filled with ``fill_value``.

    >>> cr.full(3, 0.5)
    tensor([0.5, 0.5, 0.5])
    >>> cr.full((2, 2), 7.0).shape
    (2, 2)

    A fill value that is part of a graph gives a result differentiable in it.
    """
    cpu_only("full", device)
    if isinstance(fill_value, Box):
        _no_new_leaf("full", requires_grad)
        return ops.add(np.zeros(_shape((shape,)), dtype=_default(dtype)), fill_value)
    return Tensor._make(np.full(_shape((shape,)), fill_value, dtype=_default(dtype)),
                        requires_grad)


def _no_new_leaf(name, requires_grad):
    if requires_grad:
        raise ValueError(f"{name}: arguments in a graph already make the result "
                         f"differentiable; requires_grad=True would cut it from them")


def eye(n: int, m: int | None = None, dtype: DTypeLike = None,
        requires_grad: bool = False, *, device: str | None = None) -> Tensor:
    """The n x m identity matrix (n x n when m is None): ones on the diagonal.

    >>> cr.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    >>> cr.eye(2, 3).shape
    (2, 3)
    """
    cpu_only("eye", device)
    return Tensor._make(np.eye(n, m, dtype=_default(dtype)), requires_grad)


def arange(*args: float, dtype: DTypeLike = None, requires_grad: bool = False,
           device: str | None = None) -> Tensor:
    """Evenly spaced values in [start, stop) with ``step``, like torch.arange: int64
    when every bound is an int, float64 otherwise (or ``dtype``).

    >>> cr.arange(4)
    tensor([0, 1, 2, 3])
    >>> cr.arange(0, 1, 0.25).data.tolist()
    [0.0, 0.25, 0.5, 0.75]
    >>> cr.arange(3, device="cpu")              # PyTorch's device=: the CPU only
    tensor([0, 1, 2])

    Its bounds are plain numbers (how many entries there are cannot depend on a value
    being differentiated); for endpoints in a graph, use ``linspace``.
    """
    cpu_only("arange", device)
    if any(isinstance(a, Box) for a in args):
        raise TypeError("arange: a bound is part of a graph, and arange's result would "
                        "drop its derivative; use cr.linspace(start, stop, num), which "
                        "differentiates through its endpoints, or plain numbers")
    if dtype is None and all(isinstance(a, (int, np.integer)) for a in args):
        dtype = np.int64  # (bool is an int too, as for torch.arange(True))
    return Tensor._make(np.arange(*args, dtype=_default(dtype)), requires_grad)


# Endpoints in a graph give what carries that graph, as a fill value does in full.
def linspace(start: ArrayLike, stop: ArrayLike, num: int = 50, dtype: DTypeLike = None,
             requires_grad: bool = False, *, device: str | None = None) -> Tensor:
    """``num`` evenly spaced values from start to stop, both included.

    Endpoints that are part of a graph (Tensors that require grad, traced values) give
    a result differentiable in them: start + (stop - start) * i / (num - 1).

    >>> cr.linspace(0, 1, 5).data.tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    cpu_only("linspace", device)
    if isinstance(start, Box) or isinstance(stop, Box):
        _no_new_leaf("linspace", requires_grad)
        fractions = np.linspace(0.0, 1.0, num, dtype=_default(dtype))
        return ops.add(ops.multiply(ops.subtract(stop, start), fractions), start)
    return Tensor._make(np.linspace(start, stop, num, dtype=_default(dtype)), requires_grad)


def zeros_like(x: ArrayLike, dtype: DTypeLike = None, requires_grad: bool = False, *,
               device: str | None = None) -> Tensor:
    """Zeros with the shape (and dtype, unless given) of x, a Tensor or an array.

    >>> cr.zeros_like(np.ones(2, dtype=np.float32))
    tensor([0., 0.], dtype=float32)
    """
    cpu_only("zeros_like", device)
    return Tensor._make(np.zeros_like(raw(x), dtype=dtype), requires_grad)


def ones_like(x: ArrayLike, dtype: DTypeLike = None, requires_grad: bool = False, *,
              device: str | None = None) -> Tensor:
    """Ones with the shape (and dtype, unless given) of x, a Tensor or an array.

    >>> cr.ones_like(cr.zeros(2, 3)).shape
    (2, 3)
    """
    cpu_only("ones_like", device)
    return Tensor._make(np.ones_like(raw(x), dtype=dtype), requires_grad)


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)

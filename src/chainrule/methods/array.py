"""The array surface of every value the rule table accepts: Tensor and the transforms'
tracers share it. Each operator and method is one of the table's operations (``x.exp()``
is ``cr.exp(x)``), and NumPy's functions on such a value run chainrule's operation, or
raise (``numpy_protocol``), never silently dropping the gradient.
"""

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike

from . import numpy_protocol
from .. import rules as ops
from ..arrays import ARRAYS, holds_traced, stacked_list
from ..primitive import Box, raw
from .torch_logic import TorchLogic
from .torch_math import TorchMath
from .torch_names import TorchMethods
from .torch_shapes import TorchShapes

if TYPE_CHECKING:  # (typing.Self is Python 3.11's; type checkers bring typing_extensions)
    from typing_extensions import Self

__all__ = ["ArrayMethods", "stack_of", "holds_box", "raw_index", "describe_index"]


def _method(function, name):
    """An operation as a method: ``x.exp()`` is ``exp(x)``, with the same documentation."""
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = function.__doc__
    method.operation = function  # for the reference's signature (scripts/make_api_docs.py)
    return method


def _transpose(x, *axes):
    """Axes permuted: ``x.transpose()`` reverses them, ``x.transpose(1, 0, 2)`` orders them.

    >>> x = cr.zeros(2, 3, 4)
    >>> x.transpose().shape, x.transpose(1, 0, 2).shape
    ((4, 3, 2), (3, 2, 4))
    """
    return ops.permute(x, *axes) if axes else ops.transpose(x)


def _reshape(x, *shape, order="C"):
    """The same entries in a new shape: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``
    (``order="F"``: read and written with the first axis changing fastest).

    >>> x = cr.arange(6.0)
    >>> x.reshape(2, 3).data.tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    >>> x.reshape((3, -1)).shape              # -1: whatever fits
    (3, 2)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return ops.reshape(x, shape, order=order)


class ArrayMethods(TorchMethods, TorchMath, TorchLogic, TorchShapes, Box):
    """The operators and methods of anything the operations of ``chainrule.rules``
    accept: Tensor, and the forward-mode tracer. Each is the table's operation."""

    __slots__ = ()

    def __add__(self, other) -> "Self": return ops.add(self, other)
    def __radd__(self, other) -> "Self": return ops.add(other, self)
    def __sub__(self, other) -> "Self": return ops.subtract(self, other)
    def __rsub__(self, other) -> "Self": return ops.subtract(other, self)
    def __mul__(self, other) -> "Self": return ops.multiply(self, other)
    def __rmul__(self, other) -> "Self": return ops.multiply(other, self)
    def __truediv__(self, other) -> "Self": return ops.divide(self, other)
    def __rtruediv__(self, other) -> "Self": return ops.divide(other, self)
    def __pow__(self, other) -> "Self": return ops.power(self, other)
    def __rpow__(self, other) -> "Self": return ops.power(other, self)
    def __matmul__(self, other) -> "Self": return ops.matmul(self, other)
    def __rmatmul__(self, other) -> "Self": return ops.matmul(other, self)
    def __neg__(self) -> "Self": return ops.negative(self)
    def __pos__(self) -> "Self": return self
    def __abs__(self) -> "Self": return ops.absolute(self)
    def __getitem__(self, index) -> "Self": return ops.getitem(self, index=raw_index(index))
    def __mod__(self, other) -> "Self": return ops.remainder(self, other)
    def __rmod__(self, other) -> "Self": return ops.remainder(other, self)
    # piecewise constant (derivative 0, as in JAX): NumPy's result, outside the graph
    def __floordiv__(self, other): return np.floor_divide(self, other)
    def __rfloordiv__(self, other): return np.floor_divide(other, self)

    @staticmethod
    def _from_list(items):  # a list of Tensors (or tracers) handed to an operation
        return stack_of(items)

    @staticmethod
    def _plain(array):
        """A result with no derivative (a comparison, np.isnan), as this kind gives it."""
        return array

    # NumPy's functions on a Tensor run chainrule's operation, or raise (numpy_protocol)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return numpy_protocol.apply_ufunc(ufunc, method, inputs, kwargs, self._plain)

    def __array_function__(self, func, types, args, kwargs):
        return numpy_protocol.apply_function(func, args, kwargs, self._plain)

    transpose, reshape = _method(_transpose, "transpose"), _method(_reshape, "reshape")
    # and every operation the table lists in its METHODS (below the class): x.exp(), x.sum()

    if TYPE_CHECKING:
        # What the loop below the class sets, spelt out for type checkers (which do not
        # run it): each gives a value of x's own type (a Tensor's, a Tensor), split a
        # list of them. tests/test_types.py checks that these are the table's METHODS.
        def _operation(self, *args: Any, **kwargs: Any) -> "Self": ...
        abs = angle = broadcast_to = clip = conj = conjugate = cos = cumprod = \
            cumsum = diagonal = dot = erf = exp = expand = expand_dims = expm1 = flatten = \
            gelu = leaky_relu = log = log10 = log1p = log2 = log_softmax = logsumexp = \
            matmul = max = maximum = mean = min = minimum = outer = permute = prod = \
            ravel = relu = round = sigmoid = sign = sin = softmax = softplus = sqrt = \
            squeeze = std = sum = swapaxes = take = tan = tanh = trace = unsqueeze = var = \
            _operation
        def split(self, *args: Any, **kwargs: Any) -> "list[Self]": ...

    @property
    def T(self):
        """The axes in reverse order (a transpose, differentiable).

        >>> cr.tensor([[1.0, 2.0, 3.0]]).T.shape       # (1, 3) -> (3, 1)
        (3, 1)
        """
        return ops.transpose(self)

    @property
    def real(self):
        """The real part, as NumPy's and PyTorch's ``x.real`` (differentiable: JAX's
        rules, docs/conventions.md); of a real tensor, the tensor itself (as in both, so
        a write into it is a write into x).

        >>> cr.tensor([1.0 + 2.0j]).real
        tensor([1.])
        """
        if self.dtype.kind != "c":
            return self
        return ops.real(self)

    @property
    def imag(self):
        """The imaginary part, as ``x.imag`` (0 for a real x).

        >>> cr.tensor([1.0 + 2.0j]).imag
        tensor([2.])
        """
        return ops.imag(self)

    @property
    def at(self):
        """JAX's functional updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.multiply(v)``,
        ``.min(v)`` and ``.max(v)`` return new tensors, differentiable in both x and v
        (x itself is unchanged).

        >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> y = x.at[1].set(10.0)
        >>> y
        tensor([ 1., 10.,  3.], grad_fn=index_set)
        >>> y.sum().backward()
        >>> x.grad.tolist()                       # the overwritten entry gets nothing
        [1.0, 0.0, 1.0]
        >>> cr.zeros(3).at[[0, 0, 2]].add(1.0).data.tolist()   # repeated indices add up
        [2.0, 0.0, 1.0]
        """
        return _IndexUpdater(self)

    def astype(self, dtype: DTypeLike) -> "ArrayMethods":
        """The values cast to ``dtype``; the gradient is cast back to the input's dtype.

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x.astype(np.float32)
        >>> y
        tensor([1., 2.], dtype=float32, grad_fn=astype)
        >>> y.sum().backward()
        >>> x.grad.dtype
        dtype('float64')
        """
        return ops.astype(self, np.dtype(dtype))


for _name, _operation in ops.METHODS.items():
    setattr(ArrayMethods, _name, _method(_operation, _name))


# ---------------------------------------------------------------------------------------
# Indexing helpers, x.at[...]
# ---------------------------------------------------------------------------------------

def raw_index(index):
    """An index with Tensors replaced by their arrays (integer or boolean)."""
    if isinstance(index, tuple):
        return tuple(raw(i) for i in index)
    if isinstance(index, list):
        return np.asarray([raw(i) for i in index])
    return raw(index)


def describe_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    for part in parts:
        if isinstance(part, slice):
            out.append(":" if part == slice(None) else
                       f"{'' if part.start is None else part.start}:"
                       f"{'' if part.stop is None else part.stop}")
        elif part is Ellipsis:
            out.append("...")
        elif isinstance(part, (int, np.integer)) or part is None:
            out.append(repr(part))
        else:
            out.append(type(part).__name__)
    return ", ".join(out)


class _IndexUpdater:
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __getitem__(self, index):
        return _IndexedUpdate(self.tensor, raw_index(index))


class _IndexedUpdate:
    __slots__ = ("tensor", "index")

    def __init__(self, tensor, index):
        self.tensor, self.index = tensor, index

    def set(self, value):
        """A copy of the tensor with ``value`` written at the index."""
        return ops.index_set(self.tensor, value, index=self.index)

    def add(self, value):
        """A copy of the tensor with ``value`` added at the index (repeated indices add up)."""
        return ops.index_add(self.tensor, value, index=self.index)

    def multiply(self, value):
        """A copy of the tensor with its entries at the index multiplied by ``value``
        (repeated indices multiply in turn, as ``np.multiply.at``). The derivative for
        one value is the product of the others landing on its entry, exact with zeros.

        >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> v = cr.tensor([2.0, 0.0, 5.0], requires_grad=True)
        >>> y = x.at[np.array([0, 0, 2])].multiply(v)
        >>> y.data.tolist()                       # 1 * 2 * 0, 2, 3 * 5
        [0.0, 2.0, 15.0]
        >>> y.sum().backward()
        >>> x.grad.tolist(), v.grad.tolist()      # 2 * 0; x[0] * 0, x[0] * 2; x[2]
        ([0.0, 1.0, 5.0], [0.0, 2.0, 3.0])
        """
        return ops.index_multiply(self.tensor, value, index=self.index)

    def min(self, value):
        """A copy of the tensor with each entry at the index replaced by the smallest of
        it and the values landing there (``np.minimum.at``). Contributors tied for the
        result share its derivative evenly.

        >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> v = cr.tensor([1.0, 0.5], requires_grad=True)
        >>> y = x.at[np.array([0, 2])].min(v)
        >>> y.data.tolist()
        [1.0, 2.0, 0.5]
        >>> y.sum().backward()
        >>> x.grad.tolist(), v.grad.tolist()      # x[0] and v[0] tie: half each
        ([0.5, 1.0, 0.0], [0.5, 1.0])
        """
        return ops.index_min(self.tensor, value, index=self.index)

    def max(self, value):
        """A copy of the tensor with each entry at the index replaced by the largest of
        it and the values landing there (``np.maximum.at``). Contributors tied for the
        result share its derivative evenly.

        >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> y = x.at[np.array([1, 1, 2])].max(cr.tensor([4.0, 4.0, 0.0]))
        >>> y.data.tolist()
        [1.0, 4.0, 3.0]
        """
        return ops.index_max(self.tensor, value, index=self.index)


def holds_box(items):
    """Whether a (nested) list holds Tensors, or the transforms' tracers."""
    return any(isinstance(x, Box) or
               (isinstance(x, (list, tuple)) and holds_box(x)) for x in items)


def stack_of(items, dtype: DTypeLike | None = None):
    """A (nested) list that holds Tensors or tracers, as their differentiable stack;
    numbers among them become float64 (or ``dtype``) constants, as in ``cr.tensor``."""
    parts = [item if isinstance(item, Box) else
             stack_of(item, dtype) if isinstance(item, (list, tuple)) and holds_box(item)
             else _constant(item, dtype) for item in items]
    out = ops.stack(parts, axis=0)
    if dtype is not None and out.dtype != np.dtype(dtype):
        out = out.astype(dtype)
    return out


def _constant(item, dtype):
    if type(item) in (list, tuple) and holds_traced(item):
        item = stacked_list(item)
    if type(item) in ARRAYS and type(item) is not np.ndarray:  # (cr.jit's traced array:
        array = item if dtype is None else item.astype(dtype)  # a value of the program)
    else:
        array = np.array(item, dtype=dtype)
    return array.astype(np.float64) if array.dtype.kind in "biu" else array

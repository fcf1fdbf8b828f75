"""The tensor engine: NumPy arrays that remember how they were made.

Read this file in two parts:

1. **Recording**: an operation (a ``Primitive`` of ``chainrule.rules``) called on Tensors
   that require grad computes its result from their arrays and records a graph node:
   its operands, its operation, and the arguments its rules will need.
2. **Tensor**: the array, its gradient, and the methods and operators users type;
   ``backward()`` seeds the output's gradient and hands the graph to the backward pass.

Beside it: ``backward.py`` walks the graph from the output back to the inputs, asking
each operation's rules for its operands' vector-Jacobian products; ``saved.py`` keeps
what a graph saved unchanged while the graph can be walked (and frees it after).

The rules are written with the table's own operations, so during an ordinary backward
pass they run on raw arrays (fast), and with ``create_graph=True`` on Tensors, building
the graph of the gradient, which can be differentiated again.
"""

from numbers import Number
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import arrays as xp, pickling, rules as ops, tensor_data
from .methods.array import ArrayMethods, describe_index, raw_index
from .backward import accumulate_arrived, backward_pass
from .gradient_hooks import keep_gradient, keeps_gradient
from .graph import topological_order
from .modes import _modes
from .node import Node
from .origin import check_finite, user_frame, warn_grad_of_a_result
from .arrays import ARRAYS, as_array, holds_traced, stacked_list
from .primitive import Box, _foreign_array, objects_refused, raw, refuse_mismatch
from .saved import (FREED, copied, copied_keywords, free, hold, reached,
                    share_version_counter)
from .methods.interop import TensorInterop
from .methods.torch_tensor import TensorTorchMethods

__all__ = ["Tensor"]


# ---------------------------------------------------------------------------------------
# 1. Recording
# ---------------------------------------------------------------------------------------

def _record(prim, args, kwargs):
    """Run a primitive on arguments among which are Tensors; record a node if needed.

    One pass over the arguments collects what the forward needs (the arrays) and what
    backward will need: which arguments require grad, and the version of every tensor
    argument now, so that backward can refuse if one is written in place before it runs
    (the counters are kept, not the tensors, so the node holds no reference to itself).
    In a cr.jit trace (this thread's), the tensors among the arguments first become
    inputs of the program, so that none of their numbers is a constant by mistake.
    """
    if xp.recorders_open[0] and xp.recorder() is not None:
        for arg in args:
            if isinstance(arg, Tensor):
                xp.touch(arg)
    recording = _modes.grad_enabled
    arrays, operands, grad_argnums, versions = [], [], [], []
    leaves = []  # tensors no recorded operation made, whose arrays the node will save
    unlocked = []  # positions of NumPy arrays the user may still write into
    for i, arg in enumerate(args):
        if isinstance(arg, Tensor):
            arrays.append(arg._data)
            if not arg._prev:
                leaves.append(arg)
            version = arg._version
            versions.append((version, version[0]))
            if recording and arg.requires_grad:
                operands.append(arg)
                grad_argnums.append(i)
        else:
            arrays.append(arg)
            if type(arg) is np.ndarray and arg.flags.writeable:
                unlocked.append(i)
    keeping = prim.keeps_residual and grad_argnums
    if keeping:  # a speed override (chainrule.rules.fused) keeps what its VJP can reuse
        ans, residual = prim.forward_keeping(*arrays, **kwargs)
    else:
        try:
            ans = prim.forward(*arrays, **kwargs)
        except ValueError as err:  # (operands that do not fit: say so with their shapes)
            refuse_mismatch(prim, arrays, err)
            raise
    if type(ans) is not np.ndarray:
        ans = as_array(ans)
    if _modes.anomaly:
        check_finite(ans, f"{prim.name} (forward)", user_frame())
    if grad_argnums and ans.dtype.hasobject:
        raise objects_refused(prim.name)
    if grad_argnums and ans.dtype.kind in "biu":  # an integer result (x.long()): no
        grad_argnums = []                          # gradient, as in PyTorch
    node = Tensor._make(ans, requires_grad=bool(grad_argnums))
    if ans.base is not None:  # a view: writing into it writes into its operand
        share_version_counter(node, args)
    if not grad_argnums:
        return node
    for argnum in grad_argnums:  # (the dict first: no method call in the usual case)
        if argnum not in prim.vjps and not prim.differentiable(argnum):
            raise TypeError(f"{prim.name}: argument {argnum} requires grad, but the "
                            f"operation is not differentiable with respect to it")
    if unlocked:
        args = copied(args, arrays, unlocked)
    node._prev = tuple(operands)
    node._op = prim
    node._args = args
    node._raw_args = arrays  # what the rules take; the version check guards it
    node._kwargs = copied_keywords(kwargs) if kwargs else kwargs  # (a user's index)
    node._grad_argnums = tuple(grad_argnums)
    versions.append((node._version, node._version[0]))
    node._versions = versions
    if keeping:
        node._residual = residual
    if leaves:
        hold(leaves, node)
    return node


# ---------------------------------------------------------------------------------------
# 2. Tensor
# ---------------------------------------------------------------------------------------

def _refuse_a_dropped_derivative(what, value, instead="x = x.at[index].set(y)"):
    """Raise where a write would copy numbers that carry a derivative (a Tensor that
    requires grad, while grad is on; any transform's traced value) into a tensor that
    records nothing: the written entries would silently lose it."""
    while isinstance(value, Box):
        if not value._batched and (getattr(value, "requires_grad", None) is None or (
                value.requires_grad and _modes.grad_enabled)):
            raise RuntimeError(
                f"{what}: the value written carries a derivative (it requires grad), "
                f"and the tensor written into records nothing, so the derivative would "
                f"be lost; write {instead}, which records it, or y.detach() to write "
                f"the numbers alone")
        value = value._contents()


class Tensor(Node, TensorInterop, TensorTorchMethods, ArrayMethods):
    """An n-dimensional array that records the operations that made it.

    >>> x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = (x @ x.T).relu().sum()
    >>> y.backward()
    >>> x.grad            # an ndarray, same shape as x
    array([[ 8., 12.],
           [ 8., 12.]])

    ``data`` is the ndarray, ``grad`` the accumulated gradient (an ndarray, or None).
    A Tensor made by an operation on tensors that require grad requires grad too, and
    is a node of the graph: it keeps its operands, its operation and the arguments the
    rules need (the fields of ``node.Node``).
    """

    __slots__ = ("_data", "_grad", "requires_grad", "_version", "_holders")
    _level = 0  # a forward-mode tracer (level >= 1) handles an operation before a Tensor

    __array_priority__ = 1000  # ndarray + Tensor calls Tensor.__radd__

    def __init__(self, data: ArrayLike, requires_grad: bool = False,
                 dtype: DTypeLike = None) -> None:
        self._data = _as_array(data, dtype)
        self._init(requires_grad)

    __reduce__ = pickling.reduce_tensor  # pickled and deep-copied as a new leaf

    @classmethod
    def _make(cls, array, requires_grad=False):
        self = object.__new__(cls)
        self._data = array
        self._init(requires_grad)
        return self

    def _init(self, requires_grad):
        if requires_grad and self._data.dtype.kind not in "fc":
            self._set_requires_grad(True, "tensor")  # raises, naming the dtype
        self.requires_grad = bool(requires_grad)
        self._grad = None
        self._prev = ()
        self._op = None
        self._args = self._kwargs = None
        self._grad_argnums = self._versions = ()
        # In-place writes bump the version; views and detach() share their base's
        # counter (a one-element list), as they share its memory.
        self._version = [0]
        self._retain = False
        self._holders = None  # the nodes whose graphs saved its array (read-only)
        self._leaves = ()
        self._origin = user_frame() if _modes.anomaly else None

    def _contents(self):
        if xp.recorders_open[0]:
            return self._array()
        return self._data

    def _array(self):
        """The array, for code that reads it outside the table's operations. In a cr.jit
        trace, the tensor first becomes part of the program (its array an input read at
        every run), so that nothing read from it is a constant by mistake."""
        if xp.recorders_open[0] and xp.recorder() is not None:
            xp.touch(self)
        return self._data

    _apply_primitive = staticmethod(_record)  # (prim, args, kwargs): record a node

    _plain = staticmethod(lambda array: Tensor._make(array))  # np.isnan(t): no graph

    # --- the array -----------------------------------------------------------------

    @property
    def data(self):
        """The values, an ndarray (no copy); assigning a new array bumps the version.

        The array of a result that a graph recorded is read-only, and so is an input's
        while a recorded graph that has not run backward holds it: writing into it would
        change the gradient that backward computes."""
        if self._prev or self._holders is not None:
            reached(self)
        data = self._array() if xp.recorders_open[0] else self._data
        return data if type(data) is np.ndarray else tensor_data.users(data)

    @data.setter
    def data(self, value):
        # Replacing the array (t.data = ..., t.data += ...) bumps the version, so a
        # backward pass that saved the old values can tell, and refuse.
        if xp.recorders_open[0] and xp.recorder() is not None:  # cr.jit: what
            # it was becomes an input of the program
            xp.touch(self)
        self._data = value if type(value) in ARRAYS else _as_array(value, None)
        self._holders = None  # (the graphs keep the old array, locked)
        self._version[0] += 1

    @property
    def grad(self) -> Any:  # (an ndarray, a Tensor or None, by what ran: see below)
        """The gradient backward() accumulated: an ndarray of the tensor's shape (a
        Tensor after ``backward(create_graph=True)``), or None.

        backward() fills it for leaves only (inputs, parameters); reading it on a result
        of an operation warns, unless ``retain_grad()`` asked to keep that one too."""
        if xp.recorders_open[0]:
            self._array()  # (a cr.jit trace: the tensor joins the program first)
        if self._prev and self._grad is None and not keeps_gradient(self):
            warn_grad_of_a_result(self)
        return self._grad

    @grad.setter
    def grad(self, value):
        if xp.recorders_open[0] and xp.recorder() is not None:  # cr.jit: what
            # it was becomes an input of the program
            xp.touch(self)
        self._grad = value if type(value) is np.ndarray else tensor_data.users(value)

    shape = property(lambda self: self._data.shape, doc="The length of each axis, a tuple.")
    ndim = property(lambda self: self._data.ndim, doc="The number of axes.")
    dtype = property(lambda self: self._data.dtype,
                     doc="The NumPy dtype of the entries (float64 unless told).")
    is_leaf = property(lambda self: not self._prev,
                       doc="True for a tensor no recorded operation made: an input or a "
                           "parameter.")

    def clone(self) -> "Tensor":
        """A copy of the values in new memory, in the graph (its gradient flows back to
        this tensor), as PyTorch's clone.

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x.clone()
        >>> y.sum().backward()
        >>> x.grad.tolist(), np.shares_memory(x.data, y.data)
        ([1.0, 1.0], False)
        """
        return ops.multiply(self, 1)

    def argmax(self, axis: int | None = None, dim: int | None = None,
               keepdims: bool = False, keepdim: bool = False) -> "Tensor":
        """The index of the largest entry (along ``axis``): an int64 Tensor, outside the
        graph, as in PyTorch (``(logits.argmax(1) == y).float().mean()``).

        >>> cr.tensor([1.0, 3.0, 2.0]).argmax()
        tensor(1)
        """
        return self._indices(np.argmax, axis, dim, keepdims or keepdim)

    def argmin(self, axis: int | None = None, dim: int | None = None,
               keepdims: bool = False, keepdim: bool = False) -> "Tensor":
        """The index of the smallest entry (along ``axis``): an int64 Tensor.

        >>> cr.tensor([1.0, 3.0, 2.0]).argmin()
        tensor(0)
        """
        return self._indices(np.argmin, axis, dim, keepdims or keepdim)

    def _indices(self, find, axis, dim, keepdims):
        found = find(self._array(), axis=axis if dim is None else dim, keepdims=keepdims)
        return Tensor._make(np.asarray(found) if isinstance(found, np.generic) else found)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def __iter__(self): return (self[i] for i in range(len(self)))

    def __repr__(self):
        body = tensor_data.text(self._data)
        extras = ""
        if self._data.dtype not in _DTYPES_UNSAID:
            extras += f", dtype={self._data.dtype}"
        if self._op is not None:
            extras += f", grad_fn={self._op.name}"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        return f"tensor({body}{extras})"

    def detach(self) -> "Tensor":
        """The same array, cut from the graph (no copy, so it shares the version counter).

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> y = (x * 3).detach()                  # the numbers, without the graph
        >>> y
        tensor([3., 6.])
        >>> y.requires_grad
        False
        """
        out = Tensor._make(self._array())
        out._version = self._version
        return out

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Switch recording on (or off, for a leaf) for this tensor, in place; returns it.

        >>> w = cr.zeros(2)
        >>> w.requires_grad_()
        tensor([0., 0.], requires_grad=True)
        """
        if self._prev and not requires_grad:
            raise RuntimeError("requires_grad_: the result of an operation cannot stop "
                               "requiring grad; use .detach() for a copy outside the graph")
        self._set_requires_grad(requires_grad, "requires_grad_")
        return self

    def _set_requires_grad(self, requires_grad, who):
        if requires_grad and self._data.dtype.kind not in "fc":
            raise TypeError(f"{who}: only floating-point and complex tensors can require "
                            f"grad, got dtype {self._data.dtype}")
        self.requires_grad = bool(requires_grad)

    def zero_grad(self) -> None:
        """Forget the accumulated gradient (``.grad`` becomes None).

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad.tolist()
        [2.0, 4.0]
        >>> x.zero_grad()
        >>> x.grad is None
        True
        """
        self.grad = None

    def retain_grad(self) -> "Tensor":
        """Keep the gradient of this intermediate result in ``.grad`` at backward();
        returns the tensor.

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> h = (x * 3).retain_grad()             # an intermediate result
        >>> (h * h).sum().backward()
        >>> h.grad.tolist(), x.grad.tolist()      # 2h, and 2h * 3
        ([6.0, 12.0], [18.0, 36.0])
        """
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        keep_gradient(self)
        return self

    # --- in-place updates: a tensor that requires grad only inside no_grad(), and never
    # into values a graph that can still be walked saved (saved.py) -------------------

    def __setitem__(self, index, value):
        what = f"tensor[{describe_index(index)}] = ..."
        if self.requires_grad and _modes.grad_enabled:
            raise RuntimeError(
                f"{what}: this tensor requires grad, and writing into it would make its "
                f"gradient wrong; use the differentiable x.at[index].set(value) (or "
                f".add(value)), which returns a new tensor, or write inside cr.no_grad()")
        self._refuse_if_saved(what)
        _refuse_a_dropped_derivative(what, value)
        self._array()[raw_index(index)] = raw(value)
        self._version[0] += 1

    def _refuse_if_saved(self, what):
        """Raise where a write would change values a graph that can be walked saved."""
        if self._prev or self._holders is not None:
            reached(self)
        saved = self._holders is not None or (self._prev and self._versions is not FREED)
        if not saved and type(self._data) is np.ndarray and not self._data.flags.writeable \
                and any(step == 0 and n > 1 for step, n in zip(self._data.strides,
                                                               self._data.shape)):
            raise RuntimeError(
                f"{what}: this tensor (shape {self.shape}) is a broadcast view, as expand() "
                f"makes, whose entries share numbers, so a write cannot go into one entry; "
                f"write into a copy (x = x.clone())")
        if saved or (type(self._data) is np.ndarray and not self._data.flags.writeable):
            made = f", the result of {self._op.name}" if self._op is not None else ""
            raise RuntimeError(
                f"{what}: the values of this tensor (shape {self.shape}{made}) are saved "
                f"by a recorded graph that can still be walked, and writing into them "
                f"would make its gradient wrong; call backward() first (it frees the "
                f"graph), or write x = x + y (a new tensor)")

    def _inplace(self, op, ufunc, other, what=None, instead=None, scale=1):
        what, instead = what or f"x {op}= y", instead or f"x = x {op} y"
        if self.requires_grad and _modes.grad_enabled:
            raise RuntimeError(
                f"{what}: in-place operations on a tensor that requires grad would "
                f"make its gradient wrong; write {instead}, or update x inside "
                f"cr.no_grad() (as an optimizer does)")
        _refuse_a_dropped_derivative(what, other, instead)
        self._refuse_if_saved(what)
        data, value = self._array(), raw(other)
        try:
            ufunc(data, value if scale == 1 else scale * value, out=data, casting="same_kind")
        except TypeError as err:  # (NumPy's casting error names neither the call nor x)
            if "cast" not in str(err):
                raise
            raise TypeError(f"{what}: cannot write {np.result_type(value)} values into a "
                            f"tensor of dtype {data.dtype} in place (it would drop "
                            f"information); write x = x.astype(...) first") from None
        self._version[0] += 1
        return self

    def __iadd__(self, other): return self._inplace("+", np.add, other)
    def __isub__(self, other): return self._inplace("-", np.subtract, other)
    def __imul__(self, other): return self._inplace("*", np.multiply, other)
    def __itruediv__(self, other): return self._inplace("/", np.true_divide, other)

    # Operators and methods come from ArrayMethods (PyTorch's: methods/torch_names.py,
    # and a Tensor's own, methods/torch_tensor.py).

    # comparisons give boolean tensors, outside the graph (they have no derivative)
    def __lt__(self, other): return Tensor._make(self._array() < raw(other))
    def __le__(self, other): return Tensor._make(self._array() <= raw(other))
    def __gt__(self, other): return Tensor._make(self._array() > raw(other))
    def __ge__(self, other): return Tensor._make(self._array() >= raw(other))
    def __eq__(self, other): return Tensor._make(self._array() == raw(other))
    def __ne__(self, other): return Tensor._make(self._array() != raw(other))
    __hash__ = object.__hash__  # identity, as for any graph node

    # --- backward ----------------------------------------------------------------------

    def backward(self, gradient: ArrayLike | None = None, create_graph: bool = False,
                 explain: bool | dict[str, Any] = False,
                 retain_graph: bool | None = None) -> None:
        """Accumulate d(self)/d(leaf), times ``gradient``, into ``.grad`` of every leaf
        that requires grad (a vector-Jacobian product: ``gradient`` is the vector).

        A scalar needs no ``gradient``; for a non-scalar, pass one of its shape (or
        reduce first, with ``.sum()``). Gradients accumulate over calls, as in PyTorch:
        clear them with ``zero_grad()``. Intermediate results keep their gradient only
        if you asked with ``retain_grad()``. With ``create_graph=True`` the gradients
        are Tensors that can be differentiated again.

        The walk frees the graph, as in PyTorch: a second backward() through it raises,
        and the arrays it saved become writable again (an optimizer updates them).
        ``retain_graph=True`` keeps it for another walk (its saved arrays stay
        read-only meanwhile); ``create_graph=True`` keeps it too.

        ``explain=True`` prints each vector-Jacobian product as it is taken, with the
        shapes it maps between (see chainrule.explain); ``explain={"x": x, ...}`` (or
        ``locals()``) names the tensors.

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * x                             # not a scalar: pass the vector
        >>> y.backward(gradient=[1.0, 10.0])
        >>> x.grad.tolist()                       # [1, 10] times dy/dx = 2x
        [2.0, 40.0]
        >>> (x * x).sum().backward()              # gradients add up over calls
        >>> x.grad.tolist()
        [4.0, 44.0]
        >>> b = cr.tensor(0.5, requires_grad=True)    # 0-d, broadcast against x
        >>> (x + b).sum().backward()
        >>> b.grad.tolist()
        2.0
        >>> type(b.grad).__name__    # an ndarray, 0-d here, like b
        'ndarray'
        """
        if not self.requires_grad:
            raise RuntimeError("backward: this tensor does not require grad, so there is "
                               "no graph to differentiate; create the inputs with "
                               "requires_grad=True")
        seed = _seed_gradient(self, gradient)
        trace = xp.recorder()
        if trace is not None:  # cr.jit: name the part of the program that follows
            trace.mark("backward")
        if create_graph:
            seed = Tensor._make(seed)
        order = topological_order(self)
        on_step = None
        if explain:  # tell each step (chainrule.explain); it prints the start now
            from .explain import TensorStory
            on_step = TensorStory(self, explain, order, seed).step
        seeds = {id(self): (self, seed, False)}
        arrived = backward_pass(seeds, order, create_graph, on_step=on_step) if order \
            else seeds  # the root is a leaf: d(self)/d(self) = 1
        accumulate_arrived(arrived)
        if not (create_graph if retain_graph is None else retain_graph):
            free(order)
        if trace is not None:
            trace.mark("forward")


def _seed_gradient(root, gradient):
    if tensor_data.foreign(root._data):  # another library's (torch, Dask...): in it
        return tensor_data.seed(root._data, raw(gradient))
    if gradient is None:
        if root._data.dtype.kind == "c":  # (as PyTorch and JAX's grad refuse)
            raise RuntimeError("backward: the output is complex; reduce it to a real "
                               "one (abs(y) ** 2, y.real) or pass gradient=")
        if root._data.size != 1:
            raise RuntimeError(
                f"backward: the output has shape {root._data.shape}, not a scalar; pass "
                f"gradient= (an array of that shape: the vector of the vector-Jacobian "
                f"product) or reduce the output first, e.g. y.sum().backward()")
        if root._data.ndim == 0:  # the usual loss (np.array is 3x faster than ones_like)
            return np.array(1, root._data.dtype)
        return np.ones_like(root._data)
    gradient = np.asarray(gradient._data if isinstance(gradient, Tensor) else gradient,
                          dtype=root._data.dtype)
    if gradient.shape != root._data.shape:
        raise ValueError(f"backward: gradient has shape {gradient.shape}, expected the "
                         f"output's shape {root._data.shape}")
    return gradient


# ---------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------

def _as_array(data, dtype):
    if isinstance(data, Tensor):
        if data.requires_grad:  # (a copy would silently drop the graph)
            raise TypeError("tensor: the data is a Tensor in a graph; use x.clone() for a "
                            "copy in the graph, or x.detach() for one outside it")
        data = data._data
    if type(data) is not np.ndarray and type(data) in ARRAYS:  # traced (cr.jit): a copy
        array = data.copy() if dtype is None else data.astype(dtype)
    elif type(data) in (list, tuple) and holds_traced(data):  # (cr.jit: their stack,
        array = stacked_list(data)                            # which the program makes)
        if dtype is not None:
            array = array.astype(dtype)
    elif _foreign_array(data) and (foreign := tensor_data.adopted(data, dtype)) is not None:
        return foreign  # torch, Dask...: kept in its library (tensor_data.py)
    elif dtype is not None:
        return np.array(data, dtype=dtype)
    else:
        array = np.array(data)
    if dtype is not None or array.dtype.kind in "fcbiu":
        return array  # integers stay integers, as in PyTorch and NumPy (cr.tensor([1, 2])
        # is int64: an index, a label; float64 is asked for, or comes from floats)
    if array.dtype == object and _all_numbers(array):
        return array.astype(np.float64)
    raise TypeError(f"tensor: cannot make a numeric tensor from {type(data).__name__} "
                    f"of dtype {array.dtype}")


# dtypes a repr leaves unsaid, the defaults (PyTorch's: its float and its int64, and bool,
# whose entries say it)
_DTYPES_UNSAID = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool))


def _all_numbers(array):
    return all(isinstance(x, Number) for x in array.flat)

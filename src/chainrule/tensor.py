"""The tensor engine: NumPy arrays that remember how they were made.

Read this file in three parts:

1. **Primitive**: an operation on raw NumPy arrays together with its derivative rules
   (``defvjp`` for reverse mode, ``defjvp`` for forward mode). Called on Tensors that
   require grad, it records a graph node; called on plain numbers and arrays, it is just
   the NumPy function. All operations, with their rules, are in ``derivatives.py``.
2. **Tensor**: the array, its gradient, and the methods and operators users type.
3. **backward()**: walk the graph from the output back to the inputs; at each node, ask
   the rule of each operand for its vector-Jacobian product, fit it to the operand
   (undo broadcasting, keep the dtype), and pass it on.

The rules are written with the same operations, so during an ordinary backward pass
they run on raw arrays (fast), and with ``create_graph=True`` on Tensors, building the
graph of the gradient, which can be differentiated again.
"""

import os
import traceback
from numbers import Number

import numpy as np

from .graph import _modes, nodes_towards, topological_order
from .value import Value

__all__ = ["Tensor", "Primitive", "primitive", "gradients", "tensor", "zeros", "ones", "full", "eye",
           "arange", "linspace", "zeros_like", "ones_like", "rand", "randn"]


# ---------------------------------------------------------------------------------------
# 1. Primitive
# ---------------------------------------------------------------------------------------

class Primitive:
    """An operation NumPy can compute, made differentiable by its rules.

    ``forward(*args, **kwargs)`` works on raw arrays and numbers. ``defvjp`` takes one
    function per positional argument, ``vjp(g, ans, *args, **kwargs)``: given the
    gradient ``g`` of the result, the gradient with respect to that argument (its
    shape may be the broadcast shape: the engine sums it back). ``defjvp`` takes
    ``jvp(t, ans, *args, **kwargs)``: the tangent of the result caused by the tangent
    ``t`` of that argument. An argument without a rule is not differentiable.

    ``jacrev`` and ``jacfwd`` push a whole batch of cotangents or tangents through the
    rules at once (extra leading axes). A user's rule is called once per row of that
    batch, unless ``prim.batch_safe = True`` says it handles leading axes itself (an
    elementwise rule like ``g * 3 * x ** 2`` does).

    >>> cube = cr.Primitive(lambda x: x ** 3, "cube")
    >>> _ = cube.defvjp(lambda g, ans, x: g * 3 * x ** 2)      # d/dx x**3 = 3x**2
    >>> _ = cube.defjvp(lambda t, ans, x: t * 3 * x ** 2)
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> y = cube(x)
    >>> y
    tensor([1., 8.], grad_fn=cube)
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [3.0, 12.0]
    >>> cr.jvp(cube, (2.0,), (1.0,))                # forward mode uses the jvp rule
    (8.0, 12.0)
    """

    def __init__(self, forward, name=None):
        self.forward = forward
        self.name = name or forward.__name__
        self.vjps = {}
        self.jvps = {}
        self.vjp_any = None  # for operations with any number of arguments (concatenate)
        self.vjp_all = None  # one rule for every argument at once (shared work: linear)
        self.jvp_any = None
        self.value_impl = None  # the scalar engine's version, for Value arguments
        self.broadcasts = False  # broadcasts its operands against each other (add, ...)
        # Whether the rules work on a batch of cotangents or tangents (extra leading
        # axes). The library's are written so, and tested; a user's rules are called
        # once per row of the batch unless the user says so.
        self.batch_safe = False
        # Optionally, a forward that also returns what the VJP can reuse instead of
        # computing it again (JAX calls these residuals): (*args) -> (ans, residual).
        # A recorded node keeps the residual, and an ordinary backward pass gives it to
        # the VJP rules as ``residual=``; a rule must also work without it (None), as
        # it is when the gradient's own graph is built (create_graph).
        self.forward_with_residual = None
        self.__doc__ = forward.__doc__
        self.__wrapped__ = forward

    def __repr__(self):
        return f"<primitive {self.name}>"

    def defvjp(self, *vjps):
        """Reverse-mode rules, one per positional argument (None: not differentiable)."""
        for argnum, vjp in enumerate(vjps):
            if vjp is not None:
                self.vjps[argnum] = vjp
        return self

    def defjvp(self, *jvps):
        """Forward-mode rules, one per positional argument (None: not differentiable)."""
        for argnum, jvp in enumerate(jvps):
            if jvp is not None:
                self.jvps[argnum] = jvp
        return self

    def defvjp_any(self, vjp):
        """One rule for every argument: ``vjp(argnum, g, ans, *args, **kwargs)``."""
        self.vjp_any = vjp
        return self

    def defvjp_all(self, vjp):
        """One rule for all the arguments at once, for operations whose gradients share
        work (as PyTorch's ``autograd.Function.backward`` and JAX's ``custom_vjp``
        return them together): ``vjp(g, ans, *args, needs=(bool, ...), **kwargs)``
        returns a tuple with the gradient of each positional argument, None where
        ``needs`` says no one asked for it. Every positional argument is differentiable.

        >>> mul = cr.Primitive(lambda x, y: x * y, "mul")
        >>> _ = mul.defvjp_all(lambda g, ans, x, y, needs:
        ...                    (g * y if needs[0] else None, g * x if needs[1] else None))
        >>> x = cr.tensor(3.0, requires_grad=True)
        >>> mul(x, cr.tensor(4.0)).backward()         # needs is (True, False) here
        >>> x.grad.tolist()
        4.0
        """
        self.vjp_all = vjp
        return self

    def defjvp_any(self, jvp):
        """One forward-mode rule for every argument: ``jvp(argnum, t, ans, *args)``."""
        self.jvp_any = jvp
        return self

    def vjp_rule(self, argnum):
        """The reverse-mode rule for argument ``argnum``, or None."""
        rule = self.vjps.get(argnum)
        if rule is None and self.vjp_any is not None:
            any_rule = self.vjp_any
            return lambda g, ans, *args, **kwargs: any_rule(argnum, g, ans, *args, **kwargs)
        if rule is None and self.vjp_all is not None:
            all_rule = self.vjp_all

            def one_of_all(g, ans, *args, **kwargs):
                needs = tuple(i == argnum for i in range(len(args)))
                vjp = all_rule(g, ans, *args, needs=needs, **kwargs)[argnum]
                if vjp is None:
                    raise TypeError(f"{self.name}: its defvjp_all rule gave None for "
                                    f"argument {argnum}, which needs a gradient")
                return vjp
            return one_of_all
        return rule

    def __call__(self, *args, **kwargs):
        for arg in args:
            if type(arg) not in _PLAIN:  # a Tensor, tracer or Value among the arguments
                return self._dispatch(args, kwargs)
        return self.forward(*args, **kwargs)

    def _dispatch(self, args, kwargs):
        tensors = False
        for arg in args:
            if isinstance(arg, Traced):  # forward mode: carry tangents (forward.py)
                return arg._apply_primitive(self, args, kwargs)
            if isinstance(arg, Tensor):
                tensors = True
        if tensors:
            return _apply(self, args, kwargs)
        for arg in args:
            if isinstance(arg, Value):
                if self.value_impl is not None:
                    return self.value_impl(*args, **kwargs)
                return _apply_to_values(self, args, kwargs)
        return self.forward(*args, **kwargs)


class Traced:
    """The base of values that carry more than a number through the operations: the
    forward-mode tracer of ``forward.py``. A Primitive called on one hands over to it."""

    __slots__ = ()


# Arguments that need no dispatch: what a rule passes around in an ordinary backward
# pass. One set lookup per argument keeps a primitive on raw arrays nearly free.
_PLAIN = frozenset({np.ndarray, float, int, bool, np.float64, np.float32, np.int64,
                    np.bool_, type(None), tuple, list, slice, str, np.dtype})


def primitive(forward=None, *, name=None):
    """Decorator: turn a NumPy function into a differentiable operation (add its rules
    with ``.defvjp`` and ``.defjvp``).

    The operation then works on Tensors, arrays, numbers and Values, in every
    transform; ``cr.gradcheck`` checks the rules against central differences.

    >>> @cr.primitive
    ... def cube(x):
    ...     return x ** 3
    >>> _ = cube.defvjp(lambda g, ans, x: g * 3 * x ** 2)
    >>> cr.grad(cube)(2.0)                          # 3 * 2**2
    12.0
    """
    if forward is None:
        return lambda f: Primitive(f, name)
    return Primitive(forward, name)


def _apply(prim, args, kwargs):
    """Run a primitive on arguments among which are Tensors; record a node if needed.

    One pass over the arguments collects what the forward needs (the arrays) and what
    backward will need: which arguments require grad, and the version of every tensor
    argument now, so that backward can refuse if one is written in place before it runs
    (the counters are kept, not the tensors, so the node holds no reference to itself).
    """
    recording = _modes.grad_enabled
    raw, operands, grad_argnums, versions = [], [], [], []
    for i, arg in enumerate(args):
        if isinstance(arg, Tensor):
            raw.append(arg._data)
            version = arg._version
            versions.append((version, version[0]))
            if recording and arg.requires_grad:
                operands.append(arg)
                grad_argnums.append(i)
        else:
            raw.append(arg)
    keeping = prim.forward_with_residual is not None and grad_argnums
    if keeping:
        ans, residual = prim.forward_with_residual(*raw, **kwargs)
    else:
        ans = prim.forward(*raw, **kwargs)
    if type(ans) is not np.ndarray:
        ans = np.asarray(ans)
    if _modes.anomaly:
        _check_finite(ans, f"{prim.name} (forward)", _user_frame())
    node = Tensor._make(ans, requires_grad=bool(grad_argnums))
    if ans.base is not None:  # a view: writing into it writes into its operand
        _share_version_counter(node, args)
    if not grad_argnums:
        return node
    if prim.vjp_any is None and prim.vjp_all is None:
        for argnum in grad_argnums:
            if argnum not in prim.vjps:
                raise TypeError(f"{prim.name}: argument {argnum} requires grad, but the "
                                f"operation is not differentiable with respect to it")
    node._prev = tuple(operands)
    node._op = prim
    node._args = args
    node._raw_args = raw  # what the rules take; the version check guards it
    node._kwargs = kwargs
    node._grad_argnums = tuple(grad_argnums)
    versions.append((node._version, node._version[0]))
    node._versions = versions
    if keeping:
        node._residual = residual
    return node


def _share_version_counter(view, args):
    for arg in args:
        if isinstance(arg, Tensor) and np.may_share_memory(view._data, arg._data):
            view._version = arg._version
            return


def _apply_to_values(prim, args, kwargs):
    """A primitive on the scalar engine: one Value node whose operands are the Value
    arguments (the others, axis=None and the like, are constants) and whose partial
    derivatives are the VJP rules at g = 1 (for a scalar function, the VJP is g times
    the derivative)."""
    positions = [i for i, arg in enumerate(args) if isinstance(arg, Value)]
    rules = [prim.vjp_rule(argnum) for argnum in positions]
    for argnum, rule in zip(positions, rules):
        if rule is None:
            raise TypeError(f"{prim.name}: argument {argnum} is a Value, but the operation "
                            f"has no VJP rule for it; define one with .defvjp()")
    data = np.asarray(prim.forward(*[a.data if isinstance(a, Value) else a for a in args],
                                   **kwargs))
    if data.shape != ():
        raise TypeError(f"{prim.name} on a Value gives an array of shape {data.shape}; "
                        f"the scalar engine holds single numbers: use a NumPy array or "
                        f"a Tensor")

    def partials(ans, *operands):
        full = list(args)
        for argnum, operand in zip(positions, operands):
            full[argnum] = operand
        return tuple(rule(1.0, ans, *full, **kwargs) for rule in rules)

    return Value(float(data), tuple(args[i] for i in positions), prim.name, _rule=partials)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_frame():
    """'file:line in function' of the first caller outside chainrule's own files (not
    any folder that happens to be called chainrule, such as a clone of this project)."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR):
            return f"{frame.filename}:{frame.lineno} in {frame.name}"
    return "unknown"


def _check_finite(array, what, origin):
    array = array._data if isinstance(array, Tensor) else np.asarray(array)
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        bad = "nan" if np.isnan(array).any() else "inf"
        where = (f"; the tensor was created at {origin}" if origin else
                 "; run the forward pass inside detect_anomaly() too, to see the line "
                 "that created the tensor")
        raise FloatingPointError(f"detect_anomaly: {what} produced {bad}{where}")


# ---------------------------------------------------------------------------------------
# 2. Tensor
# ---------------------------------------------------------------------------------------

class ArrayOperators:
    """The operators of anything the operations of derivatives.py accept: Tensor, and
    the forward-mode tracer. Each is the module's differentiable operation."""

    __slots__ = ()

    def __add__(self, other): return _ops.add(self, other)
    def __radd__(self, other): return _ops.add(other, self)
    def __sub__(self, other): return _ops.subtract(self, other)
    def __rsub__(self, other): return _ops.subtract(other, self)
    def __mul__(self, other): return _ops.multiply(self, other)
    def __rmul__(self, other): return _ops.multiply(other, self)
    def __truediv__(self, other): return _ops.divide(self, other)
    def __rtruediv__(self, other): return _ops.divide(other, self)
    def __pow__(self, other): return _ops.power(self, other)
    def __rpow__(self, other): return _ops.power(other, self)
    def __matmul__(self, other): return _ops.matmul(self, other)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __neg__(self): return _ops.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.absolute(self)
    def __getitem__(self, index): return _ops.getitem(self, index=_raw_index(index))

    @property
    def T(self):
        """The axes in reverse order (a transpose, differentiable).

        >>> cr.tensor([[1.0, 2.0, 3.0]]).T.shape       # (1, 3) -> (3, 1)
        (3, 1)
        """
        return _ops.transpose(self)

    @property
    def at(self):
        """JAX's functional updates: ``x.at[idx].set(v)`` and ``x.at[idx].add(v)``
        return new tensors, differentiable in both x and v (x itself is unchanged).

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

    def astype(self, dtype):
        """The values cast to ``dtype``; the gradient is cast back to the input's dtype.

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x.astype(np.float32)
        >>> y
        tensor([1., 2.], dtype=float32, grad_fn=astype)
        >>> y.sum().backward()
        >>> x.grad.dtype
        dtype('float64')
        """
        return _ops.astype(self, np.dtype(dtype))


class Tensor(ArrayOperators):
    """An n-dimensional array that records the operations that made it.

    >>> x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = (x @ x.T).relu().sum()
    >>> y.backward()
    >>> x.grad            # an ndarray, same shape as x
    array([[ 8., 12.],
           [ 8., 12.]])

    ``data`` is the ndarray, ``grad`` the accumulated gradient (an ndarray, or None).
    A Tensor made by an operation on tensors that require grad requires grad too, and
    keeps its operands (``_prev``), its operation (``_op``), and the arguments the rules
    need (``_args``, ``_kwargs``, and ``_raw_args``: the same with each Tensor's array).
    """

    __slots__ = ("_data", "grad", "requires_grad", "_prev", "_op", "_args", "_kwargs",
                 "_raw_args", "_grad_argnums", "_versions", "_version", "_retain", "_origin",
                 "_residual", "__weakref__")

    __array_priority__ = 1000  # ndarray + Tensor calls Tensor.__radd__

    def __init__(self, data, requires_grad=False, dtype=None):
        self._data = _as_array(data, dtype)
        self._init(requires_grad)

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
        self.grad = None
        self._prev = ()
        self._op = None
        self._args = self._kwargs = None
        self._grad_argnums = self._versions = ()
        # In-place writes bump the version; views and detach() share their base's
        # counter (a one-element list), as they share its memory.
        self._version = [0]
        self._retain = False
        self._origin = _user_frame() if _modes.anomaly else None

    # --- the array -----------------------------------------------------------------

    @property
    def data(self):
        """The values, an ndarray (no copy); assigning a new array bumps the version."""
        return self._data

    @data.setter
    def data(self, value):
        # Replacing the array (t.data = ..., t.data += ...) bumps the version, so a
        # backward pass that saved the old values can tell, and refuse.
        self._data = _as_array(value, None) if not isinstance(value, np.ndarray) else value
        self._version[0] += 1

    shape = property(lambda self: self._data.shape, doc="The length of each axis, a tuple.")
    ndim = property(lambda self: self._data.ndim, doc="The number of axes.")
    size = property(lambda self: self._data.size, doc="The number of entries.")
    dtype = property(lambda self: self._data.dtype,
                     doc="The NumPy dtype of the entries (float64 unless told).")
    is_leaf = property(lambda self: not self._prev,
                       doc="True for a tensor no recorded operation made: an input or a "
                           "parameter.")

    def item(self):
        """The single number of a one-element tensor, as a Python number.

        >>> cr.tensor([[3.5]]).item()
        3.5
        """
        return self._data.item()

    def numpy(self):
        """The ndarray itself (no copy), the same as ``.data``.

        >>> x = cr.tensor([1.0, 2.0])
        >>> x.numpy()
        array([1., 2.])
        >>> x.numpy() is x.data
        True
        """
        return self._data

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __float__(self):
        return float(self._data)

    def __int__(self):
        return int(self._data)

    def __bool__(self):
        return bool(self._data)

    def __repr__(self):
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extras = ""
        if self._data.dtype != np.float64:
            extras += f", dtype={self._data.dtype}"
        if self._op is not None:
            extras += f", grad_fn={self._op.name}"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        return f"tensor({body}{extras})"

    def detach(self):
        """The same array, cut from the graph (no copy, so it shares the version counter).

        >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
        >>> y = (x * 3).detach()                  # the numbers, without the graph
        >>> y
        tensor([3., 6.])
        >>> y.requires_grad
        False
        """
        out = Tensor._make(self._data)
        out._version = self._version
        return out

    def requires_grad_(self, requires_grad=True):
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
            raise TypeError(f"{who}: only floating-point tensors can require grad, "
                            f"got dtype {self._data.dtype}")
        self.requires_grad = bool(requires_grad)

    def zero_grad(self):
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

    def retain_grad(self):
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
        self._retain = True
        return self

    # --- in-place updates: allowed on tensors outside the graph only ----------------

    def __setitem__(self, index, value):
        if self.requires_grad:
            raise RuntimeError(
                f"tensor[{_describe_index(index)}] = ...: this tensor requires grad, and "
                f"writing into it would make its gradient wrong; use the differentiable "
                f"x.at[index].set(value) (or .add(value)), which returns a new tensor")
        self._data[_raw_index(index)] = value._data if isinstance(value, Tensor) else value
        self._version[0] += 1

    def _inplace(self, name, ufunc, other):
        if self.requires_grad:
            raise RuntimeError(
                f"{name}: in-place operations on a tensor that requires grad would make "
                f"its gradient wrong; write x = x {name[0]} y, or update x.data inside "
                f"cr.no_grad() (as an optimizer does)")
        ufunc(self._data, other._data if isinstance(other, Tensor) else other,
              out=self._data, casting="same_kind")
        self._version[0] += 1
        return self

    def __iadd__(self, other):
        return self._inplace("+=", np.add, other)

    def __isub__(self, other):
        return self._inplace("-=", np.subtract, other)

    def __imul__(self, other):
        return self._inplace("*=", np.multiply, other)

    def __itruediv__(self, other):
        return self._inplace("/=", np.true_divide, other)

    # The operators (+, @, [], ...) come from ArrayOperators; the operations themselves,
    # with their rules, are in derivatives.py.

    # comparisons give boolean tensors, outside the graph (they have no derivative)
    def __lt__(self, other): return Tensor._make(self._data < _raw(other))
    def __le__(self, other): return Tensor._make(self._data <= _raw(other))
    def __gt__(self, other): return Tensor._make(self._data > _raw(other))
    def __ge__(self, other): return Tensor._make(self._data >= _raw(other))
    def __eq__(self, other): return Tensor._make(self._data == _raw(other))
    def __ne__(self, other): return Tensor._make(self._data != _raw(other))
    __hash__ = object.__hash__  # identity, as for any graph node

    # --- 3. backward -----------------------------------------------------------------

    def backward(self, gradient=None, create_graph=False, explain=False):
        """Accumulate d(self)/d(leaf), times ``gradient``, into ``.grad`` of every leaf
        that requires grad (a vector-Jacobian product: ``gradient`` is the vector).

        A scalar needs no ``gradient``; for a non-scalar, pass one of its shape (or
        reduce first, with ``.sum()``). Gradients accumulate over calls, as in PyTorch:
        clear them with ``zero_grad()``. Intermediate results keep their gradient only
        if you asked with ``retain_grad()``. With ``create_graph=True`` the gradients
        are Tensors that can be differentiated again.

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
        if create_graph:
            seed = Tensor._make(seed)
        _backpropagate(self, seed, create_graph, explain=explain)


def _seed_gradient(root, gradient):
    if gradient is None:
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


def _backpropagate(root, seed, create_graph, batch_shape=(), explain=False):
    """The chain rule over the whole graph, from ``root`` back to its leaves, whose
    ``.grad`` accumulate (and that of intermediates that asked, with retain_grad).

    ``seed`` may carry leading ``batch_shape`` axes: a batch of cotangents, each
    propagated as if alone, in one pass (a whole Jacobian, row by row).
    """
    order = topological_order(root)
    if not order:  # the root is a leaf
        _accumulate_leaf(root, seed, owned=False)
        return
    story = None
    if explain:
        from .explain import TensorStory  # only the explaining pass needs it
        story = TensorStory(root, explain)
        story.plan(order)
        story.start(seed)
    _chain_rule({id(root): (seed, False)}, order, create_graph, batch_shape,
                stop_at=None, arrive=_accumulate_leaf, needed=None, story=story)


def gradients(roots, seeds, targets, create_graph=False, batch_shape=()):
    """The gradient of ``sum(seed * root)`` with respect to each target Tensor.

    Unlike ``backward()``, it reads and writes no ``.grad``: the function transforms
    use it, so that they never disturb a user's accumulated gradients, and nested
    transforms never see each other's. Only nodes that depend on a target are visited,
    and the walk stops at the targets. A target the roots do not depend on gets None.
    """
    order, depends = nodes_towards(roots, targets)
    index = {id(t): i for i, t in enumerate(targets)}
    grads = {}
    for root, seed in zip(roots, seeds):
        if id(root) in depends:
            previous = grads.get(id(root))
            grads[id(root)] = (seed if previous is None else previous[0] + seed, False)
    order = [node for node in order if id(node) in depends and id(node) not in index]
    found = {}

    def arrive(target, g, owned):
        previous = found.get(id(target))
        found[id(target)] = g if previous is None else previous + g

    _chain_rule(grads, order, create_graph, batch_shape, stop_at=index, arrive=arrive,
                needed=depends)
    for target in targets:  # roots that are targets themselves, untouched by the walk
        if id(target) in grads and id(target) not in found:
            found[id(target)] = grads[id(target)][0]
    return [found.get(id(t)) for t in targets]


def _chain_rule(grads, order, create_graph, batch_shape, stop_at, arrive, needed,
                story=None):
    """Visit ``order`` backwards; at each node, turn its gradient into its operands'.

    ``grads`` holds the gradients collected so far (node id -> (gradient, owned)).
    A gradient reaching a leaf, or a node in ``stop_at``, goes to ``arrive`` instead.
    Operands outside ``needed`` (when given) get nothing: no target lies behind them.
    A ``story`` (backward(explain=True)) is told each step.
    """
    anomaly = _modes.anomaly
    nothing = (None, False)
    for node in reversed(order):
        g, owned = grads.pop(id(node), nothing)
        if g is None:  # no path from the root carries a gradient here
            continue
        if node._retain and stop_at is None:
            _accumulate_leaf(node, g, owned)
        for counter, saved in node._versions:
            if counter[0] != saved:
                _refuse_modified(node, counter, saved)
        prim, args, kwargs = node._op, node._args, node._kwargs
        if create_graph:
            ans, rule_args = node, args
        else:
            ans = node._data
            rule_args = node._raw_args
        vjps = prim.vjps
        row_by_row = batch_shape and not prim.batch_safe
        extra = kwargs
        if prim.forward_with_residual is not None and not create_graph:
            extra = dict(kwargs, residual=node._residual)
        together = None
        if prim.vjp_all is not None and not row_by_row:  # one call gives them all
            needs = [False] * len(args)
            for argnum in node._grad_argnums:
                needs[argnum] = needed is None or id(args[argnum]) in needed
            together = prim.vjp_all(g, ans, *rule_args, needs=tuple(needs), **extra)
            if not isinstance(together, (tuple, list)) or len(together) != len(args):
                raise TypeError(f"{prim.name}: its defvjp_all rule must return a tuple of "
                                f"{len(args)} gradients, one per argument; got "
                                f"{type(together).__name__}")
        for argnum in node._grad_argnums:  # as recorded when the node was made
            arg = args[argnum]
            if needed is not None and id(arg) not in needed:
                continue
            if together is not None:
                vjp = together[argnum]
                if vjp is None:
                    raise TypeError(f"{prim.name}: its defvjp_all rule gave None for "
                                    f"argument {argnum}, which needs a gradient")
            elif row_by_row:
                vjp = _row_by_row(prim.vjp_rule(argnum), g, len(batch_shape), ans,
                                  rule_args, kwargs)
            else:
                vjp = (vjps.get(argnum) or prim.vjp_rule(argnum))(g, ans, *rule_args, **extra)
            if story is not None:
                raw = vjp
            vjp, fresh = _fit(vjp, arg, g, create_graph, batch_shape)
            if story is not None:
                story.step(node, argnum, g, raw, vjp, first=argnum == node._grad_argnums[0])
            if anomaly:
                _check_finite(vjp, f"the backward of {prim.name} (argument {argnum})",
                              node._origin)
            if not arg._prev or (stop_at is not None and id(arg) in stop_at):
                arrive(arg, vjp, fresh)
            else:  # interior: collect, it passes the gradient on later
                previous = grads.get(id(arg))
                if previous is None:
                    grads[id(arg)] = (vjp, fresh)
                else:
                    grads[id(arg)] = (previous[0] + vjp, True)


def _row_by_row(rule, g, batch_ndim, ans, args, kwargs):
    """A rule that knows nothing of batches, applied to each row of a batch in turn."""
    batch = np.shape(g)[:batch_ndim]
    rows = [rule(g[i], ans, *args, **kwargs) for i in np.ndindex(*batch)]
    shape = np.broadcast_shapes(*[np.shape(r) for r in rows])
    rows = [_ops.broadcast_to(r, shape) for r in rows]
    return _ops.reshape(_ops.stack(rows), batch + shape)


def _fit(vjp, arg, g, create_graph, batch_shape=()):
    """Make a rule's result the shape and dtype of its argument: sum away broadcast
    axes (the one place broadcasting is undone) and cast back (float32 stays float32).

    Also says whether the array is new (owned): a leaf's .grad must never share memory
    with another array, so a borrowed one is copied before it is stored.
    """
    data = arg._data
    shape = batch_shape + data.shape
    if create_graph:
        if not isinstance(vjp, Tensor):
            vjp = Tensor._make(np.asarray(vjp))
        if vjp.shape != shape:
            vjp = _ops.unbroadcast(vjp, data.shape, len(batch_shape))
        if vjp.dtype != data.dtype:
            vjp = _ops.astype(vjp, data.dtype)
        return vjp, True
    if type(vjp) is not np.ndarray:
        vjp = np.asarray(vjp)
    fresh = vjp is not g and vjp.base is None
    if vjp.shape != shape:
        # (summing to shape () gives a NumPy scalar: keep .grad an ndarray)
        vjp = np.asarray(_ops.unbroadcast(vjp, data.shape, len(batch_shape)))
        fresh = vjp.base is None
    dtype = data.dtype
    if vjp.dtype is not dtype and vjp.dtype != dtype:  # (NumPy's dtypes are mostly shared)
        vjp = vjp.astype(dtype)
        fresh = True
    return vjp, fresh


def _accumulate_leaf(leaf, g, owned):
    if leaf.grad is None:
        if isinstance(g, np.ndarray) and not owned:
            g = g.copy()
        leaf.grad = g
    else:
        total = leaf.grad + g
        # NumPy gives a scalar for two 0-d arrays; .grad stays an ndarray
        leaf.grad = np.asarray(total) if isinstance(leaf.grad, np.ndarray) else total


def _refuse_modified(node, counter, saved):
    """Raise: a tensor this node saved was written in place since (its version moved)."""
    arg = next((a for a in node._args if isinstance(a, Tensor) and a._version is counter),
               node)
    what = (f"the result of {node._op.name}" if arg is node else
            f"a tensor of shape {arg.shape} used by {node._op.name}")
    raise RuntimeError(
        f"backward: {what} was modified in place after the graph was built (version "
        f"{arg._version[0]}, saved at version {saved}), so the gradient would be wrong; "
        f"compute the graph again after changing the data, or write x = x + y instead "
        f"of x += y")


# ---------------------------------------------------------------------------------------
# Indexing helpers, x.at[...]
# ---------------------------------------------------------------------------------------

def _raw(x):
    """The plain number or array inside a Tensor (or a forward-mode tracer of one)."""
    while isinstance(x, Traced):
        x = x.primal
    return x._data if isinstance(x, Tensor) else x


def _raw_index(index):
    """An index with Tensors replaced by their arrays (integer or boolean)."""
    if isinstance(index, tuple):
        return tuple(_raw(i) for i in index)
    if isinstance(index, list):
        return np.asarray([_raw(i) for i in index])
    return _raw(index)


def _describe_index(index):
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
        return _IndexedUpdate(self.tensor, _raw_index(index))


class _IndexedUpdate:
    __slots__ = ("tensor", "index")

    def __init__(self, tensor, index):
        self.tensor, self.index = tensor, index

    def set(self, value):
        """A copy of the tensor with ``value`` written at the index."""
        return _ops.index_set(self.tensor, value, index=self.index)

    def add(self, value):
        """A copy of the tensor with ``value`` added at the index (repeated indices add up)."""
        return _ops.index_add(self.tensor, value, index=self.index)


# ---------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------

def _as_array(data, dtype):
    if isinstance(data, Tensor):
        data = data._data
    if dtype is not None:
        return np.array(data, dtype=dtype)
    array = np.array(data)
    if array.dtype.kind == "f" or array.dtype.kind == "c":
        return array
    if array.dtype.kind in "biu" or array.dtype == object and _all_numbers(array):
        return array.astype(np.float64)
    raise TypeError(f"tensor: cannot make a numeric tensor from {type(data).__name__} "
                    f"of dtype {array.dtype}")


def _all_numbers(array):
    return all(isinstance(x, Number) for x in array.flat)


def tensor(data, dtype=None, requires_grad=False):
    """A Tensor from a number, a (nested) list, an ndarray, or a list that holds Tensors
    (then the result is their differentiable stack).

    float64 unless ``dtype`` says otherwise (a float32 array stays float32). With
    ``requires_grad=True`` the operations on it are recorded for ``backward()``.

    >>> cr.tensor([[1, 2], [3, 4]])                 # ints become float64
    tensor([[1., 2.],
            [3., 4.]])
    >>> cr.tensor(3.0, requires_grad=True)
    tensor(3., requires_grad=True)
    >>> cr.tensor([1.0, 2.0], dtype=np.float32).dtype
    dtype('float32')
    """
    if isinstance(data, (list, tuple)) and _holds_tensor(data):
        parts = [part if isinstance(part, (Tensor, Traced)) else tensor(part, dtype=dtype)
                 for part in data]
        out = _ops.stack(parts, axis=0)
        if dtype is not None and out.dtype != np.dtype(dtype):
            out = out.astype(dtype)
        if requires_grad:
            raise ValueError("tensor: a list that holds Tensors is already part of a "
                             "graph; set requires_grad on its parts instead")
        return out
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _holds_tensor(items):
    """Whether a (nested) list holds Tensors, or forward-mode tracers of them."""
    return any(isinstance(x, (Tensor, Traced)) or
               (isinstance(x, (list, tuple)) and _holds_tensor(x)) for x in items)


def _default(dtype):
    return np.float64 if dtype is None else dtype


def zeros(*shape, dtype=None, requires_grad=False):
    """A Tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``; float64 unless told.

    >>> cr.zeros(2)
    tensor([0., 0.])
    >>> cr.zeros(2, 3).shape, cr.zeros((2, 3)).shape
    ((2, 3), (2, 3))
    """
    return Tensor._make(np.zeros(_shape(shape), dtype=_default(dtype)), requires_grad)


def ones(*shape, dtype=None, requires_grad=False):
    """A Tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``; float64 unless told.

    >>> cr.ones(2, dtype=np.float32)
    tensor([1., 1.], dtype=float32)
    """
    return Tensor._make(np.ones(_shape(shape), dtype=_default(dtype)), requires_grad)


def full(shape, fill_value, dtype=None, requires_grad=False):
    """A Tensor of ``shape`` (an int or a tuple) filled with ``fill_value``.

    >>> cr.full(3, 0.5)
    tensor([0.5, 0.5, 0.5])
    >>> cr.full((2, 2), 7.0).shape
    (2, 2)
    """
    return Tensor._make(np.full(_shape((shape,)), fill_value, dtype=_default(dtype)),
                        requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False):
    """The n x m identity matrix (n x n when m is None): ones on the diagonal.

    >>> cr.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    >>> cr.eye(2, 3).shape
    (2, 3)
    """
    return Tensor._make(np.eye(n, m, dtype=_default(dtype)), requires_grad)


def arange(*args, dtype=None, requires_grad=False):
    """Evenly spaced values in [start, stop) with ``step``, like np.arange (float64).

    >>> cr.arange(4)
    tensor([0., 1., 2., 3.])
    >>> cr.arange(0, 1, 0.25).data.tolist()
    [0.0, 0.25, 0.5, 0.75]
    """
    return Tensor._make(np.arange(*args, dtype=_default(dtype)), requires_grad)


def linspace(start, stop, num=50, dtype=None, requires_grad=False):
    """``num`` evenly spaced values from start to stop, both included.

    >>> cr.linspace(0, 1, 5).data.tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    return Tensor._make(np.linspace(start, stop, num, dtype=_default(dtype)), requires_grad)


def zeros_like(x, dtype=None, requires_grad=False):
    """Zeros with the shape (and dtype, unless given) of x, a Tensor or an array.

    >>> cr.zeros_like(np.ones(2, dtype=np.float32))
    tensor([0., 0.], dtype=float32)
    """
    return Tensor._make(np.zeros_like(_raw(x), dtype=dtype), requires_grad)


def ones_like(x, dtype=None, requires_grad=False):
    """Ones with the shape (and dtype, unless given) of x, a Tensor or an array.

    >>> cr.ones_like(cr.zeros(2, 3)).shape
    (2, 3)
    """
    return Tensor._make(np.ones_like(_raw(x), dtype=dtype), requires_grad)


def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def rand(*shape, seed=None, dtype=None, requires_grad=False):
    """Numbers drawn uniformly from [0, 1), of the given shape (float64 unless told).

    ``seed`` is an int or a ``numpy.random.Generator``; the same seed gives the same
    numbers.

    >>> x = cr.rand(2, 3, seed=0)
    >>> x.shape, bool(((0 <= x.data) & (x.data < 1)).all())
    ((2, 3), True)
    >>> x.data.tolist() == cr.rand(2, 3, seed=0).data.tolist()
    True
    """
    array = _rng(seed).random(_shape(shape)).astype(_default(dtype), copy=False)
    return Tensor._make(array, requires_grad)


def randn(*shape, seed=None, dtype=None, requires_grad=False):
    """Numbers drawn from the standard normal distribution (mean 0, variance 1).

    Of the given shape, float64 unless told; ``seed`` is an int or a
    ``numpy.random.Generator``, and the same seed gives the same numbers.

    >>> x = cr.randn(1000, seed=0)
    >>> x.shape, abs(float(x.data.mean())) < 0.1, round(float(x.data.std()), 1)
    ((1000,), True, 1.0)
    """
    array = _rng(seed).standard_normal(_shape(shape)).astype(_default(dtype), copy=False)
    return Tensor._make(array, requires_grad)


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


from . import derivatives as _ops  # noqa: E402  (the operations need Tensor defined)

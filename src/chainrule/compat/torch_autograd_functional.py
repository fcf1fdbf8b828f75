"""PyTorch's ``torch.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``,
``hvp`` and ``vhp`` of a function of tensors, with torch's arguments and return
conventions, over chainrule's transforms (``cr.vjp``, ``cr.jvp``, ``cr.jacrev``,
``cr.jacfwd``). Reached as ``chainrule.autograd.functional``.

As torch's: ``inputs`` is a tensor or a tuple of them, and each result follows the
kinds that went in and came out (a tensor for a tensor, a tuple for a tuple; a Jacobian
of tuples is a tuple over the outputs of tuples over the inputs); ``vjp``, ``jvp``,
``hvp`` and ``vhp`` return ``(func_output, product)``. The results are constants unless
``create_graph=True``, which keeps them in the graph of inputs that require grad.
``strict=True`` refuses an output that does not depend on an input (torch's check:
no recorded path from the input to the output), where the default gives zeros.

>>> from chainrule.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, cr.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import rules as ops
from ..graph import topological_order
from ..tensor import Tensor
from ..transforms.functional import jvp as _jvp, vjp as _vjp
from ..transforms.jacobians import jacfwd, jacrev

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T J)``: the vector-Jacobian product, one gradient per input
    (``v`` may be left out for an output of one element).

    >>> vjp(lambda x: x ** 2, cr.tensor([1.0, 2.0]), cr.ones(2))[1]
    tensor([2., 4.])
    """
    ins, many = _inputs(inputs, "vjp")
    if strict:
        _refuse_independent(func, ins, "vjp")
    out, pullback = _vjp(func, *ins)
    outs, many_out = _outputs(out, "vjp")
    vs = _vector(v, outs, many_out, "vjp", "the user-provided function returns a single "
                 "Tensor with a single element")
    grads = pullback(tuple(vs) if many_out else vs[0])
    return _done(out, create_graph), _packed(grads, many, create_graph)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), J v)``: the Jacobian-vector product, one tangent per output
    (``v`` may be left out for an input of one element).

    >>> jvp(lambda x: x ** 2, cr.tensor([1.0, 2.0]), cr.ones(2))[1]
    tensor([2., 4.])
    """
    ins, many = _inputs(inputs, "jvp")
    if strict:
        _refuse_independent(func, ins, "jvp")
    vs = _vector(v, ins, many, "jvp", "the input to the function contains a single "
                 "element")
    out, tangent = _jvp(func, tuple(ins), tuple(vs))
    _, many_out = _outputs(out, "jvp")
    return _done(out, create_graph), _packed(tangent, many_out, create_graph)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian, ``out.shape + in.shape`` for each (output, input) pair: a tensor
    for one of each, else tuples (over the outputs, of tuples over the inputs).
    ``strategy="forward-mode"`` takes it by forward mode (the same numbers).

    >>> jacobian(lambda x, y: x * y, (cr.tensor([1.0, 2.0]), cr.tensor(3.0)))[1]
    tensor([1., 2.])
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f"jacobian: strategy must be 'reverse-mode' or 'forward-mode', "
                         f"got {strategy!r}")
    ins, many = _inputs(inputs, "jacobian")
    if strict:
        _refuse_independent(func, ins, "jacobian")
    transform = jacrev if strategy == "reverse-mode" else jacfwd
    result = transform(func, argnums=tuple(range(len(ins))))(*ins)
    # one block per input for each output: a tuple of them per output of a tuple
    many_out = isinstance(result[0], tuple)
    per_output = result if many_out else (result,)
    rows = tuple(_packed(row, many, create_graph) for row in per_output)
    return rows if many_out else rows[0]


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The matrix of second derivatives of a function with a one-element output:
    ``in.shape + in.shape``, or tuples of tuples for a tuple of inputs.

    >>> hessian(lambda x: (x ** 3).sum(), cr.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    ins, many = _inputs(inputs, "hessian")
    _one_element(func(*ins), "hessian")
    if strict:
        _refuse_independent(func, ins, "hessian")
    nums = tuple(range(len(ins)))
    gradient = jacrev(_scalar(func), argnums=nums)
    outer = jacrev if outer_jacobian_strategy == "reverse-mode" else jacfwd
    result = outer(lambda *a: gradient(*a), argnums=nums)(*ins)
    rows = tuple(_packed(row, True, create_graph) for row in result)
    if many:
        return rows
    return rows[0][0]


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T H)`` for a function with a one-element output.

    >>> vhp(lambda x: (x ** 3).sum(), cr.tensor([1.0, 2.0]), cr.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _second(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), H v)`` for a function with a one-element output (the same as
    ``vhp``: a Hessian is symmetric).

    >>> hvp(lambda x: (x ** 3).sum(), cr.tensor([1.0, 2.0]), cr.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _second(func, inputs, v, create_graph, strict, "hvp")


# ---------------------------------------------------------------------------------------

def _second(func, inputs, v, create_graph, strict, name):
    ins, many = _inputs(inputs, name)
    out = func(*ins)
    _one_element(out, name)
    if strict:
        _refuse_independent(func, ins, name)
    vs = _vector(v, ins, many, name, "the input to the function contains a single element")
    nums = tuple(range(len(ins)))
    gradient = jacrev(_scalar(func), argnums=nums)
    _, products = _jvp(lambda *a: gradient(*a), tuple(ins), tuple(vs))
    return _done(out, create_graph), _packed(products, many, create_graph)


def _scalar(func):
    """func with its one-element output as a 0-d one (torch allows shape (1,) too)."""
    return lambda *args: ops.reshape(func(*args), ())


def _inputs(inputs, name):
    """The inputs as a tuple of Tensors, and whether they came as a tuple."""
    many = isinstance(inputs, (tuple, list))
    items = tuple(inputs) if many else (inputs,)
    for k, item in enumerate(items):
        if not isinstance(item, Tensor):
            raise TypeError(f"{name}: input {k} is a {type(item).__name__}; expected a "
                            f"Tensor (or a tuple of Tensors), as torch.autograd.functional")
    return items, many


def _outputs(out, name):
    many = isinstance(out, (tuple, list))
    items = tuple(out) if many else (out,)
    for k, item in enumerate(items):
        if not isinstance(item, Tensor):
            raise TypeError(f"{name}: output {k} of the function is a "
                            f"{type(item).__name__}; expected a Tensor (or a tuple of them)")
    return items, many


def _vector(v, like, many, name, when):
    """``v`` as one array per entry of ``like`` (ones where v is None and may be)."""
    if v is None:
        if len(like) != 1 or like[0].size != 1:
            raise RuntimeError(f"{name}: the vector v can only be None if {when}")
        return [Tensor._make(np.ones(like[0].shape, like[0].dtype))]
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if len(vs) != len(like):
        raise RuntimeError(f"{name}: v has {len(vs)} entries, expected {len(like)} (one "
                           f"per {'output' if name == 'vjp' else 'input'})")
    fitted = []
    for k, (vector, target) in enumerate(zip(vs, like)):
        array = np.asarray(vector.detach().data if isinstance(vector, Tensor) else vector)
        if array.shape != target.shape:
            raise RuntimeError(f"{name}: entry {k} of v has shape {array.shape}, expected "
                               f"{target.shape}")
        fitted.append(vector if isinstance(vector, Tensor) else Tensor._make(
            array.astype(target.dtype)))
    return fitted


def _one_element(out, name):
    if not isinstance(out, Tensor) or out.size != 1:
        shape = getattr(out, "shape", type(out).__name__)
        raise RuntimeError(f"{name}: the function must return a single Tensor with a "
                           f"single element, got {shape}")


def _done(value, create_graph):
    """A result as torch gives it: in the graph with create_graph, else a constant."""
    if isinstance(value, (tuple, list)):
        return type(value)(_done(v, create_graph) for v in value)
    if isinstance(value, Tensor):
        return value if create_graph else value.detach()
    return Tensor._make(np.asarray(value))


def _packed(values, many, create_graph):
    if many:
        return tuple(_done(v, create_graph) for v in values)
    return _done(values[0] if isinstance(values, (tuple, list)) else values, create_graph)


def _refuse_independent(func, ins, name):
    """strict=True: every output must be reached from every input by a recorded path."""
    leaves = [Tensor._make(t.detach().data.copy(), requires_grad=True) for t in ins]
    outs, _ = _outputs(func(*leaves), name)
    for i, out in enumerate(outs):
        reached = {id(p) for node in topological_order(out) for p in node._prev}
        reached.add(id(out))
        for j, leaf in enumerate(leaves):
            if id(leaf) not in reached:
                raise RuntimeError(f"{name}: output {i} of the function does not depend "
                                   f"on input {j}, which strict=True does not allow")

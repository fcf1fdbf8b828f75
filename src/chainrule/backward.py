"""The backward pass: the chain rule over a recorded graph, from the outputs back.

Shared by ``Tensor.backward()`` and the reverse-mode transforms (``chainrule.transforms.reverse``),
whose nodes carry the same fields: ``_prev`` (the operands), ``_op`` (the operation),
``_args`` (as called), ``_raw_args`` (what the rules are given), ``_kwargs``,
``_grad_argnums`` (where the operands are), ``_versions`` (the version counters to
check), ``_retain`` and ``_origin``. At each node the operation's rules give each
operand's vector-Jacobian product, which is fitted to the operand (broadcasting undone,
the dtype kept) and passed on; where two paths reach one node, their gradients add up.
"""

import numpy as np

from . import rules as ops
from .modes import _modes
from .origin import check_finite
from .primitive import Box, shape_of
from .arrays import ARRAYS, as_array
from .gradient_hooks import keeps_gradient, run_after_accumulate, run_hooks
from .saved import FREED

__all__ = ["backward_pass", "accumulate", "accumulate_arrived", "add_gradients"]

_NOTHING = (None, None, False)

# The walk's shortcuts for NumPy arrays without batch axes nor create_graph: the
# operation's pullback called as _pullback would call it, a VJP that already has its
# argument's shape and dtype passed on as _fit would pass it, and a batch of cr.vmap's
# fitted as the stack of arrays it holds (_fitted_stack). False: every step through
# _pullback and _fit (tests/test_eager_fast_paths.py and tests/test_vmap_fast_paths.py
# compare the two bit for bit).
FAST_PATHS = True


def backward_pass(grads, order, create_graph=False, batch_shape=(), on_step=None):
    """The chain rule over ``order`` (each node after its operands), walked backwards.

    ``grads`` maps node ids to ``(node, gradient, owned)`` (the seeds). Each node's
    gradient becomes its operands'; a gradient reaching a leaf, or a node that asked
    with ``retain_grad``, is handed back, as ``{id: (node, gradient, owned)}`` (owned: a
    new array, safe to keep). ``batch_shape`` leading axes carry many cotangents in one
    pass; ``on_step(node, argnum, g, vjp, fitted)`` is told each step.
    """
    arrived = {}
    anomaly = _modes.anomaly
    # the usual walk (arrays, one cotangent, no graph of the gradient) takes two
    # shortcuts below, each giving what the general code gives: see FAST_PATHS
    plain = FAST_PATHS and not create_graph and not batch_shape
    for node in reversed(order):
        _, g, owned = grads.pop(id(node), _NOTHING)
        if g is None:  # no path from the roots carries a gradient here
            continue
        if node._retain:  # retain_grad(), or hooks on the node (gradient_hooks.py)
            if node._retain is not True:
                g, owned = run_hooks(node, g, owned)
            if keeps_gradient(node):
                arrived[id(node)] = (node, g, owned)
        versions = node._versions
        if versions is FREED:
            _refuse_freed(node)
        for counter, saved in versions:  # nothing it saved was written since
            if counter[0] != saved:
                _refuse_modified(node, counter, saved)
        args, argnums, prim = node._args, node._grad_argnums, node._op
        if plain and not prim.keeps_residual:  # _pullback's own call in this case
            vjps = prim.pullback(g, node._data, node._raw_args, node._kwargs, argnums)
        else:
            vjps = _pullback(node, g, argnums, create_graph, batch_shape)
        for argnum, vjp in zip(argnums, vjps):
            arg = args[argnum]
            data = arg._data
            if plain and type(data) is np.ndarray:
                array = vjp  # (on_step is told the rule's own result)
                if type(array) is not np.ndarray and isinstance(array, np.generic):
                    array = np.asarray(array)  # (_fit's as_array of a NumPy scalar)
                if type(array) is np.ndarray and array.dtype is data.dtype and \
                        array.shape == data.shape:
                    # what _fit returns for an array of the argument's shape and dtype
                    fitted, fresh = array, array is not g and array.base is None
                else:
                    fitted, fresh = _fit(array, arg, g, create_graph, batch_shape)
            else:
                fitted, fresh = _fit(vjp, arg, g, create_graph, batch_shape)
            if on_step is not None:
                on_step(node, argnum, g, vjp, fitted)
            if anomaly:
                check_finite(fitted, f"the backward of {node._op.name} (argument "
                                      f"{argnum})", node._origin)
            into, key = grads if arg._prev else arrived, id(arg)
            previous = into.get(key)
            if previous is None:
                into[key] = (arg, fitted, fresh)
            else:  # a second path reaches arg: the chain rule sums over paths
                into[key] = (arg, add_gradients(previous[1], fitted), True)
    return arrived


def add_gradients(a, b):
    total = a + b
    if isinstance(total, np.generic) or (type(total) is not np.ndarray
                                         and type(total) in ARRAYS):
        return as_array(total)  # 0-d + 0-d: NumPy gives a scalar; keep an array
    return total


def _pullback(node, g, argnums, create_graph, batch_shape):
    """The operation's VJPs at this node: on the raw arrays it saw, or, to build the
    gradient's own graph (create_graph), on the Tensors themselves."""
    prim, kwargs = node._op, node._kwargs
    ans, args = (node, node._args) if create_graph else (node._data, node._raw_args)
    if batch_shape and not prim.batched:  # a user's rule: one row of the batch at a time
        return [_row_by_row(prim.vjp(argnum), g, len(batch_shape), ans, args, kwargs)
                for argnum in argnums]
    if prim.keeps_residual and not create_graph:  # (a transform's node keeps none)
        return prim.pullback(g, ans, args, kwargs, argnums,
                             residual=getattr(node, "_residual", None))
    return prim.pullback(g, ans, args, kwargs, argnums)


def _row_by_row(rule, g, batch_ndim, ans, args, kwargs):
    """A rule that knows nothing of batches, applied to each row of a batch in turn."""
    batch = np.shape(g)[:batch_ndim]
    rows = [rule(g[i], ans, *args, **kwargs) for i in np.ndindex(*batch)]
    shape = np.broadcast_shapes(*[np.shape(r) for r in rows])
    rows = [ops.broadcast_to(r, shape) for r in rows]
    return ops.reshape(ops.stack(rows), batch + shape)


def _fit(vjp, arg, g, create_graph, batch_shape=()):
    """Make a rule's result the shape and dtype of its argument: sum away broadcast
    axes (the one place broadcasting is undone) and cast back (float32 stays float32).

    Also says whether the array is new (owned): a leaf's .grad must never share memory
    with another array, so a borrowed one is copied before it is stored.
    """
    data = arg._data
    if create_graph or isinstance(vjp, Box) or (type(data) is not np.ndarray
                                                 and type(data) not in ARRAYS):
        if FAST_PATHS and not create_graph and type(data) is np.ndarray and vjp._batched:
            stack = _fitted_stack(vjp, data, batch_shape)
            if stack is not None:
                return stack, True
        # in a graph (create_graph, a seed in a graph, a transform's traced values):
        # the same with the table's operations, so the gradient can be differentiated
        if create_graph and not isinstance(vjp, Box):  # a constant, as a node of the
            vjp = type(arg)._make(np.asarray(vjp))    # graph (a Tensor) all the same
        if shape_of(vjp) != batch_shape + shape_of(data):
            vjp = ops.unbroadcast(vjp, shape_of(data), len(batch_shape))
        dtype = getattr(data, "dtype", None)  # (a Value has none: it is a float)
        if dtype is not None and getattr(vjp, "dtype", dtype) != dtype:
            vjp = ops.astype(vjp, dtype)
        return vjp, True
    shape = batch_shape + data.shape
    if type(vjp) is not np.ndarray:
        vjp = as_array(vjp)
    fresh = vjp is not g and vjp.base is None
    if vjp.shape != shape:  # on arrays, unbroadcast's sum is NumPy's own
        axes = ops.broadcast_axes(vjp.shape, data.shape, len(batch_shape))
        vjp = as_array(np.add.reduce(vjp, axis=axes) if axes else vjp)  # (not a scalar)
        if vjp.shape != shape:
            vjp = vjp.reshape(shape)
        fresh = vjp.base is None
    dtype = data.dtype
    if vjp.dtype is not dtype and vjp.dtype != dtype:  # (NumPy's dtypes are mostly shared)
        # a complex gradient of a real input: its real part (JAX's convention, where a
        # gradient c acts on a tangent t as Re(c t))
        vjp = (vjp.real if vjp.dtype.kind == "c" and dtype.kind != "c" else vjp).astype(dtype)
        fresh = True
    return vjp, fresh


def _fitted_stack(vjp, data, batch_shape):
    """A vmapped pass's gradient (cr.vmap's batch of one example's gradients, the batch
    axis first) fitted as the stack of NumPy arrays it holds, the batch axis one more
    leading axis: what the general path's operations on the batch give, without their
    dispatch. None where the stack is not NumPy's or would need more than the array
    rules (fewer axes than the argument, a complex gradient of a real argument).
    tests/test_vmap_fast_paths.py holds the two equal."""
    value = vjp._contents()
    if type(value) is not np.ndarray:
        return None
    if value.dtype is data.dtype and value.shape[1:] == batch_shape + data.shape:
        return vjp  # (what the general path's checks find: nothing to fit)
    if value.ndim - 1 - len(batch_shape) < data.ndim or \
            (value.dtype.kind == "c" and data.dtype.kind != "c"):
        return None
    fitted, _ = _fit(value, _Operand(data), None, False, (value.shape[0],) + batch_shape)
    return type(vjp)(fitted, vjp._level)


class _Operand:
    """An argument of the walk as ``_fit`` reads it: its data only."""
    __slots__ = ("_data",)

    def __init__(self, data):
        self._data = data


def accumulate_arrived(arrived):
    """Add each gradient a walk handed back (``backward_pass``'s result) into its
    tensor's ``.grad``: a leaf's hooks first, and its post-accumulate hooks after
    (gradient_hooks.py); a retained result's hooks already ran in the walk."""
    for node, g, owned in arrived.values():
        if node._retain and not node._prev:
            g, owned = run_hooks(node, g, owned)
            accumulate(node, g, owned)
            run_after_accumulate(node)
        else:
            accumulate(node, g, owned)


def accumulate(leaf, g, owned):
    """Add a gradient into a leaf's (or a retained node's) .grad."""
    if leaf.grad is None:
        if type(g) in ARRAYS and not owned:
            g = g.copy()
        leaf.grad = g
    else:
        total = leaf.grad + g
        # NumPy gives a scalar for two 0-d arrays; .grad stays an ndarray
        leaf.grad = as_array(total) if type(leaf.grad) in ARRAYS else total


def _refuse_freed(node):
    raise RuntimeError(
        f"backward: the graph through {node._op.name} was walked by an earlier backward() "
        f"and freed, as in PyTorch (its saved values may have been written since); pass "
        f"retain_graph=True to the first backward() to walk it again, or compute the "
        f"output again")


def _refuse_modified(node, counter, saved):
    """Raise: a tensor this node saved was written in place since (its version moved)."""
    arg = next((a for a in node._args if getattr(a, "_version", None) is counter), node)
    what = (f"the result of {node._op.name}" if arg is node else
            f"a tensor of shape {arg.shape} used by {node._op.name}")
    raise RuntimeError(
        f"backward: {what} was modified in place after the graph was built (version "
        f"{arg._version[0]}, saved at version {saved}), so the gradient would be wrong; "
        f"compute the graph again after changing the data, or write x = x + y instead "
        f"of x += y")

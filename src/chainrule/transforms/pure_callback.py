"""``cr.pure_callback``: JAX's way to call plain Python or NumPy code (a SciPy routine, a
simulator) from inside transformed code, for its value.

* Eagerly it is the call itself, with the arrays' numbers, its results checked against
  the shapes and dtypes promised (``result_shape_dtypes``).
* Under ``cr.jit`` it is one call of the program, run again at every call of the jitted
  function with that call's values (a pure one: JAX may drop it when nothing uses it,
  and so may the program).
* Under ``vmap`` it runs as ``vmap_method`` says, JAX's three ways: ``"sequential"``
  (once per example), ``"expand_dims"`` (once, the batch axis first, other arguments
  with an axis of length 1 there) or ``"broadcast_all"`` (once, every argument
  broadcast along the batch). Without one it raises, as JAX does.
* Under a derivative it raises, as JAX does: the callback's numbers have no derivative
  chainrule can know. ``cr.custom_jvp`` or ``cr.custom_vjp`` around it give one.
"""

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import arrays as xp
from .. import rules as ops
from ..modes import is_grad_enabled
from ..primitive import Box, raw, shape_of
from ..tensor import Tensor
from .batching import BatchTracer
from .forward import JVPTracer
from .pytrees import tree_flatten, tree_unflatten
from .reverse import ReverseTracer

__all__ = ["pure_callback"]

_METHODS = ("sequential", "expand_dims", "broadcast_all")


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """``callback(*args, **kwargs)`` on the arrays' values, inside any transform
    (``jax.pure_callback``): its results must have the shapes and dtypes of
    ``result_shape_dtypes`` (a pytree of ``cr.ShapeDtypeStruct`` or arrays). Under
    ``cr.jit`` it runs at every call; under ``vmap`` as ``vmap_method`` says
    (``"sequential"``, ``"expand_dims"``, ``"broadcast_all"``); under a derivative it
    raises.

    >>> spec = cr.ShapeDtypeStruct((2,), np.float64)
    >>> f = cr.jit(lambda x: cr.pure_callback(np.cumsum, spec, x))
    >>> f(np.array([1.0, 2.0])), f(np.array([3.0, 4.0]))
    (array([1., 3.]), array([3., 7.]))
    """
    if not callable(callback):
        raise TypeError(f"pure_callback: expected a function to call, got "
                        f"{type(callback).__name__}")
    if vmap_method is not None and vmap_method not in _METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {', '.join(_METHODS)} "
                         f"or None, got {vmap_method!r}")
    specs, spec_def = tree_flatten(result_shape_dtypes)
    promised = [(tuple(shape_of(s)), np.dtype(s.dtype)) for s in specs]
    leaves, treedef = tree_flatten((args, kwargs))
    for leaf in leaves:
        _refuse_derivative(leaf)
    outs = _call(callback, treedef, leaves, promised, vmap_method)
    return tree_unflatten(spec_def, list(outs))


def _refuse_derivative(leaf):
    """A value some derivative follows: refused, as JAX refuses to differentiate a
    callback. A batch is looked inside (vmap of grad); a value that reaches the inputs
    only through ``stop_gradient`` is followed by none, and a tangent of zeros gives
    the callback's result a tangent of zeros."""
    while isinstance(leaf, Box):
        if isinstance(leaf, BatchTracer):
            leaf = leaf.value
        elif isinstance(leaf, Tensor):
            if leaf.requires_grad and is_grad_enabled():
                break
            leaf = leaf._contents()
        elif isinstance(leaf, ReverseTracer):
            if _reaches_an_input(leaf):
                break
            leaf = leaf._contents()
        elif isinstance(leaf, JVPTracer):
            if np.any(raw(leaf.tangent) != 0):
                break
            leaf = leaf._contents()
        else:
            break
    else:
        return
    raise TypeError("pure_callback: a callback has no derivative, and this argument is "
                    "differentiated; give the callback one with cr.custom_jvp or "
                    "cr.custom_vjp, or pass cr.stop_gradient(x)")


def _reaches_an_input(tracer):
    """Whether the graph of a reverse-mode tracer reaches an input of its transform
    other than through stop_gradient."""
    stack, seen = [tracer], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node._op is None:
            return True
        if getattr(node._op, "name", None) != "stop_gradient":
            stack.extend(node._prev)
    return False


def _call(callback, treedef, leaves, promised, vmap_method):
    """The callback's outputs for these leaves: vmap's innermost level taken apart as
    vmap_method says, a call of cr.jit's program while tracing, else a call now."""
    leaves = [raw(leaf) for leaf in leaves]  # (what a tracer carries; a batch stays)
    levels = [leaf._level for leaf in leaves if isinstance(leaf, BatchTracer)]
    if levels:
        level = max(levels)
        mine = [isinstance(leaf, BatchTracer) and leaf._level == level for leaf in leaves]
        size = next(shape_of(leaf.value)[0] for leaf, m in zip(leaves, mine) if m)
        if vmap_method is None:
            raise ValueError("pure_callback under vmap: say how the callback takes a batch "
                             "with vmap_method='sequential' (once per example), "
                             "'expand_dims' or 'broadcast_all' (once, with the batch)")
        if vmap_method == "sequential":
            per_example = [_call(callback, treedef, [leaf.value[i] if m else leaf
                                                     for leaf, m in zip(leaves, mine)],
                                 promised, vmap_method) for i in range(size)]
            outs = [ops.stack([example[k] for example in per_example])
                    for k in range(len(promised))]
        else:
            batched = [leaf.value if m else _with_batch_axis(leaf, size, vmap_method)
                       for leaf, m in zip(leaves, mine)]
            outs = _call(callback, treedef, batched,
                         [((size,) + shape, dtype) for shape, dtype in promised], vmap_method)
        return [BatchTracer(out, level) for out in outs]

    def call(*values):
        args, kwargs = tree_unflatten(treedef, list(values))
        return tuple(_checked(callback(*args, **kwargs), promised))

    recorder = xp.recorder()
    if recorder is None:
        return call(*leaves)
    return recorder.record(call, tuple(leaves), {}, pure=True, force=True)


def _with_batch_axis(leaf, size, method):
    """An argument the batch does not reach, for a call with the whole batch: an axis
    of length 1 in front (expand_dims), or the batch's length (broadcast_all)."""
    if not (isinstance(leaf, (np.ndarray, np.generic, float, int, complex, bool, Box))):
        return leaf  # (not an array: passed as it is)
    expanded = ops.expand_dims(leaf, 0)
    if method == "broadcast_all":
        return ops.broadcast_to(expanded, (size,) + tuple(shape_of(leaf)))
    return expanded


def _checked(result, promised):
    """The callback's results as NumPy arrays, each of the promised shape and dtype."""
    found, _ = tree_flatten(result)
    if len(found) != len(promised):
        raise TypeError(f"pure_callback: the callback returned {len(found)} arrays where "
                        f"result_shape_dtypes promised {len(promised)}")
    checked = []
    for i, (value, (shape, dtype)) in enumerate(zip(found, promised)):
        array = np.asarray(value)
        if array.shape != shape:
            raise ValueError(f"pure_callback: result {i} of the callback has shape "
                             f"{array.shape} where result_shape_dtypes promised {shape}")
        if array.dtype != dtype:
            if not np.can_cast(array.dtype, dtype, "same_kind"):
                raise TypeError(f"pure_callback: result {i} of the callback has dtype "
                                f"{array.dtype} where result_shape_dtypes promised {dtype}")
            array = array.astype(dtype)
        checked.append(array)
    return checked

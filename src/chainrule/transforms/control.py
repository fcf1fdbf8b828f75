"""JAX's structured control flow, for programs written with ``jax.lax``: ``fori_loop``,
``scan``, ``while_loop``, ``cond``, ``switch``, ``dynamic_slice`` and
``dynamic_update_slice``, with JAX's signatures and carries (any pytree).

Each runs its body as Python runs a loop, so every transform differentiates through it
as through any Python code (reverse mode records each step; ``while_loop``, as in
JAX, is for the forward computation, and differentiates only where its number of steps
does not depend on what is differentiated). Under ``cr.jit`` a loop whose bounds are
Python numbers is traced step by step into the program (unrolled, not one loop
operation); a condition on a traced value raises at the trace, as Python's ``if`` does.

>>> cr.fori_loop(0, 3, lambda i, x: x * 2.0, 1.0)
8.0
>>> carry, ys = cr.scan(lambda c, x: (c + x, c * x), 0.0, np.array([1.0, 2.0, 3.0]))
>>> float(carry), ys.tolist()
(6.0, [0.0, 2.0, 9.0])
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import rules as ops
from ..primitive import raw, shape_of
from .pytrees import tree_flatten, tree_unflatten

__all__ = ["fori_loop", "scan", "while_loop", "cond", "switch", "dynamic_slice",
           "dynamic_update_slice"]


def fori_loop(lower: int, upper: int, body_fun: Callable[[int, Any], Any],
              init_val: Any) -> Any:
    """``val = body_fun(i, val)`` for i from ``lower`` to ``upper`` - 1; returns val.

    >>> cr.grad(lambda x: cr.fori_loop(0, 4, lambda i, v: v * x, 1.0))(2.0)    # d x**4
    32.0
    """
    val = init_val
    for i in range(int(raw(lower)), int(raw(upper))):
        val = body_fun(i, val)
    return val


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (a pytree, or None with
    ``length``); returns the last carry and the ys stacked on a new leading axis.
    ``reverse=True`` runs from the last x to the first (the ys stay in xs' order).

    >>> cr.scan(lambda c, x: (c * x, c), 1.0, np.array([2.0, 3.0]), reverse=True)[1].tolist()
    [3.0, 1.0]
    """
    leaves, treedef = tree_flatten(xs)
    sizes = {shape_of(leaf)[0] for leaf in leaves}
    if length is not None:
        sizes.add(int(length))
    if len(sizes) != 1:
        raise ValueError(f"scan: the leading axes of xs and length must agree, got sizes "
                         f"{sorted(sizes)}" if sizes else
                         "scan: give xs or length (the number of steps)")
    steps = sizes.pop()
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    carry, ys = init, [None] * steps
    for i in order:
        x = tree_unflatten(treedef, [leaf[i] for leaf in leaves]) if leaves else None
        carry, ys[i] = f(carry, x)
    if steps == 0:
        return carry, None
    y_leaves, y_def = zip(*(tree_flatten(y) for y in ys))
    stacked = [ops.stack([leaves_i[k] for leaves_i in y_leaves])
               for k in range(len(y_leaves[0]))]
    return carry, tree_unflatten(y_def[0], stacked)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns val.

    >>> cr.while_loop(lambda v: v < 10, lambda v: v * 3, 1)
    27
    """
    val = init_val
    while bool(raw(cond_fun(val))):
        val = body_fun(val)
    return val


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; the branch not
    taken does not run.

    >>> cr.cond(2.0 > 1.0, lambda x: x + 1, lambda x: x - 1, 5.0)
    6.0
    """
    return true_fun(*operands) if bool(raw(pred)) else false_fun(*operands)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``, the index clamped to the branches, as JAX's.

    >>> cr.switch(5, [lambda x: x, lambda x: 2 * x], 3.0)
    6.0
    """
    k = int(np.clip(int(raw(index)), 0, len(branches) - 1))
    return branches[k](*operands)


def _starts(operand, start_indices, sizes, name):
    shape = shape_of(operand)
    if len(start_indices) != len(shape) or len(sizes) != len(shape):
        raise ValueError(f"{name}: expected one start and one size per axis of the operand "
                         f"{shape}, got {len(start_indices)} starts and {len(sizes)} sizes")
    # a negative start counts from the end, then it is clamped so that the slice fits,
    # as JAX does
    starts = [int(raw(s)) for s in start_indices]
    return [int(np.clip(s + n if s < 0 else s, 0, n - k))
            for s, n, k in zip(starts, shape, sizes)]


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    """``operand[s0:s0+k0, s1:s1+k1, ...]``; a negative start counts from the end, and
    the starts are clamped so that the slice fits.

    >>> cr.dynamic_slice(np.arange(6.0), [4], [3]).tolist()       # start clamped to 3
    [3.0, 4.0, 5.0]
    """
    starts = _starts(operand, start_indices, slice_sizes, "dynamic_slice")
    return operand[tuple(slice(s, s + k) for s, k in zip(starts, slice_sizes))]


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """A copy of ``operand`` with ``update`` written from ``start_indices`` (clamped);
    differentiable in both, as ``x.at[...].set``.

    >>> cr.dynamic_update_slice(np.zeros(4), np.ones(2), [1]).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    sizes = shape_of(update)
    starts = _starts(operand, start_indices, sizes, "dynamic_update_slice")
    index = tuple(slice(s, s + k) for s, k in zip(starts, sizes))
    return ops.index_set(operand, update, index=index)

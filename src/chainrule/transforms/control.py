"""JAX's structured control flow, for programs written with ``jax.lax``: ``fori_loop``,
``scan``, ``while_loop``, ``cond``, ``switch``, ``dynamic_slice`` and
``dynamic_update_slice``, with JAX's signatures and carries (any pytree).

Each runs its body as Python runs a loop, so every transform differentiates through it
as through any Python code. ``scan`` differentiated in its carry and xs is one operation
of the graph (its steps are not nodes; see ``scan``); the others record each step
(``while_loop``, as in JAX, is for the forward computation: it differentiates only
where its number of steps does not depend on what is differentiated). Under ``cr.jit``
a loop whose bounds are Python numbers is traced step by step into the program
(unrolled, not one loop operation); a condition on a traced value raises at the trace,
as Python's ``if`` does.

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
from ..primitive import Box, Primitive, raw, shape_of
from .functional import jvp, vjp
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

    Differentiated in ``init`` and ``xs``, the loop is one operation of the graph: its
    reverse pass runs the steps again from the start to get each step's carry (memory:
    one carry per step), then walks them backwards with ``cr.vjp`` of ``f``, and its
    forward mode carries ``cr.jvp`` of ``f`` along; both are differentiable again. Where
    ``f`` closes over a value being differentiated, or a carry is not made of floats,
    the steps are recorded one by one instead (the same derivatives).

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
    if steps and any(isinstance(v, Box) for v in tree_flatten(init)[0] + leaves):
        try:
            return _scan_operation(f, init, xs, steps, reverse)
        except _StepByStep:
            pass
    return _loop(f, init, xs, steps, reverse)


def _loop(f, init, xs, steps, reverse):
    """The scan as Python runs it, step after step."""
    leaves, treedef = tree_flatten(xs)
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


class _StepByStep(Exception):
    """The scan cannot be one operation (f closes over a traced value, or a leaf is not
    a float array): record it step by step."""


def _floats(leaves):
    return all(np.result_type(raw(leaf)).kind == "f" for leaf in leaves)


def _scan_operation(f, init, xs, steps, reverse):
    """The scan as one primitive of a packed vector [init's leaves, xs' leaves] whose
    result packs [the final carry's leaves, the stacked ys' leaves]."""
    c_leaves, c_def = tree_flatten(init)
    x_leaves, x_def = tree_flatten(xs)
    if not _floats(c_leaves + x_leaves):
        raise _StepByStep
    c_shapes = [shape_of(leaf) for leaf in c_leaves]
    x_shapes = [shape_of(leaf) for leaf in x_leaves]
    out = {}  # the result's layout, known once the forward has run

    def unpack_inputs(z):
        c, start = [], 0
        for shape in c_shapes:
            size = int(np.prod(shape))
            c.append(ops.reshape(z[start:start + size], shape))
            start += size
        xs_ = []
        for shape in x_shapes:
            size = int(np.prod(shape))
            xs_.append(ops.reshape(z[start:start + size], shape))
            start += size
        return tree_unflatten(c_def, c), tree_unflatten(x_def, xs_)

    def pack(leaves):
        return ops.concatenate([ops.reshape(leaf, (-1,)) for leaf in leaves]) if leaves \
            else np.zeros(0)

    def run(z):
        """The loop on the packed input: (the carries before each step, the ys)."""
        carry, xs_ = unpack_inputs(z)
        xl, _ = tree_flatten(xs_)
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        carries, ys = [None] * steps, [None] * steps
        for i in order:
            carries[i] = carry
            x = tree_unflatten(x_def, [leaf[i] for leaf in xl]) if xl else None
            carry, ys[i] = f(carry, x)
        return carry, carries, ys

    def forward(z):
        carry, _, ys = run(z)
        final, _ = tree_flatten(carry)
        y_leaves = [tree_flatten(y)[0] for y in ys]
        flat = final + [leaf for per_step in y_leaves for leaf in per_step]
        if any(isinstance(v, Box) for v in flat) or not _floats(flat):
            raise _StepByStep  # f closed over a traced value, or made non-floats
        out["carry_def"], out["carry_shapes"] = tree_flatten(carry)[1], \
            [shape_of(v) for v in final]
        out["y_def"] = tree_flatten(ys[0])[1]
        out["y_shapes"] = [shape_of(v) for v in y_leaves[0]]
        stacked = [np.stack([per_step[k] for per_step in y_leaves])
                   for k in range(len(y_leaves[0]))]
        return np.concatenate([np.ravel(v) for v in final + stacked])

    def unpack_result(flat):
        start, final = 0, []
        for shape in out["carry_shapes"]:
            size = int(np.prod(shape))
            final.append(ops.reshape(flat[..., start:start + size], flat.shape[:-1] + shape))
            start += size
        stacked = []
        for shape in out["y_shapes"]:
            size = steps * int(np.prod(shape))
            stacked.append(ops.reshape(flat[..., start:start + size],
                                       flat.shape[:-1] + (steps,) + shape))
            start += size
        return final, stacked

    def reverse_rule(g, ans, z):
        g_final, g_stacked = unpack_result(g)
        _, carries, _ = run(z)          # each step's carry, from the (traced) input again
        _, xs_ = unpack_inputs(z)
        xl, _ = tree_flatten(xs_)
        g_carry = tree_unflatten(out["carry_def"], g_final)
        g_xs = [None] * steps
        order = range(steps) if reverse else range(steps - 1, -1, -1)
        for i in order:
            x = tree_unflatten(x_def, [leaf[i] for leaf in xl]) if xl else None
            g_y = tree_unflatten(out["y_def"], [leaf[i] for leaf in g_stacked])
            _, pullback = vjp(lambda c, x: f(c, x), carries[i], x)
            g_carry, g_xs[i] = pullback((g_carry, g_y))
        g_x_leaves = [ops.stack([tree_flatten(g_xs[i])[0][k] for i in range(steps)])
                      for k in range(len(x_shapes))]
        return pack(tree_flatten(g_carry)[0] + g_x_leaves)

    def forward_rule(t, ans, z):
        carry, xs_ = unpack_inputs(z)
        t_carry, t_xs = unpack_inputs(t)
        xl, _ = tree_flatten(xs_)
        tl, _ = tree_flatten(t_xs)
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        t_ys = [None] * steps
        for i in order:
            x = tree_unflatten(x_def, [leaf[i] for leaf in xl]) if xl else None
            tx = tree_unflatten(x_def, [leaf[i] for leaf in tl]) if tl else None
            (carry, _), (t_carry, t_ys[i]) = jvp(f, (carry, x), (t_carry, tx))
        y_leaves = [ops.stack([tree_flatten(t_ys[i])[0][k] for i in range(steps)])
                    for k in range(len(out["y_shapes"]))]
        return pack(tree_flatten(t_carry)[0] + y_leaves)

    op = Primitive(forward, "scan")
    op.defvjp(reverse_rule)
    op.defjvp(forward_rule)
    flat = op(pack(c_leaves + x_leaves))
    final, stacked = unpack_result(flat)
    return (tree_unflatten(out["carry_def"], final),
            tree_unflatten(out["y_def"], stacked))


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

"""JAX's structured control flow, for programs written with ``jax.lax``: ``fori_loop``,
``scan``, ``while_loop``, ``cond``, ``switch``, ``dynamic_slice`` and
``dynamic_update_slice``, with JAX's signatures and carries (any pytree).

Each runs its body as Python runs a loop, so every transform differentiates through it
as through any Python code. ``scan`` differentiated in its carry and xs is one operation
of the graph (its steps are not nodes; see ``scan``); the others record each step
(``while_loop``, as in JAX, is for the forward computation: it differentiates only
where its number of steps does not depend on what is differentiated).

Under ``cr.jit`` each is one loop of the program (chainrule/jit/loops.py): its body is
traced once, into a program of its own that the loop calls at each step, so
``make_program`` lists the body once, whatever the number of steps. A ``fori_loop``
there is a ``scan`` over ``arange(lower, upper)``: its index is a traced integer, as in
JAX (the dynamic slices at it are gathers of the program), and its derivatives are loops
too, as ``scan``'s are (its reverse and forward rules are scans). A ``while_loop``'s condition
is computed by the program at each step, so it may depend on data. A body that cannot
be one program for every step (it branches on data, changes the kind of its carry, or
closes over a value being differentiated) is traced step by step instead, as Python
runs it; a ``while_loop`` with a condition on data then raises, saying why. A ``cond``
or ``switch`` whose choice the program computes from its inputs runs every branch and
chooses with ``where``, as under ``cr.vmap`` below, so that each replay makes its own
choice.

Under ``cr.vmap`` a predicate, index or bound that differs per example is JAX's select
(control_batching.py): ``cond`` and ``switch`` run every branch and choose per example,
``while_loop`` runs until every example is done, a finished example keeping its carry.

>>> cr.fori_loop(0, 3, lambda i, x: x * 2.0, 1.0)
8.0
>>> carry, ys = cr.scan(lambda c, x: (c + x, c * x), 0.0, np.array([1.0, 2.0, 3.0]))
>>> float(carry), ys.tolist()
(6.0, [0.0, 2.0, 9.0])
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import arrays as xp, rules as ops
from ..primitive import Box, Primitive, raw, shape_of
from . import control_batching as batching
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
    try:
        lower, upper = int(raw(lower)), int(raw(upper))
    except TypeError:
        if batching.batched(lower) is None and batching.batched(upper) is None:
            raise
        # a bound per example of cr.vmap: the while_loop JAX makes of it, on (i, val)
        # while i < upper (examples with fewer steps keep their val)
        def step(carry):
            i, val = carry
            return i + 1, body_fun(i, val)
        return while_loop(lambda carry: carry[0] < upper, step, (lower, init_val))[1]
    if xp.recorder() is not None:  # cr.jit: a scan over the indices, one loop of the program
        # (the index a traced integer, as in JAX; a body that needs a Python int, to
        # index a list, is traced step by step instead)
        indices = np.arange(lower, upper)
        return scan(lambda val, i: (body_fun(i, val), None), init_val, indices)[0]
    val = init_val
    for i in range(lower, upper):
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
    the steps are recorded one by one instead (the same derivatives). Under ``cr.jit``
    the carries are kept from the forward loop for the reverse pass instead of being
    computed again.

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


def _recorder(leaves):
    """cr.jit's recorder, where the loop on these leaves can be one call of its program
    (no transform's value among them: a transform records its own steps)."""
    recorder = xp.recorder()
    if recorder is None or not hasattr(recorder, "scan") or \
            any(isinstance(v, Box) for v in leaves):
        return None
    return recorder


def _one_call(f, init, xs, steps, reverse=False):
    """Under cr.jit, the loop ``carry, y = f(carry, x)`` as one call of the program,
    its body traced once (chainrule/jit/loops.py): (carry, ys) as a scan returns them;
    else why it is not (a string; None outside cr.jit)."""
    c_leaves, c_def = tree_flatten(init)
    x_leaves, x_def = tree_flatten(xs)
    recorder = _recorder(c_leaves + x_leaves)
    if recorder is None or steps < 1:
        return None
    # a Python number in the carry starts as the 0-d array that the body's arithmetic
    # makes of it, so that every step carries the same kind of value (as JAX's weak types)
    c_leaves = [np.asarray(v) if type(v) in (float, int, bool) else v for v in c_leaves]
    y_def = []

    def body(c, x):
        carry, y = f(tree_unflatten(c_def, c), tree_unflatten(x_def, x))
        c_new, new_def = tree_flatten(carry)
        if new_def != c_def:
            return None
        y_leaves, structure = tree_flatten(y)
        y_def.append(structure)
        return c_new, y_leaves
    looped = recorder.scan(body, c_leaves, x_leaves, steps, reverse)
    if type(looped) is str:
        return looped
    return tree_unflatten(c_def, looped[0]), tree_unflatten(y_def[0], looped[1])


def _loop(f, init, xs, steps, reverse):
    """The scan as Python runs it, step after step (under cr.jit, one call of the
    program where it can be)."""
    looped = _one_call(f, init, xs, steps, reverse)
    if type(looped) is tuple:
        return looped
    leaves, treedef = tree_flatten(xs)
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    carry, ys = init, [None] * steps
    for i in order:
        x = tree_unflatten(treedef, [leaf[i] for leaf in leaves]) if leaves else None
        carry, ys[i] = f(carry, x)
    if steps == 0:
        return carry, _no_ys(f, init, leaves, treedef)
    y_leaves, y_def = zip(*(tree_flatten(y) for y in ys))
    stacked = [ops.stack([leaves_i[k] for leaves_i in y_leaves])
               for k in range(len(y_leaves[0]))]
    return carry, tree_unflatten(y_def[0], stacked)


def _no_ys(f, init, leaves, treedef):
    """The ys of a scan of no steps: empty stacks of what one step would give (as JAX's,
    which traces its body once to know them). The body runs once on zeros shaped like
    one x, and what it returns is thrown away but for its shapes and dtypes."""
    x = tree_unflatten(treedef, [xp.zeros(shape_of(leaf)[1:], dtype=xp.result_type(raw(leaf)))
                                 for leaf in leaves]) if leaves else None
    _, y = f(init, x)
    y_leaves, y_def = tree_flatten(y)
    Tensor = _tensor_type()
    empty = [xp.zeros((0,) + shape_of(leaf), dtype=xp.result_type(raw(leaf)))
             for leaf in y_leaves]
    return tree_unflatten(y_def, [Tensor(e) if isinstance(leaf, Box) else e
                                  for e, leaf in zip(empty, y_leaves)])


def _tensor_type():
    from ..tensor import Tensor  # (chainrule.tensor imports the transforms)
    return Tensor


def _as_given(carry, given):
    """The carry with each plain array made a Tensor where the loop was given a Tensor
    or a transform's value, which have the same methods (the scan's operation runs its
    body on plain arrays, or on cr.jit's traced ones)."""
    if not any(given):
        return carry
    Tensor = _tensor_type()
    leaves, treedef = tree_flatten(carry)
    return tree_unflatten(treedef, [Tensor._make(leaf) if wrap and not isinstance(leaf, Box)
                                    else leaf for leaf, wrap in zip(leaves, given)])


def _plain(tree):
    """Tensors that no graph holds (made by ``_as_given``, or constants) as their arrays."""
    leaves, treedef = tree_flatten(tree)
    if not leaves:
        return tree
    Tensor = _tensor_type()
    return tree_unflatten(treedef, [leaf._data if type(leaf) is Tensor and
                                    not leaf.requires_grad else leaf for leaf in leaves])


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
    moving = [k for k, leaf in enumerate(x_leaves) if isinstance(leaf, Box)]
    if not _floats(c_leaves + [x_leaves[k] for k in moving]):
        raise _StepByStep
    fixed = [raw(leaf) for leaf in x_leaves]  # (an x not differentiated stays out of z)
    given = [isinstance(leaf, Box) for leaf in c_leaves]  # (a Tensor, a tracer)
    c_shapes = [shape_of(leaf) for leaf in c_leaves]
    x_shapes = [shape_of(x_leaves[k]) for k in moving]
    out = {}  # the result's layout, known once the forward has run

    def unpack_inputs(z):
        """(the carry, the xs' leaves) packed in z (the xs not differentiated as given)."""
        c, start = [], 0
        for shape in c_shapes:
            size = int(np.prod(shape))
            c.append(ops.reshape(z[start:start + size], shape))
            start += size
        xs_ = list(fixed)
        for k, shape in zip(moving, x_shapes):
            size = int(np.prod(shape))
            xs_[k] = ops.reshape(z[start:start + size], shape)
            start += size
        return tree_unflatten(c_def, c), xs_

    def f_leaves(c, x):
        """f of the carry and of the list of x's leaves; the body sees a Tensor where
        it was given one (``c.at[i].set``, as in a step run eagerly), and what it
        returns goes back to plain arrays where no graph holds it."""
        carry, y = f(_as_given(c, given), tree_unflatten(x_def, x or []))
        return _plain(carry), _plain(y)

    def with_x(x_leaves, moved):
        """f of the carry and of the differentiated leaves of x, the others as given."""
        def f_of(c, moved_leaves):
            leaves = list(x_leaves)
            for k, leaf in zip(moved, moved_leaves):
                leaves[k] = leaf
            return f(c, tree_unflatten(x_def, leaves))
        return f_of

    def pack(leaves):
        return ops.concatenate([ops.reshape(leaf, (-1,)) for leaf in leaves]) if leaves \
            else np.zeros(0)

    def forward(z):
        carry, xs_ = unpack_inputs(z)
        step = f_leaves
        if xp.recorder() is None:
            final, ys = _loop(step, carry, xs_, steps, reverse)
        else:  # under cr.jit the carries are kept for the reverse pass, not run again
            def keep(c, x):
                new, y = step(c, x)
                return new, (y, c)
            final, (ys, carries) = _loop(keep, carry, xs_, steps, reverse)
            out["carries"] = (z, carries)
        final, out["carry_def"] = tree_flatten(final)
        stacked, out["y_def"] = tree_flatten(ys)
        if any(isinstance(v, Box) for v in final + stacked) or not _floats(final + stacked):
            raise _StepByStep  # f closed over a traced value, or made non-floats
        out["carry_shapes"] = [shape_of(v) for v in final]
        out["y_shapes"] = [shape_of(v)[1:] for v in stacked]
        leaves = final + stacked  # (none at all: a scan that only walks, lax.map's carry)
        return np.concatenate([np.ravel(v) for v in leaves]) if leaves else np.zeros(0)

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
        carry, xs_ = unpack_inputs(z)
        kept = out.get("carries")
        if kept is not None and kept[0] is z:
            carries = kept[1]
        else:  # each step's carry, from the (traced) input again
            carries = scan(lambda c, x: (f_leaves(c, x)[0], c), carry, xs_, steps, reverse)[1]

        def back(g_carry, step):  # one step backwards: cr.vjp of f
            c, x, g_y = step
            if not moving:
                return vjp(lambda c: f_leaves(c, x), c)[1]((g_carry, g_y))[0], None
            return vjp(with_x(x, moving), c, [x[k] for k in moving])[1]((g_carry, g_y))
        g_ys = tree_unflatten(out["y_def"], g_stacked)
        g_carry, g_xs = scan(back, tree_unflatten(out["carry_def"], g_final),
                             (carries, xs_, g_ys), steps, not reverse)
        return pack(tree_flatten(g_carry)[0] + (tree_flatten(g_xs)[0] if moving else []))

    def forward_rule(t, ans, z):
        carry, xs_ = unpack_inputs(z)
        t_carry, t_xs = unpack_inputs(t)
        t_moved = [t_xs[k] for k in moving]

        def step(both, x_both):  # one step forwards: cr.jvp of f
            x, t_x = x_both
            (c, _), (t_c, t_y) = jvp(with_x(x, moving), (both[0], [x[k] for k in moving]),
                                     (both[1], t_x))
            return (c, t_c), t_y
        (_, t_carry), t_ys = scan(step, (carry, t_carry), (xs_, t_moved), steps, reverse)
        return pack(tree_flatten(t_carry)[0] + tree_flatten(t_ys)[0])

    op = Primitive(forward, "scan")
    op.defvjp(reverse_rule)
    op.defjvp(forward_rule)
    flat = op(pack(c_leaves + [x_leaves[k] for k in moving]))
    final, stacked = unpack_result(flat)
    return (tree_unflatten(out["carry_def"], final),
            tree_unflatten(out["y_def"], stacked))


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns val.

    >>> cr.while_loop(lambda v: v < 10, lambda v: v * 3, 1)
    27
    """
    leaves, treedef = tree_flatten(init_val)
    recorder = _recorder(leaves)
    reason = None
    if recorder is not None:
        def body(c):
            new, new_def = tree_flatten(body_fun(tree_unflatten(treedef, c)))
            return new if new_def == treedef else None
        looped = recorder.while_loop(lambda c: cond_fun(tree_unflatten(treedef, c)), body,
                                     leaves)
        if type(looped) is not str:
            return tree_unflatten(treedef, looped)
        reason = looped
    val = init_val
    try:
        pred = cond_fun(val)
        mask = batching.batched(pred)
        if mask is not None:  # cr.vmap: some examples stop before others
            return batching.batched_while(cond_fun, body_fun, val, batching.as_mask(mask))
        while bool(raw(pred)):
            val = body_fun(val)
            pred = cond_fun(val)
    except TypeError as error:  # (a condition on a traced value cannot run in Python)
        if reason is None:
            raise
        raise TypeError(f"cr.while_loop under cr.jit: the loop cannot be one loop of the "
                        f"program: {reason}") from error
    return val


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; the branch not
    taken does not run, except where the choice differs per example (cr.vmap) or per
    call (cr.jit, a predicate computed from the inputs): there both run and ``where``
    picks.

    >>> cr.cond(2.0 > 1.0, lambda x: x + 1, lambda x: x - 1, 5.0)
    6.0
    """
    mask = batching.batched(pred)
    if mask is not None:  # cr.vmap, a predicate per example: both branches, then where
        return batching.select_cond(mask, true_fun, false_fun, operands)
    if _traced(pred):  # cr.jit, a predicate of the data: the same, so a replay chooses
        return batching.select_cond(raw(pred), true_fun, false_fun, operands)
    return true_fun(*operands) if bool(raw(pred)) else false_fun(*operands)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``, the index clamped to the branches, as JAX's.

    >>> cr.switch(5, [lambda x: x, lambda x: 2 * x], 3.0)
    6.0
    """
    if not branches:
        raise ValueError("switch: expected at least one branch, got none")
    mask = batching.batched(index)
    if mask is not None:  # cr.vmap, an index per example: every branch, then where
        return batching.select_switch(mask, branches, operands)
    if _traced(index):  # cr.jit, an index of the data: the same, so a replay chooses
        return batching.select_switch(raw(index), branches, operands)
    k = int(np.clip(int(raw(index)), 0, len(branches) - 1))
    return branches[k](*operands)


def _traced(choice):
    """Whether a predicate or index is a value of the program cr.jit is tracing (its
    number is known at this trace only): then ``cond`` and ``switch`` run every branch
    and choose with ``where``, as under cr.vmap, so that each replay makes its own choice
    (and, as there, a branch that is nan where it is not chosen still makes a nan
    gradient)."""
    inner = raw(choice)
    return xp.recorder() is not None and type(inner) in xp.ARRAYS and \
        type(inner) is not np.ndarray


def _starts(operand, start_indices, sizes, name):
    shape = shape_of(operand)
    if len(start_indices) != len(shape) or len(sizes) != len(shape):
        raise ValueError(f"{name}: expected one start and one size per axis of the operand "
                         f"{shape}, got {len(start_indices)} starts and {len(sizes)} sizes")
    # a negative start counts from the end, then it is clamped so that the slice fits,
    # as JAX does
    return [_clamped(s, n, k) for s, n, k in zip(start_indices, shape, sizes)]


def _clamped(start, n, k):
    """The start as a Python int, or, where cr.jit traces it (a loop's index), as a
    traced integer computed in the program."""
    try:
        s = int(raw(start))
    except TypeError:
        s = raw(start)
        return xp.clip(xp.where(s < 0, s + n, s), 0, n - k)
    return int(np.clip(s + n if s < 0 else s, 0, n - k))


def _static(starts):
    return all(isinstance(s, int) for s in starts)


def _gathered_index(starts, sizes):
    """starts[d] + arange(sizes[d]) along every axis d, shaped to broadcast as an open
    mesh: an index that reads (or writes) the block at traced starts."""
    rank = len(sizes)
    return tuple(xp.reshape(s + xp.arange(k), [k if e == d else 1 for e in range(rank)])
                 for d, (s, k) in enumerate(zip(starts, sizes)))


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    """``operand[s0:s0+k0, s1:s1+k1, ...]``; a negative start counts from the end, and
    the starts are clamped so that the slice fits.

    >>> cr.dynamic_slice(np.arange(6.0), [4], [3]).tolist()       # start clamped to 3
    [3.0, 4.0, 5.0]
    """
    starts = _starts(operand, start_indices, slice_sizes, "dynamic_slice")
    if _static(starts):
        return operand[tuple(slice(s, s + k) for s, k in zip(starts, slice_sizes))]
    index = _gathered_index(starts, slice_sizes)
    if isinstance(operand, np.ndarray):  # (a constant: NumPy would not take a traced index)
        return xp.call(_read_block, operand, *index)
    return operand[index]


def _read_block(operand, *index):
    return operand[index]


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """A copy of ``operand`` with ``update`` written from ``start_indices`` (clamped);
    differentiable in both, as ``x.at[...].set``.

    >>> cr.dynamic_update_slice(np.zeros(4), np.ones(2), [1]).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    sizes = shape_of(update)
    starts = _starts(operand, start_indices, sizes, "dynamic_update_slice")
    index = tuple(slice(s, s + k) for s, k in zip(starts, sizes)) if _static(starts) \
        else _gathered_index(starts, sizes)
    return ops.index_set(operand, update, index=index)

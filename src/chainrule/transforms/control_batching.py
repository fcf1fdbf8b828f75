"""``cond``, ``switch``, ``while_loop`` and ``fori_loop`` under ``cr.vmap`` when the
predicate, the index or a bound differs from example to example, as ``jax.vmap`` runs
them.

A Python ``if`` cannot take one branch for some examples and the other for the rest, so
a batched choice becomes a selection, as in JAX:

* ``cond`` and ``switch`` run every branch on the whole batch, then pick each
  example's result with ``where`` (``switch``'s index clamped to the branches). Every
  branch runs, so a branch's side effects (a ``cr.debug.print``) show for every
  example, and a branch that is nan where it is not chosen still gives a nan
  gradient through ``where`` (0 times nan), as in JAX.
* ``while_loop`` runs while the condition holds for *any* example; at each step the
  body runs on the whole batch and an example whose condition no longer holds keeps
  its carry (the body's result is selected with its condition). Under ``cr.jit`` the
  loop is one loop of the program where the carry is plain batched arrays (the body
  traced once, the condition "any example still running" computed by the program).
* ``fori_loop`` with a batched bound is the ``while_loop`` JAX makes of it: the carry
  is (i, val), the condition ``i < upper``.

Each step records ordinary operations (``where`` among them), so every transform
differentiates through the selection, as through any Python code.
"""

from .. import arrays as xp, rules as ops
from ..primitive import Box, raw
from .batching import BatchTracer, _numbers
from .pytrees import tree_flatten, tree_unflatten

__all__ = ["batched", "as_mask", "select_cond", "select_switch", "batched_while"]


def batched(x):
    """The mask (or index) of ``cr.vmap`` inside x where it differs per example, else
    None (a plain value Python can branch on)."""
    inner = raw(x)
    return inner if isinstance(inner, BatchTracer) else None


def as_mask(pred):
    """A batched predicate as booleans (JAX takes a number for cond: true where not 0)."""
    return pred if pred.dtype == bool else pred != 0


def _select(name, mask, chosen, other):
    """``where(mask, chosen, other)`` leaf by leaf over two results of one structure."""
    c_leaves, c_def = tree_flatten(chosen)
    o_leaves, o_def = tree_flatten(other)
    if c_def != o_def:
        raise TypeError(f"{name}: with a choice made from the data (per example under "
                        f"cr.vmap, at each replay under cr.jit) every branch must return "
                        f"the same structure, got {c_def} and {o_def}")
    return tree_unflatten(c_def, [ops.where(mask, c, o) for c, o in zip(c_leaves, o_leaves)])


def select_cond(pred, true_fun, false_fun, operands):
    """``cond`` with a batched predicate: both branches, then a per-example choice."""
    mask = as_mask(pred)
    return _select("cond", mask, true_fun(*operands), false_fun(*operands))


def select_switch(index, branches, operands):
    """``switch`` with a batched index: every branch, then a per-example choice. The
    choice ``index >= k`` for k = 1, 2, ... clamps as JAX does (below 0 the first
    branch, past the end the last)."""
    out = branches[0](*operands)
    for k in range(1, len(branches)):
        out = _select("switch", index >= k, branches[k](*operands), out)
    return out


def _any(mask, what):
    """Whether any example (at every level of vmap) still runs the loop."""
    return xp.branch(xp.any(_numbers(mask)), what)


def batched_while(cond_fun, body_fun, val, mask):
    """``while_loop`` whose condition ``mask`` (of ``val``) differs per example."""
    looped = _one_loop(cond_fun, body_fun, val, mask)
    if looped is not None:
        return looped
    what = "some example's while_loop condition"
    while _any(mask, what):
        val = _select("while_loop", mask, body_fun(val), val)
        pred = cond_fun(val)
        mask = batched(pred)
        if mask is None:  # the body made the condition the same for every example
            if not bool(raw(pred)):
                return val
            mask = pred
        else:
            mask = as_mask(mask)
    return val


def _one_loop(cond_fun, body_fun, val, mask):
    """Under cr.jit, the batched loop as one loop of the program, on the carry's
    batched arrays (each leaf broadcast to the batch: an example's carry may change
    where another's does not); None where it cannot be (a transform's value in the
    carry, nested vmaps, a body that cannot be traced once)."""
    recorder = xp.recorder()
    if recorder is None or not hasattr(recorder, "while_loop"):
        return None
    level, size = mask._level, mask.value.shape[0]
    leaves, treedef = tree_flatten(val)
    values = []
    for leaf in leaves:
        if isinstance(leaf, BatchTracer) and leaf._level == level:
            leaf = leaf.value
        elif not isinstance(leaf, Box):
            leaf = xp.as_array(leaf)
            leaf = xp.broadcast_to(leaf, (size,) + tuple(leaf.shape))
        if isinstance(leaf, Box):
            return None
        values.append(leaf)

    def wrap(c):
        return tree_unflatten(treedef, [BatchTracer(v, level) for v in c])

    def unwrap(tree, like):
        out = []
        for leaf, old in zip(tree_flatten(tree)[0], like):
            if isinstance(leaf, BatchTracer) and leaf._level == level:
                leaf = leaf.value
            elif not isinstance(leaf, Box):
                leaf = xp.broadcast_to(xp.as_array(leaf), old.shape)
            if isinstance(leaf, Box):
                return None
            out.append(leaf)
        return out

    def step_mask(c):
        m = batched(cond_fun(wrap(c)))
        return None if m is None or m._level != level else as_mask(m)

    def cond(c):
        m = step_mask(c)
        return None if m is None or isinstance(m.value, Box) else xp.any(m.value)

    def body(c):
        m = step_mask(c)
        if m is None:
            return None
        new = body_fun(wrap(c))
        if tree_flatten(new)[1] != treedef:
            return None
        return unwrap(_select("while_loop", m, new, wrap(c)), c)

    looped = recorder.while_loop(cond, body, values)
    if type(looped) is str:
        return None
    return tree_unflatten(treedef, [BatchTracer(v, level) for v in looped])

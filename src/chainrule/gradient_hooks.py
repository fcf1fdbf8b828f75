"""Functions called with a tensor's gradient during the backward pass, as PyTorch's
``Tensor.register_hook``: each is handed the gradient once every path to the tensor has
added its part, and may return another gradient of the same shape and dtype, which is
what flows on (to the tensor's operands, or into a leaf's ``.grad``).

A node keeps its hooks in the slot that says whether to keep its gradient
(``_retain``): False for most nodes, True after ``retain_grad()``, a ``GradientHooks``
once a hook is registered (which remembers ``retain_grad()`` too). The backward walk
already looks at that slot for every node, so a graph without hooks pays nothing for
them.

>>> x = cr.tensor([1.0, 2.0], requires_grad=True)
>>> h = x * 3
>>> handle = h.register_hook(lambda g: g * 10)     # the gradient at h, times 10
>>> (h * h).sum().backward()
>>> x.grad.tolist()                                # 2h * 10 * 3
[180.0, 360.0]
"""

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from .arrays import ARRAYS
from .boxes import Box
from .modes import no_grad

__all__ = ["GradientHooks", "add_hook", "keep_gradient", "keeps_gradient", "run_hooks",
           "run_after_accumulate", "HookHandle"]

_ids = itertools.count()


class GradientHooks:
    """A node's hooks: ``before`` (called with the gradient, in registration order)
    and ``after_accumulate`` (a leaf's, called with the leaf once its ``.grad`` holds
    the gradient); ``retain`` is ``retain_grad()``'s request."""

    __slots__ = ("retain", "before", "after_accumulate")

    def __init__(self, retain: bool) -> None:
        self.retain = retain
        self.before: dict[int, Callable] = {}
        self.after_accumulate: dict[int, Callable] = {}


class HookHandle:
    """What a hook's registration returns: ``remove()`` takes the hook off (a second
    call does nothing); as a context manager, the hook is on inside the ``with``."""

    def __init__(self, table: dict, key: int) -> None:
        self._table, self.id = table, key

    def remove(self) -> None:
        """Take the hook off."""
        self._table.pop(self.id, None)

    def __enter__(self) -> "HookHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _hooks_of(node: Any) -> GradientHooks:
    held = node._retain
    if type(held) is not GradientHooks:
        held = node._retain = GradientHooks(bool(held))
    return held


def add_hook(node: Any, hook: Callable, after_accumulate: bool = False) -> HookHandle:
    """Register ``hook`` on ``node``: called with its gradient (or, ``after_accumulate``,
    with the leaf once its ``.grad`` is updated)."""
    hooks = _hooks_of(node)
    table = hooks.after_accumulate if after_accumulate else hooks.before
    key = next(_ids)
    table[key] = hook
    return HookHandle(table, key)


def keep_gradient(node: Any, keep: bool = True) -> None:
    """``retain_grad()``: the walk hands this node's gradient back (or, ``keep=False``,
    no longer does)."""
    if type(node._retain) is GradientHooks:
        node._retain.retain = keep
    else:
        node._retain = keep


def keeps_gradient(node: Any) -> bool:
    """Whether ``retain_grad()`` was asked of this node."""
    held = node._retain
    return held.retain if type(held) is GradientHooks else bool(held)


def run_hooks(node: Any, g: Any, owned: bool) -> tuple[Any, bool]:
    """The gradient after the node's hooks, each handed the previous one's result as a
    Tensor (a gradient that is a Tensor already, under ``create_graph``, as it is), and
    whether the array is new. A hook returning None leaves the gradient as it is."""
    held = node._retain
    if type(held) is not GradientHooks or not held.before:
        return g, owned
    for hook in list(held.before.values()):
        if isinstance(g, Box):  # (create_graph: the hook's operations are recorded)
            given = g
            out = hook(given)
        else:  # a gradient of numbers: the hook computes numbers too, as in PyTorch,
            given = type(node)._make(g)  # whose backward runs without recording
            with no_grad():
                out = hook(given)
        if out is None or out is given:
            continue
        g, owned = _checked(out, g, hook), False
    return g, owned


def run_after_accumulate(leaf: Any) -> None:
    """A leaf's ``register_post_accumulate_grad_hook`` hooks, once its .grad is set."""
    held = leaf._retain
    if type(held) is GradientHooks:
        for hook in list(held.after_accumulate.values()):
            hook(leaf)


def _checked(out: Any, g: Any, hook: Callable) -> Any:
    """A hook's result, refused unless it has the gradient's shape and dtype (as
    PyTorch refuses); a Tensor without a graph becomes its array."""
    name = getattr(hook, "__name__", type(hook).__name__)
    shape, dtype = np.shape(g), getattr(g, "dtype", None)
    if isinstance(out, Box) and not isinstance(g, Box):
        out = out._contents()
    if np.shape(out) != shape:
        raise RuntimeError(f"hook '{name}' returned a gradient of shape {np.shape(out)}; "
                           f"expected the tensor's shape {shape}")
    out_dtype = getattr(out, "dtype", None)
    if dtype is not None and out_dtype is not None and out_dtype != dtype:
        raise RuntimeError(f"hook '{name}' returned a gradient of dtype {out_dtype}; "
                           f"expected the tensor's dtype {dtype}")
    if not isinstance(out, Box) and type(out) not in ARRAYS:  # (a traced one: cr.jit)
        out = np.asarray(out, dtype=dtype)
    return out

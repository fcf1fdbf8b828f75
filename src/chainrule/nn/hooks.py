"""A Module's forward hooks, as torch's: functions called before a module's forward
(``register_forward_pre_hook``: they may change its arguments) and after it
(``register_forward_hook``: they may read or replace its output), each removed by the
handle its registration returned; and the call of its backward hooks
(``backward_hooks.py``), whose tables live beside them.

The hooks live in two dicts on the module, replaced (not changed in place) at each
registration and removal, so that cr.jit, which compares what a module holds by
identity, traces again rather than replaying a program made with other hooks.

>>> layer = cr.nn.ReLU()
>>> handle = layer.register_forward_hook(lambda m, args, out: out * 10)
>>> layer(cr.tensor([-1.0, 2.0])).tolist()
[0.0, 20.0]
>>> handle.remove()
>>> layer(cr.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""

import itertools
from collections.abc import Callable
from typing import Any

from .backward_hooks import gate_inputs, gate_outputs, has_backward_hooks

__all__ = ["RemovableHandle", "HookRegistration", "add", "call_with_hooks", "has_hooks"]

_ids = itertools.count()


class RemovableHandle:
    """What a hook's registration returns: ``remove()`` takes the hook off (once; again
    does nothing); as a context manager, the hook is on inside the ``with`` block.

    >>> handle = cr.nn.Identity().register_forward_pre_hook(lambda m, args: None)
    >>> handle.remove()
    """

    def __init__(self, module: Any, table: str, key: int) -> None:
        self.module, self.table, self.id = module, table, key

    def remove(self) -> None:
        """Take the hook off."""
        hooks = self.module.__dict__.get(self.table)
        if hooks is None or self.id not in hooks:
            return
        rest = {k: v for k, v in hooks.items() if k != self.id}
        if rest:
            self.module.__dict__[self.table] = rest
        else:
            del self.module.__dict__[self.table]

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def has_hooks(module: Any) -> bool:
    """Whether the module has forward or backward hooks (a speed path that skips its
    call, such as Sequential's fused Linear and ReLU, must not skip them)."""
    held = module.__dict__
    return "_forward_hooks" in held or "_forward_pre_hooks" in held or \
        has_backward_hooks(module)


def add(module: Any, table: str, hook: Callable, prepend: bool, with_kwargs: bool,
        always_call: bool) -> RemovableHandle:
    """Register ``hook`` in the module's ``table`` (a new dict: see the module's note)."""
    if not callable(hook):
        raise TypeError(f"{type(module).__name__}: a hook must be callable, got "
                        f"{type(hook).__name__}")
    key = next(_ids)
    entry = {key: (hook, with_kwargs, always_call)}
    old = module.__dict__.get(table, {})
    module.__dict__[table] = {**entry, **old} if prepend else {**old, **entry}
    return RemovableHandle(module, table, key)


def call_with_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    """The module's forward with its pre-hooks before and its hooks after, as torch
    runs them (in registration order, prepended ones first)."""
    for hook, with_kwargs, _ in list(module.__dict__.get("_forward_pre_hooks", {}).values()):
        if with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise TypeError(f"{type(module).__name__}: a forward pre-hook with "
                                    f"kwargs must return None or (args, kwargs), got "
                                    f"{type(result).__name__}")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    call = None
    if has_backward_hooks(module):  # (through the input gate: backward_hooks.py)
        args, call = gate_inputs(module, args)
    after = list(module.__dict__.get("_forward_hooks", {}).values())
    try:
        output = module.forward(*args, **kwargs)
    except BaseException:
        for hook, with_kwargs, always_call in after:
            if always_call:
                try:
                    hook(module, args, kwargs, None) if with_kwargs else \
                        hook(module, args, None)
                except Exception:  # (the forward's error is the one to see)
                    pass
        raise
    for hook, with_kwargs, _ in after:
        result = hook(module, args, kwargs, output) if with_kwargs else \
            hook(module, args, output)
        if result is not None:
            output = result
    return output if call is None else gate_outputs(call, output)


class HookRegistration:
    """A Module's methods that register its hooks (``Module`` takes them)."""

    __slots__ = ()

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward, as torch's: a result other
        than None replaces the positional arguments (a tuple, or one value); with
        ``with_kwargs``, ``hook(module, args, kwargs)`` may return ``(args, kwargs)``.
        Returns a handle whose ``remove()`` takes the hook off.

        >>> layer = cr.nn.Identity()
        >>> handle = layer.register_forward_pre_hook(lambda m, args: (2 * args[0],))
        >>> layer(cr.tensor([1.0])).tolist()
        [2.0]
        >>> handle.remove()
        """
        return add(self, "_forward_pre_hooks", hook, prepend, with_kwargs, False)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward, as torch's (to read a
        layer's activations, or replace its output by returning something other than
        None); with ``with_kwargs``, ``hook(module, args, kwargs, output)``;
        ``always_call`` calls it even when forward raised. Returns a handle whose
        ``remove()`` takes the hook off.

        >>> seen = []
        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> with layer.register_forward_hook(lambda m, args, out: seen.append(out.shape)):
        ...     _ = layer(cr.ones(3, 2))
        >>> seen
        [(3, 1)]
        """
        return add(self, "_forward_hooks", hook, prepend, with_kwargs, always_call)

    def register_full_backward_pre_hook(self, hook: Callable, *,
                                        prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when backward() has the gradients of this
        module's outputs (a tuple, None where none arrived); a tuple returned replaces
        them. As torch's (see nn/backward_hooks.py).

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> x = cr.ones(1, 2, requires_grad=True)
        >>> with layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,)):
        ...     layer(x).sum().backward()   # no gradient flows into the layer
        >>> layer.weight.grad.tolist()
        [[0.0, 0.0]]
        """
        return add(self, "_backward_pre_hooks", hook, prepend, False, False)

    def register_full_backward_hook(self, hook: Callable, *,
                                    prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when backward() has the
        gradients of this module's positional inputs; a tuple returned replaces
        ``grad_input``. As torch's (see nn/backward_hooks.py).

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> x = cr.ones(1, 2, requires_grad=True)
        >>> with layer.register_full_backward_hook(lambda m, gi, go: (cr.ones_like(gi[0]),)):
        ...     layer(x).sum().backward()
        >>> x.grad.tolist()                 # what the hook put in place of the gradient
        [[1.0, 1.0]]
        """
        return add(self, "_backward_hooks", hook, prepend, False, False)

"""A Module's forward hooks, as torch's: functions called before a module's forward
(``register_forward_pre_hook``: they may change its arguments) and after it
(``register_forward_hook``: they may read or replace its output), each removed by the
handle its registration returned.

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

__all__ = ["RemovableHandle", "add", "call_with_hooks", "has_hooks"]

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
    """Whether the module has forward hooks (a speed path that skips its call, such as
    Sequential's fused Linear and ReLU, must not skip them)."""
    return "_forward_hooks" in module.__dict__ or "_forward_pre_hooks" in module.__dict__


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
    return output

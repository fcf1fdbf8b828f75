"""``cr.debug.print`` and ``cr.debug.callback``: JAX's ``jax.debug``, a look at the values
inside transformed code.

A plain ``print`` inside ``cr.jit`` runs once, while the function is traced, and shows
traced values; inside ``grad`` or ``vmap`` it shows tracers. These show the numbers:

* under ``cr.jit`` the call is a call of the program (an effect, which every pass keeps
  in its place), so it runs at every call of the jitted function, with that call's
  values;
* under ``grad``, ``jvp`` and the other derivatives, the values are what the tracers
  carry (the primal values, once per call of the function, as JAX prints them);
* under ``vmap`` the callback runs once per example, with that example's values (JAX's
  batching rule for ``debug.callback`` does the same), nested vmaps example by example.
"""

from typing import Any, Callable

from .. import arrays as xp
from ..primitive import raw, shape_of
from .batching import BatchTracer
from .pytrees import tree_flatten, tree_unflatten

__all__ = ["print", "callback"]

_builtin_print = print


def callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
             **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` with the values of arrays inside transformed
    code (pytrees of them too): at every call of a ``cr.jit`` function, for each example
    of a ``vmap``. ``ordered`` is JAX's: calls here always run in program order.

    >>> seen = []
    >>> f = cr.jit(lambda x: cr.debug.callback(seen.append, x * 2) or x)
    >>> _ = f(1.0); _ = f(2.0)                # at each call, not only while tracing
    >>> seen
    [2.0, 4.0]
    """
    del ordered
    if not callable(callback):
        raise TypeError(f"cr.debug.callback: expected a function to call, got "
                        f"{type(callback).__name__} {callback!r:.60}")
    leaves, treedef = tree_flatten((args, kwargs))
    _run(callback, treedef, leaves)


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` with the values of arrays inside transformed
    code, as ``jax.debug.print``: at every call of a ``cr.jit`` function, once per
    example under ``vmap``.

    >>> _ = cr.vmap(lambda x: cr.debug.print("x = {}", x) or x)(np.array([1.0, 2.0]))
    x = 1.0
    x = 2.0
    """
    if not isinstance(fmt, str):
        raise TypeError(f"cr.debug.print: the first argument is a format string "
                        f"('x = {{}}'), got {type(fmt).__name__}")
    callback(lambda *a, **k: _builtin_print(fmt.format(*a, **k)), *args, ordered=ordered,
             **kwargs)


def _run(function, treedef, leaves):
    """The callback on these leaves: split per example at the innermost vmap level,
    recorded as a call of the program under cr.jit, else called now."""
    leaves = [raw(leaf) for leaf in leaves]  # (a derivative's tracers: what they carry)
    levels = [leaf._level for leaf in leaves if isinstance(leaf, BatchTracer)]
    if levels:
        level = max(levels)
        mine = [isinstance(leaf, BatchTracer) and leaf._level == level for leaf in leaves]
        size = next(shape_of(leaf.value)[0] for leaf, m in zip(leaves, mine) if m)
        for i in range(size):
            _run(function, treedef, [leaf.value[i] if m else leaf
                                     for leaf, m in zip(leaves, mine)])
        return

    def call(*values):
        args, kwargs = tree_unflatten(treedef, list(values))
        function(*args, **kwargs)

    recorder = xp.recorder()
    if recorder is None:
        call(*leaves)
    else:  # one call of the program, kept by every pass: it runs at each replay
        recorder.record(call, tuple(leaves), {}, pure=False, force=True)

"""``cr.pmap``: ``jax.pmap`` on the one CPU chainrule computes on, so that a program
written for JAX's devices runs by its imports. JAX maps over devices, one example per
device; here every example runs on the CPU at once: ``cr.vmap`` with the axis named
for ``chainrule.lax``'s collectives (``psum``, ``pmean``, ``all_gather``...), traced
and replayed by ``cr.jit`` as JAX compiles a pmap. Where JAX refuses an axis larger
than its device count, this maps any size.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..compat.jax_runtime import Device, _refuse_platform
from ..transforms.vmap_axes import vmap
from .jitted import jit

__all__ = ["pmap"]


def pmap(fun: Callable[..., Any], axis_name: Any = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Iterable[int] = (),
         devices: Sequence[Device] | None = None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums: int | Iterable[int] = ()) -> Any:
    """``fun`` mapped over the leading axis of its arguments (``in_axes``, as vmap's),
    ``axis_name`` naming that axis for the collectives, compiled with cr.jit. Arguments
    in ``static_broadcasted_argnums`` are passed to every example whole (and a new
    value traces again); ``in_axes``, if a tuple, has one entry per argument (static
    ones included, as JAX's) or one per mapped argument. ``devices`` may name the CPU
    only; ``donate_argnums`` changes nothing (NumPy's arrays are not donated).

    >>> from chainrule import lax
    >>> f = cr.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")
    >>> f(np.array([1.0, 3.0])).tolist()
    [0.25, 0.75]
    """
    _refuse_platform(backend, "pmap")
    if devices is not None and any(not isinstance(d, Device) for d in devices):
        raise ValueError(f"pmap(devices={list(devices)!r}): chainrule computes on its one "
                         f"CPU; expected None or cr.devices()")
    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))

    def mapped(*args):
        dynamic = [i for i in range(len(args))
                   if i not in static and i - len(args) not in static]
        axes = in_axes
        if isinstance(axes, (tuple, list)) and len(axes) == len(args) != len(dynamic):
            axes = tuple(axes[i] for i in dynamic)

        def one(*values):
            full = list(args)
            for i, value in zip(dynamic, values):
                full[i] = value
            return fun(*full)
        return vmap(one, axes, out_axes, axis_name=axis_name,
                    axis_size=axis_size)(*[args[i] for i in dynamic])

    return jit(mapped, static_argnums=static)

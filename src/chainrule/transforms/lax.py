"""``jax.lax``'s names that programs written for JAX reach for, as ``from chainrule import
lax``: the loops and branches, the dynamic slices (also along one axis), ``map`` and
``stop_gradient``. Each is chainrule's own (``cr.fori_loop``, ``cr.scan``...); this module
only gathers them under JAX's module name, so that such a program ports by its imports.

>>> from chainrule import lax
>>> lax.fori_loop(0, 3, lambda i, x: x + i, 0.0)
3.0
>>> lax.dynamic_slice_in_dim(np.arange(6.0), 2, 3).tolist()
[2.0, 3.0, 4.0]
"""

from collections.abc import Callable
from typing import Any

from ..primitive import shape_of
from ..rules import reshape, stop_gradient
from .control import (cond, dynamic_slice, dynamic_update_slice, fori_loop, scan, switch,
                      while_loop)

__all__ = ["fori_loop", "scan", "while_loop", "cond", "switch", "map", "dynamic_slice",
           "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_index_in_dim", "stop_gradient"]


def map(f: Callable[[Any], Any], xs: Any) -> Any:  # noqa: A001  (JAX's name)
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked:
    a scan without a carry.

    >>> cr.lax.map(lambda x: x ** 2, np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 4.0, 9.0]
    """
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int,
                         axis: int = 0) -> Any:
    """``slice_size`` entries of ``operand`` from ``start_index`` along ``axis`` (the
    start clamped so the slice fits, as dynamic_slice), every other axis whole.

    >>> cr.lax.dynamic_slice_in_dim(np.arange(6.0).reshape(2, 3), 1, 2, axis=1).tolist()
    [[1.0, 2.0], [4.0, 5.0]]
    """
    shape = shape_of(operand)
    axis = axis % len(shape)
    starts = [start_index if k == axis else 0 for k in range(len(shape))]
    sizes = [slice_size if k == axis else n for k, n in enumerate(shape)]
    return dynamic_slice(operand, starts, sizes)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any,
                                axis: int) -> Any:
    """``operand`` with ``update`` written from ``start_index`` along ``axis``.

    >>> cr.lax.dynamic_update_slice_in_dim(np.zeros(4), np.ones(2), 1, axis=0).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    rank = len(shape_of(operand))
    axis = axis % rank
    return dynamic_update_slice(operand, update,
                                [start_index if k == axis else 0 for k in range(rank)])


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0,
                         keepdims: bool = True) -> Any:
    """The slice at ``index`` along ``axis``, that axis kept (of size 1) or dropped.

    >>> cr.lax.dynamic_index_in_dim(np.arange(6.0).reshape(3, 2), 2, keepdims=False).tolist()
    [4.0, 5.0]
    """
    part = dynamic_slice_in_dim(operand, index, 1, axis)
    if keepdims:
        return part
    shape = shape_of(part)
    axis = axis % len(shape)
    return reshape(part, shape[:axis] + shape[axis + 1:])

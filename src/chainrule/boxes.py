"""Boxes: the values that carry more than a number through the operations, and the
plain values that never do.

A ``Box`` (a ``Tensor``, a ``Value``, a forward-mode tracer, a batch of ``cr.vmap``)
holds a number, an array or another box, and a level; an operation called with boxes
among its arguments hands the call to the one of highest level (``primitive.py``). Here
is what every engine asks of an argument, whatever its kind: the plain value inside
(``raw``), its shape (``shape_of``, ``ndim_of``), the boxes in a list (a list of Tensors
is their stack), and, for a transform starting, a level of its own (``new_level``).
"""

import itertools
from typing import Any

import numpy as np

__all__ = ["Box", "raw", "shape_of", "ndim_of", "new_level"]


class Box:
    """The base of values that carry more than a number through the operations:
    ``Value``, ``Tensor``, the forward-mode tracer.

    Each kind defines ``_contents()`` (the number, array or inner box it carries) and
    the class method ``_apply_primitive(prim, args, kwargs)`` (how it runs an
    operation). ``_level`` decides which kind handles an operation on several: the
    highest."""

    __slots__ = ()
    _level = 0
    _batched = False  # a batch of cr.vmap: raw() stops there (transforms/batching.py)


_levels = itertools.count(1)


def new_level():
    """A level for a transform starting now: one that no earlier call used, and higher
    than any of the transforms running around it (their calls started before)."""
    return next(_levels)


# Arguments that are never boxes: what rules pass around in an ordinary backward pass.
# One set lookup per argument keeps a primitive on raw arrays nearly free.
_PLAIN = frozenset({np.ndarray, float, int, bool, np.float64, np.float32, np.int64,
                    np.bool_, type(None), slice, str, np.dtype})


def raw(x: Any) -> Any:
    """The plain number or array inside any number of boxes (itself if not boxed).

    Masks (where x > 0, where a tie is) are computed on raw numbers: they are piecewise
    constant, so they take no part in differentiation. A batch of ``cr.vmap`` is as far
    as it goes: a mask made from it must stay batched, one per example."""
    while isinstance(x, Box) and not x._batched:
        x = x._contents()
    return x


def shape_of(x):
    """x.shape for arrays, boxes and numbers (an attribute: np.shape is slower), and for
    a list of boxes, the shape of their stack."""
    shape = getattr(x, "shape", None)
    if shape is not None:
        return tuple(shape)
    if type(x) in _SEQUENCES and x and _boxes_in(x):
        return (len(x),) + shape_of(x[0])
    return np.shape(x)


def ndim_of(x):
    """x.ndim for arrays, boxes and numbers (and a list of boxes, as their stack)."""
    ndim = getattr(x, "ndim", None)
    return len(shape_of(x)) if ndim is None else ndim


def _boxes_in(items):
    """The boxes in a (nested) list or tuple."""
    found = []
    for item in items:
        if type(item) in _PLAIN:  # (a shape's int, an index's slice: neither box nor list)
            continue
        if isinstance(item, Box):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            found.extend(_boxes_in(item))
    return found


_SEQUENCES = (list, tuple)

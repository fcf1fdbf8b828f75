"""What the rules of the table share: the decorator that makes a library operation, and
axis bookkeeping.

A rule may receive a *batch* of cotangents or tangents: extra leading axes in front of
the shape it would otherwise see (jacrev pushes every row of an identity through one
backward pass, jacfwd every column through one forward pass). So the rules count axes
from the end, and build shapes as ``lead(g, ans) + shape``.
"""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .. import arrays as xp
from ..primitive import Primitive, ndim_of, raw, renamed, shape_of
from ..arrays import as_array

__all__ = ["op", "lead", "tangent_lead", "axes_of", "from_end", "TORCH_NAMES",
           "torch_names", "float_dtype", "class_indices"]

# PyTorch's names of NumPy's axis arguments, accepted too where they mean the same
TORCH_NAMES = {"dim": "axis", "keepdim": "keepdims"}

# What an operation (or a loss of nn.functional) returns: the kind of its inputs (an
# ndarray or a NumPy number for arrays and numbers, a Tensor for Tensors, a Value for
# Values, a tracer inside a transform), or a tuple or list of those for the operations
# with several results. Any, because no one type says "the kind of the inputs".
Result = Any


def float_dtype(x):
    """The dtype of x if it is a float (or complex) dtype, else float64 (what a result
    computed from integers is made of)."""
    dtype = xp.result_type(raw(x))
    return dtype if dtype.kind in "fc" else xp.dtype(xp.float64)


def class_indices(labels, shape, op="cross_entropy", scores="logits"):
    """Class labels for ``scores`` of ``shape`` (N, C), as NumPy's index type: N
    integers, each in [0, C), or a ValueError naming ``op`` (in a cr.jit program, at
    every run). A label out of range would pick another entry without an error, so the
    class losses check their labels at every call; on an index array, the usual case,
    nothing is converted."""
    if type(labels) is not xp.ndarray:
        labels = as_array(labels)
    if len(shape) != 2 or labels.shape != shape[:1]:
        raise ValueError(f"{op}: {scores} of shape {shape} and labels of "
                         f"shape {labels.shape}; expected (N, C) and (N,)")
    if labels.dtype != xp.intp:
        if labels.dtype.kind not in "iu":
            xp.require(xp.all(labels == xp.round(labels)), _not_integers, op)
        labels = labels.astype(xp.intp)
    if labels.size:
        if type(labels) is xp.ndarray:
            # Seen as unsigned, a negative label is huge: one comparison checks both ends
            in_range = xp.maximum.reduce(labels.view(xp.uintp)) < shape[1]
        else:  # (a traced array, another library's: no view as another dtype)
            in_range = (xp.min(labels) >= 0) & (xp.max(labels) < shape[1])
        xp.require(in_range, _out_of_range, op, shape[1], labels)
    return labels


def _not_integers(op):
    return ValueError(f"{op}: labels must be integer class indices")


def _out_of_range(op, classes, labels):
    return ValueError(f"{op}: labels must lie in [0, {classes}), got values from "
                      f"{labels.min()} to {labels.max()}")


_R = TypeVar("_R")


def torch_names(function: Callable[..., _R]) -> Callable[..., _R]:
    """Decorator: a composed operation also takes PyTorch's dim= and keepdim=. (Typed
    as taking any arguments: its signature names NumPy's words, and a type checker
    cannot be told of the other spelling, which is checked when called.)"""
    @functools.wraps(function)
    def with_torch_names(*args, **kwargs):
        if kwargs:
            kwargs = renamed(kwargs, TORCH_NAMES, function.__name__)
        return function(*args, **kwargs)
    return with_torch_names


def op(name, **options):
    """Decorator: a forward function becomes a library operation of that name. Every
    rule of the library handles batches (leading axes), and the table's tests check it."""
    return lambda forward: Primitive(forward, name, batched=True, **options)


def lead(g, ans):
    """The leading batch axes of a gradient: those in front of the result's own axes."""
    return tuple(shape_of(g)[:ndim_of(g) - ndim_of(ans)])


def tangent_lead(t, x):
    """The leading batch axes of a tangent: those in front of its input's own axes."""
    return tuple(shape_of(t)[:ndim_of(t) - ndim_of(x)])


def axes_of(axis, ndim):
    """``axis`` (an int, a tuple or None for all) as a sorted tuple of positive axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not ndim:  # (np.sum of a 0-d array takes axis 0 or -1: there is no axis to reduce)
        return ()
    return tuple(sorted(a % ndim for a in axes))


def from_end(axis, ndim):
    """Axes counted from the end (-1 is the last), so that batch axes in front are ignored."""
    return tuple(a - ndim for a in axes_of(axis, ndim))

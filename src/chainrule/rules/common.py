"""What the rules of the table share: the decorator that makes a library operation, and
axis bookkeeping.

A rule may receive a *batch* of cotangents or tangents: extra leading axes in front of
the shape it would otherwise see (jacrev pushes every row of an identity through one
backward pass, jacfwd every column through one forward pass). So the rules count axes
from the end, and build shapes as ``lead(g, ans) + shape``.
"""

import functools
from typing import Any

import numpy as np

from ..primitive import Primitive, ndim_of, raw, renamed, shape_of

__all__ = ["op", "lead", "tangent_lead", "axes_of", "from_end", "TORCH_NAMES",
           "torch_names", "float_dtype"]

# PyTorch's names of NumPy's axis arguments, accepted too where they mean the same
TORCH_NAMES = {"dim": "axis", "keepdim": "keepdims"}

# What an operation (or a loss of nn.functional) returns: the kind of its inputs (an
# ndarray or a NumPy number for arrays and numbers, a Tensor for Tensors, a Value for
# Values, a tracer inside a transform), or a tuple or list of those for the operations
# with several results. Any, because no one type says "the kind of the inputs".
Result = Any


def float_dtype(x):
    """The dtype of x if it is a float dtype, else float64 (what a result computed from
    integers is made of)."""
    dtype = np.result_type(raw(x))
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def torch_names(function):
    """Decorator: a composed operation also takes PyTorch's dim= and keepdim=."""
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
    return tuple(sorted(a % ndim if ndim else a for a in axes))


def from_end(axis, ndim):
    """Axes counted from the end (-1 is the last), so that batch axes in front are ignored."""
    return tuple(a - ndim for a in axes_of(axis, ndim))

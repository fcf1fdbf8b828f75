"""``jax.lax``'s names that programs written for JAX reach for, as ``from chainrule import
lax``: the loops and branches, the dynamic slices (also along one axis), ``map``,
``stop_gradient``, ``custom_root`` and ``custom_linear_solve``. Each is chainrule's own
(``cr.fori_loop``, ``cr.scan``...); this module gathers them under JAX's module name,
so that such a program ports by its imports. It also holds ``Precision`` (accepted by
``precision=``, which changes nothing on a CPU) and
``conv_general_dilated`` with JAX's dimension numbers (``"NHWC", "HWIO", "NHWC"``...),
over chainrule's convolution (PyTorch's layout), with ``padtype_to_pads``.

>>> from chainrule import lax
>>> lax.fori_loop(0, 3, lambda i, x: x + i, 0.0)
3.0
>>> lax.dynamic_slice_in_dim(np.arange(6.0), 2, 3).tolist()
[2.0, 3.0, 4.0]
"""

import enum
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import arrays as xp
from ..primitive import raw, shape_of
from ..rules import concatenate, getitem, pad, reshape, stop_gradient, transpose
from ..rules.convolution import conv as _conv
from .control import (cond, dynamic_slice, dynamic_update_slice, fori_loop, scan, switch,
                      while_loop)
from .custom_root import custom_linear_solve, custom_root

__all__ = ["fori_loop", "scan", "while_loop", "cond", "switch", "map", "dynamic_slice",
           "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_index_in_dim", "stop_gradient", "Precision", "conv_general_dilated",
           "conv", "padtype_to_pads", "custom_root", "custom_linear_solve"]


class Precision(enum.Enum):
    """``jax.lax.Precision``, for ``precision=`` arguments (``np.dot``, ``np.einsum``...):
    accepted, and changes nothing, since a CPU computes float64 and float32 one way.
    JAX's strings name the same members.

    >>> cr.lax.Precision("highest")
    <Precision.HIGHEST: 2>
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": 0, "fastest": 0, "bfloat16": 0, "high": 1, "bfloat16_3x": 1,
                 "tensorfloat32": 1, "highest": 2, "float32": 2}
        if isinstance(value, str) and value.lower() in names:
            return cls(names[value.lower()])
        return None

    def __str__(self):
        return self.name


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: Any) -> list[tuple[int, int]]:
    """The (low, high) padding of each spatial axis for ``"VALID"`` (none) or ``"SAME"``
    (the output ``ceil(n / stride)`` long, the odd row after, as JAX's), or the pairs as
    given.

    >>> cr.lax.padtype_to_pads((5, 6), (3, 3), (2, 1), "SAME")
    [(1, 1), (1, 1)]
    """
    if isinstance(padding, str):
        kind = padding.upper()
        if kind == "VALID":
            return [(0, 0)] * len(in_shape)
        if kind not in ("SAME", "SAME_LOWER"):
            raise ValueError(f"padtype_to_pads: padding must be 'SAME', 'SAME_LOWER', "
                             f"'VALID' or (low, high) pairs, got {padding!r}")
        pads = []
        for n, k, s in zip(in_shape, window_shape, window_strides):
            total = max((-(-n // s) - 1) * s + k - n, 0)
            low = total // 2 if kind == "SAME" else total - total // 2
            pads.append((low, total - low))
        return pads
    pads = [tuple(int(v) for v in pair) for pair in padding]
    if len(pads) != len(in_shape) or any(len(p) != 2 for p in pads):
        raise ValueError(f"padtype_to_pads: expected one (low, high) pair per spatial axis "
                         f"of {tuple(in_shape)}, got {padding!r}")
    return pads


def _default_numbers(rank):
    spatial = "DHW"[3 - (rank - 2):] if rank <= 5 else None
    if spatial is None:
        raise ValueError(f"conv_general_dilated: expected 1 to 3 spatial axes, got an "
                         f"operand of {rank} dimensions")
    return ("NC" + spatial, "OI" + spatial, "NC" + spatial)


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """JAX's general convolution (a cross-correlation, as JAX's and PyTorch's), on
    chainrule's: the operands are transposed from ``dimension_numbers`` (three strings,
    such as ``("NHWC", "HWIO", "NHWC")``; None: ``("NCHW", "OIHW", "NCHW")``) to
    PyTorch's layout and back, ``padding`` (``"SAME"``, ``"VALID"`` or (low, high) pairs)
    padded with zeros first. ``lhs_dilation`` spreads the input's entries that many
    apart, zeros between them (a transposed convolution), before the padding.
    Differentiable in both operands, to any order. ``batch_group_count`` other than 1
    is refused.

    >>> x = np.arange(5.0).reshape(1, 5, 1)                      # (N, W, C)
    >>> w = np.array([1.0, 0.0, -1.0]).reshape(3, 1, 1)           # (W, I, O)
    >>> cr.lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO",
    ...                             "NWC")).ravel().tolist()
    [-1.0, -2.0, -2.0, -2.0, 3.0]
    """
    rank = len(shape_of(lhs))
    lhs_spec, rhs_spec, out_spec = dimension_numbers or _default_numbers(rank)
    d = rank - 2
    if len(lhs_spec) != rank or len(rhs_spec) != len(shape_of(rhs)) or len(out_spec) != rank:
        raise ValueError(f"conv_general_dilated: dimension_numbers "
                         f"{(lhs_spec, rhs_spec, out_spec)} do not fit operands of shapes "
                         f"{shape_of(lhs)} and {shape_of(rhs)}")
    if lhs_dilation is not None and (len(lhs_dilation) != d or any(
            isinstance(v, bool) or int(v) != v or v < 1 for v in lhs_dilation)):
        raise ValueError(f"conv_general_dilated: lhs_dilation {tuple(lhs_dilation)}: "
                         f"expected {d} positive ints, one per spatial axis")
    if lhs_dilation is not None and any(v != 1 for v in lhs_dilation) and \
            isinstance(padding, str):
        raise ValueError(f"conv_general_dilated: padding {padding!r} with lhs_dilation "
                         f"{tuple(lhs_dilation)}: a transposed convolution takes (low, "
                         f"high) pairs, as JAX's")
    if batch_group_count != 1:
        raise ValueError(f"conv_general_dilated: batch_group_count must be 1, got "
                         f"{batch_group_count}")
    # spatial axes pair up by letter; their order is the kernel's (JAX's rule)
    spatial = [c for c in rhs_spec if c not in "OI"]
    lhs_perm = [lhs_spec.index("N"), lhs_spec.index("C")] + [lhs_spec.index(c) for c in spatial]
    rhs_perm = [rhs_spec.index("O"), rhs_spec.index("I")] + [rhs_spec.index(c) for c in spatial]
    out_perm = [out_spec.index("N"), out_spec.index("C")] + [out_spec.index(c) for c in spatial]
    x = transpose(lhs, lhs_perm)
    if lhs_dilation is not None:
        x = _dilated(x, [int(v) for v in lhs_dilation])
    w = transpose(rhs, rhs_perm)
    strides = tuple(window_strides) if window_strides is not None else (1,) * d
    dilation = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * d
    kernel = [dl * (k - 1) + 1 for k, dl in zip(shape_of(w)[2:], dilation)]
    pads = padtype_to_pads(shape_of(x)[2:], kernel, strides, padding)
    if any(lo or hi for lo, hi in pads):
        if any(lo < 0 or hi < 0 for lo, hi in pads):
            raise ValueError(f"conv_general_dilated: negative padding {pads} is not "
                             f"supported")
        x = pad(x, [(0, 0), (0, 0)] + list(pads))
    y = _conv(x, w, stride=strides, dilation=dilation, groups=feature_group_count,
              name="conv_general_dilated")
    return transpose(y, tuple(int(i) for i in np.argsort(out_perm)))


def _dilated(x, dilation):
    """x (N, C, spatial...) with dilation[i] - 1 zeros between neighbours along spatial
    axis i: n entries become (n - 1) * dilation + 1. Each axis by zeros stacked behind
    every entry, flattened and cut after the last entry: operations every transform
    differentiates and batches."""
    for axis, step in enumerate(dilation, start=2):
        shape, n = tuple(shape_of(x)), shape_of(x)[axis]
        if step == 1 or n == 0:
            continue
        column = reshape(x, shape[:axis + 1] + (1,) + shape[axis + 1:])   # (..., n, 1, ...)
        gap = xp.zeros_like(raw(column))  # (numbers of no derivative, x's library)
        spread = concatenate([column] + [gap] * (step - 1), axis=axis + 1)
        x = reshape(spread, shape[:axis] + (n * step,) + shape[axis + 1:])
        x = getitem(x, index=(slice(None),) * axis + (slice(0, (n - 1) * step + 1),))
    return x


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jax.lax.conv``: ``conv_general_dilated`` in the layout (N, C, spatial...) and
    (O, I, spatial...)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding)


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

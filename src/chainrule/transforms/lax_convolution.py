"""``jax.lax``'s convolutions over chainrule's (PyTorch's layout): ``conv_general_dilated``
with JAX's dimension numbers (three strings such as ``("NHWC", "HWIO", "NHWC")``, or a
``ConvDimensionNumbers`` of axis permutations), ``conv``, ``conv_with_general_padding``,
``conv_transpose``, ``conv_general_dilated_patches``, and the helpers
``padtype_to_pads`` and ``conv_dimension_numbers``. The operands are transposed to
(N, C, spatial...) and back, spread and padded by ``lax.pad`` (negative padding crops),
so each is differentiable in both operands, to any order, under every transform.

>>> cr.lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
"""

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import rules as R
from ..primitive import raw, shape_of
from ..rules.convolution import conv as _conv
from .lax_structure import pad as _lax_pad

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_transpose", "conv_general_dilated_patches",
           "padtype_to_pads", "conv_general_permutations", "conv_shape_tuple",
           "conv_general_shape_tuple", "conv_transpose_shape_tuple"]


class ConvDimensionNumbers(NamedTuple):
    """Where each role sits in a convolution's operands and result, as axis numbers:
    ``lhs_spec`` (batch, feature, spatial...), ``rhs_spec`` (out feature, in feature,
    spatial...) and ``out_spec`` (batch, feature, spatial...), the spatial axes in the
    kernel's order (JAX's).

    >>> cr.lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)).lhs_spec
    (0, 1, 2)
    """
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def _permutations(numbers: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    lhs_spec, rhs_spec, out_spec = numbers
    for spec, pair in zip(numbers, ("NC", "OI", "NC")):
        if spec.count(pair[0]) != 1 or spec.count(pair[1]) != 1 or len(set(spec)) != len(spec):
            raise TypeError(f"conv_dimension_numbers: {spec!r} must hold {pair[0]!r} and "
                            f"{pair[1]!r} once each, and no letter twice")
    if not set(lhs_spec) - set("NC") == set(rhs_spec) - set("OI") == set(out_spec) - set("NC"):
        raise TypeError(f"conv_dimension_numbers: {tuple(numbers)} do not name the same "
                        f"spatial axes")
    spatial = [c for c in rhs_spec if c not in "OI"]  # the kernel's order (JAX's rule)
    return tuple(tuple(spec.index(c) for c in pair + "".join(spatial))
                 for spec, pair in zip(numbers, ("NC", "OI", "NC")))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None: (N, C, spatial...) everywhere; three strings; or a
    ``ConvDimensionNumbers``, returned as it is) as axis permutations.

    >>> cr.lax.conv_dimension_numbers((1, 3, 5), (8, 3, 3), None).out_spec
    (0, 1, 2)
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"conv_dimension_numbers: operands of {len(lhs_shape)} and "
                        f"{len(rhs_shape)} dimensions")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if len(dimension_numbers) != 3 or not all(isinstance(s, str) and len(s) == len(lhs_shape)
                                              for s in dimension_numbers):
        raise TypeError(f"conv_dimension_numbers: expected three strings of "
                        f"{len(lhs_shape)} letters, got {dimension_numbers!r}")
    return ConvDimensionNumbers(*_permutations(dimension_numbers))


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


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """JAX's general convolution (a cross-correlation, as JAX's and PyTorch's), on
    chainrule's: the operands are transposed from ``dimension_numbers`` (three strings,
    such as ``("NHWC", "HWIO", "NHWC")``, or a ``ConvDimensionNumbers``; None:
    ``("NCHW", "OIHW", "NCHW")``) to PyTorch's layout and back. ``lhs_dilation`` spreads
    the input's entries that many apart, zeros between them (a transposed convolution),
    then ``padding`` (``"SAME"``, ``"VALID"`` or (low, high) pairs, negative ones
    cropping) pads with zeros. Differentiable in both operands, to any order.
    ``batch_group_count`` other than 1 is refused.

    >>> x = np.arange(5.0).reshape(1, 5, 1)                      # (N, W, C)
    >>> w = np.array([1.0, 0.0, -1.0]).reshape(3, 1, 1)           # (W, I, O)
    >>> cr.lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO",
    ...                             "NWC")).ravel().tolist()
    [-1.0, -2.0, -2.0, -2.0, 3.0]
    """
    rank = len(shape_of(lhs))
    d = rank - 2
    if d < 1:
        raise ValueError(f"conv_general_dilated: expected 1 or more spatial axes, got an "
                         f"operand of {rank} dimensions")
    lhs_perm, rhs_perm, out_perm = conv_dimension_numbers(shape_of(lhs), shape_of(rhs),
                                                          dimension_numbers)
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
    x = R.transpose(lhs, tuple(lhs_perm))
    w = R.transpose(rhs, tuple(rhs_perm))
    base = [1] * d if lhs_dilation is None else [int(v) for v in lhs_dilation]
    spread = [(n - 1) * b + 1 if n else 0 for n, b in zip(shape_of(x)[2:], base)]
    strides = tuple(window_strides) if window_strides is not None else (1,) * d
    dilation = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * d
    kernel = [dl * (k - 1) + 1 for k, dl in zip(shape_of(w)[2:], dilation)]
    pads = padtype_to_pads(spread, kernel, strides, padding)
    config = [(0, 0, 0), (0, 0, 0)] + [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)]
    if any(c != (0, 0, 0) for c in config):
        x = _lax_pad(x, 0.0, config)
    if preferred_element_type is not None:
        x = R.astype(x, np.dtype(preferred_element_type))
        w = R.astype(w, np.dtype(preferred_element_type))
    y = _conv(x, w, stride=strides, dilation=dilation, groups=feature_group_count,
              name="conv_general_dilated")
    return R.transpose(y, tuple(int(i) for i in np.argsort(out_perm)))


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``conv_general_dilated`` in the layout (N, C, spatial...) and (O, I, spatial...).

    >>> cr.lax.conv(np.ones((1, 1, 4)), np.ones((1, 1, 2)), (1,), "VALID").tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """``conv_general_dilated`` in the layout (N, C, spatial...) and (O, I, spatial...),
    with dilations.

    >>> cr.lax.conv_with_general_padding(np.ones((1, 1, 4)), np.ones((1, 1, 2)), (1,),
    ...                                  [(1, 0)], None, (2,)).tolist()
    [[[1.0, 2.0, 2.0]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, preferred_element_type=preferred_element_type)


def _transpose_padding(k, s, padding):
    """(before, after) padding of one axis of a transposed convolution (JAX's rule)."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    else:
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    return before, total - before


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """The transposed convolution (the gradient of a strided convolution, as JAX's):
    the input spread ``strides`` apart and convolved. ``dimension_numbers`` default to
    channels last (``("NHWC", "HWIO", "NHWC")`` and their 1-d and 3-d kin);
    ``transpose_kernel`` flips the kernel's spatial axes and swaps its feature axes.

    >>> cr.lax.conv_transpose(np.ones((1, 2, 1)), np.ones((2, 1, 1)), (2,), "VALID").ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    rank = len(shape_of(lhs))
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if rank not in defaults:
            raise ValueError(f"conv_transpose: no default dimension numbers for "
                             f"{rank}-dimensional operands")
        dimension_numbers = defaults[rank]
    dn = conv_dimension_numbers(shape_of(lhs), shape_of(rhs), dimension_numbers)
    kernel = [shape_of(rhs)[a] for a in dn.rhs_spec[2:]]
    dilation = (1,) * (rank - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or padding in ("SAME", "VALID"):
        effective = [(k - 1) * r + 1 for k, r in zip(kernel, dilation)]
        each = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = [_transpose_padding(k, s, p) for k, s, p in zip(effective, strides, each)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = R.flip(rhs, axis=tuple(dn.rhs_spec[2:]))
        rhs = R.swapaxes(rhs, dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(lhs, rhs, (1,) * (rank - 2), pads, strides, dilation, dn,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding: Any,
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Any:
    """The patches a convolution with a kernel of ``filter_shape`` would see, as
    features: each input feature times each position of the window (feature-major),
    by a convolution with an identity kernel (JAX's construction).

    >>> cr.lax.conv_general_dilated_patches(np.arange(4.0).reshape(1, 1, 4), (2,), (1,),
    ...                                     "VALID").tolist()
    [[[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]]
    """
    filter_shape = tuple(int(n) for n in filter_shape)
    dn = conv_dimension_numbers(shape_of(lhs), (1, 1) + filter_shape, dimension_numbers)
    size = int(np.prod(filter_shape))
    channels = shape_of(lhs)[dn.lhs_spec[1]]
    eye = np.eye(size, dtype=np.result_type(raw(lhs)))
    rhs = np.broadcast_to(eye, (channels, size, size)).reshape(
        (channels * size, 1) + filter_shape)
    rhs = np.moveaxis(rhs, (0, 1), (dn.rhs_spec[0], dn.rhs_spec[1]))
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, feature_group_count=channels,
                                preferred_element_type=preferred_element_type)


def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The axis permutations (lhs, rhs, out) that three dimension strings name: batch
    and feature first, then the spatial axes in the kernel's order.

    >>> cr.lax.conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    return _permutations(dimension_numbers)


def _strided(n, k, s):
    return max((n - k) // s + 1, 0)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any,
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """The result's shape of a convolution of operands (N, C, spatial...) and (O, I,
    spatial...), with ``pads`` a padding name or (low, high) pairs.

    >>> cr.lax.conv_shape_tuple((2, 3, 9), (8, 3, 3), (2,), "SAME")
    (2, 8, 5)
    """
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"conv_shape_tuple: expected {len(lhs_shape) - 2} (low, high) "
                        f"pairs, got {len(pads)}")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"conv_shape_tuple: negative padding {pads} is larger than "
                         f"the spatial shape {tuple(lhs_shape[2:])}")
    space = tuple(_strided(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (int(lhs_shape[0]) // batch_group_count, int(rhs_shape[0])) + space


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """``conv_shape_tuple`` in the layout three dimension strings name.

    >>> cr.lax.conv_general_shape_tuple((2, 9, 3), (3, 3, 8), (2,), "SAME",
    ...                                 ("NWC", "WIO", "NWC"))
    (2, 5, 8)
    """
    lhs_perm, rhs_perm, out_perm = _permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[a] for a in lhs_perm], [rhs_shape[a] for a in rhs_perm],
                           window_strides, padding)
    return tuple(int(out[a]) for a in np.argsort(out_perm))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The result's shape of ``conv_transpose`` (a padding name or (low, high) pairs)
    in the layout three dimension strings name.

    >>> cr.lax.conv_transpose_shape_tuple((1, 4, 3), (3, 3, 8), (2,), "SAME",
    ...                                   ("NWC", "WIO", "NWC"))
    (1, 8, 8)
    """
    lhs_perm, rhs_perm, out_perm = _permutations(dimension_numbers)
    lhs = [lhs_shape[a] for a in lhs_perm]
    rhs = [rhs_shape[a] for a in rhs_perm]
    if isinstance(padding, str):
        padding = [_transpose_padding(k, s, padding) for k, s in zip(rhs[2:], window_strides)]
    space = [(n - 1) * s - k + 2 + sum(p)
             for n, k, s, p in zip(lhs[2:], rhs[2:], window_strides, padding)]
    out = [lhs[0], rhs[0]] + space
    return tuple(int(out[a]) for a in np.argsort(out_perm))

"""autograd.scipy.signal: ``chainrule.scipy.signal``, and ``convolve`` with autograd's
``axes`` and ``dot_axes``: a convolution along some axes of two arrays, a sum of
products along others, and an outer product along the rest (a convolutional layer in
one call), differentiable in both arrays."""

import itertools as _itertools
import math as _math

import numpy as _np

from ....api import numpy as _cnp
from ....primitive import raw as _raw
from ....scipy.signal import *  # noqa: F401,F403
from ....scipy.signal import __all__  # noqa: F401
from ....scipy.signal import convolve as _convolve

_MODES = ("full", "valid", "same")


def convolve(A, B, axes=None, dot_axes=((), ()), mode="full", method="auto"):
    """``scipy.signal.convolve(A, B, mode)``, or with ``axes=(axes_of_A, axes_of_B)``
    autograd's generalization: A and B are convolved along those pairs of axes,
    multiplied and summed along the pairs ``dot_axes``, and their remaining axes are
    kept; the result's axes are A's remaining ones, B's, then the convolved ones.

    >>> from chainrule.autograd.scipy.signal import convolve
    >>> images, filters = np.ones((2, 3, 5, 5)), np.ones((3, 4, 2, 2))
    >>> convolve(images, filters, axes=([2, 3], [2, 3]), dot_axes=([1], [0]),
    ...          mode="valid").shape               # (image, filter, row, column)
    (2, 4, 4, 4)
    """
    if mode not in _MODES:
        raise ValueError(f"convolve: mode {mode!r}; expected one of {_MODES}")
    if axes is None and not any(dot_axes):
        return _convolve(A, B, mode=mode, method=method)
    shape_a, shape_b = _np.shape(_raw(A)), _np.shape(_raw(B))
    if axes is None:
        axes = (list(range(len(shape_a))), list(range(len(shape_b))))
    conv_a, conv_b = [list(a) for a in axes]
    dot_a, dot_b = [list(d) for d in dot_axes]
    if len(conv_a) != len(conv_b) or len(dot_a) != len(dot_b):
        raise ValueError(f"convolve: axes {axes} and dot_axes {dot_axes} must pair an axis "
                         f"of A with one of B")
    for i, j in zip(conv_a + dot_a, conv_b + dot_b):
        if (i, j) in zip(dot_a, dot_b) and shape_a[i] != shape_b[j]:
            raise ValueError(f"convolve: dot axes {i} of A (length {shape_a[i]}) and {j} "
                             f"of B (length {shape_b[j]}) differ in length")
    sizes_a, sizes_b = [shape_a[i] for i in conv_a], [shape_b[j] for j in conv_b]
    if mode == "valid" and not (all(m <= n for m, n in zip(sizes_a, sizes_b))
                                or all(m >= n for m, n in zip(sizes_a, sizes_b))):
        raise ValueError(f"convolve: in 'valid' mode one array must be at least as large "
                         f"as the other along every convolved axis, got {sizes_a} and "
                         f"{sizes_b}")
    keep_a = [i for i in range(len(shape_a)) if i not in conv_a + dot_a]
    keep_b = [j for j in range(len(shape_b)) if j not in conv_b + dot_b]
    full = _full_convolution(A, B, conv_a, conv_b, dot_a, dot_b, keep_a, keep_b)
    crop = [slice(None)] * (len(keep_a) + len(keep_b))
    for m, n in zip(sizes_a, sizes_b):
        start = {"full": 0, "valid": min(m, n) - 1, "same": (n - 1) // 2}[mode]
        length = {"full": m + n - 1, "valid": abs(m - n) + 1, "same": m}[mode]
        crop.append(slice(start, start + length))
    return full[tuple(crop)]


def _full_convolution(A, B, conv_a, conv_b, dot_a, dot_b, keep_a, keep_b):
    """The 'full' convolution: one term per position of the convolved axes of the
    operand that has fewer (a filter's, beside an image's), each a tensor contraction
    of that slice with all of the other operand, shifted into place by padding. The
    convolution is symmetric in its operands (c[n] = sum_k a[n - k] b[k] = sum_k a[k]
    b[n - k]), so either may be the one sliced; slicing the small one makes a few large
    contractions instead of many small ones."""
    shape_a, shape_b = _np.shape(_raw(A)), _np.shape(_raw(B))
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    dot = [next(letters) for _ in dot_a]
    kept_a, kept_b = [next(letters) for _ in keep_a], [next(letters) for _ in keep_b]
    convolved = [next(letters) for _ in conv_b]
    out = "".join(kept_a + kept_b + convolved)

    def labels(shape, axes, names):  # an operand's letters, axis by axis
        found = [""] * len(shape)
        for axis, name in zip(axes, names):
            found[axis] = name
        return "".join(found)

    slice_a = _math.prod(shape_a[i] for i in conv_a) <= _math.prod(shape_b[j] for j in conv_b)
    if slice_a:  # A sliced: kept, dot, then convolved axes; B whole
        sliced, conv, whole = _cnp.transpose(A, keep_a + dot_a + conv_a), conv_a, B
        spec = (f"{''.join(kept_a + dot)},"
                f"{labels(shape_b, dot_b + keep_b + conv_b, dot + kept_b + convolved)}->{out}")
    else:  # B sliced, A whole
        sliced, conv, whole = _cnp.transpose(B, keep_b + dot_b + conv_b), conv_b, A
        spec = (f"{labels(shape_a, dot_a + keep_a + conv_a, dot + kept_a + convolved)},"
                f"{''.join(kept_b + dot)}->{out}")
    lengths = [(shape_a if slice_a else shape_b)[axis] for axis in conv]
    total = None
    for position in _itertools.product(*[range(n) for n in lengths]):
        part = sliced[(Ellipsis,) + position]
        term = _cnp.einsum(spec, part, whole) if slice_a else _cnp.einsum(spec, whole, part)
        widths = [(0, 0)] * (len(keep_a) + len(keep_b)) + [
            (p, n - 1 - p) for p, n in zip(position, lengths)]
        term = _cnp.pad(term, widths)
        total = term if total is None else total + term
    return total

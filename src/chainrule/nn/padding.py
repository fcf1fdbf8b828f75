"""torch's ``F.pad`` (constant, reflect, replicate and circular) and the padding modules
over it (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad, 1d to 3d).
A padded axis is a gather of the input's entries (``take`` of computed positions), or
for constants a concatenation: derivatives of any order, cr.vmap and cr.jit follow.

>>> import chainrule.nn.functional as F
>>> x = cr.tensor([[[1.0, 2.0, 3.0]]])
>>> F.pad(x, (2, 1), mode="reflect").data.tolist()
[[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
"""

from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from .. import rules as ops
from ..primitive import shape_of
from ..rules.common import Result
from .module import Module

__all__ = ["pad", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _positions(n, before, after, mode):
    """Which input entries (0..n-1) make the padded axis, as torch's kernels pick them:
    reflect and replicate index the whole axis (a negative width crops), circular
    wraps around what is left once the negative widths have cropped."""
    if mode == "circular":
        kept = np.arange(max(-before, 0), n - max(-after, 0))
        return kept[np.arange(-max(before, 0), len(kept) + max(after, 0)) % len(kept)]
    j = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    j = np.abs(j)  # reflect: about the first entry, then about the last
    return np.where(j > n - 1, 2 * (n - 1) - j, j)


def pad(input: ArrayLike, pad: tuple[int, ...], mode: str = "constant",
        value: float | None = None) -> Result:
    """torch's ``F.pad``: ``pad`` lists (before, after) widths from the last axis
    backwards, (left, right, top, bottom, front, back); a negative width crops.

    ``mode="constant"`` fills with ``value`` (0 by default) and pads any of the axes;
    ``"reflect"`` mirrors about the edge entry (a width below the axis's size),
    ``"replicate"`` repeats the edge entry, ``"circular"`` wraps around (a width up to
    the size): these pad the last 1, 2 or 3 axes of an input with one or two more
    (N, C, ...), as torch's.

    >>> x = cr.tensor([[[1.0, 2.0, 3.0]]])
    >>> pad(x, (1, 1), value=-1.0).data.tolist()
    [[[-1.0, 1.0, 2.0, 3.0, -1.0]]]
    >>> pad(x, (2, 0), mode="replicate").data.tolist(), pad(x, (0, 2), mode="circular").data.tolist()
    ([[[1.0, 1.0, 1.0, 2.0, 3.0]]], [[[1.0, 2.0, 3.0, 1.0, 2.0]]])
    """
    shape = shape_of(input)
    widths = tuple(pad)
    if not all(isinstance(w, Integral) for w in widths):
        raise ValueError(f"pad: widths must be ints, got {pad!r}")
    if len(widths) % 2:
        raise ValueError(f"pad: {len(widths)} widths, expected an even number (before "
                         f"and after for each padded axis)")
    if len(widths) > 2 * len(shape):
        raise ValueError(f"pad: {len(widths)} widths for an input of shape {shape}; "
                         f"expected at most two per axis, {2 * len(shape)}")
    if mode not in _MODES:
        raise ValueError(f"pad: mode {mode!r} is not one of {', '.join(map(repr, _MODES))}")
    axes = len(widths) // 2
    if mode != "constant":
        if value is not None:
            raise ValueError(f"pad: mode {mode!r} takes no value, got value={value!r}")
        if axes not in (1, 2, 3) or len(shape) not in (axes + 1, axes + 2):
            raise ValueError(f"pad: mode {mode!r} pads the last 1, 2 or 3 axes of an "
                             f"input with one or two axes more (N, C, ...); {axes} pairs "
                             f"of widths for an input of shape {shape}")
    for k in range(axes):
        axis = len(shape) - 1 - k
        n, before, after = shape[axis], int(widths[2 * k]), int(widths[2 * k + 1])
        if n + before + after < 0 or (n + min(before, 0) + min(after, 0) < 0):
            raise ValueError(f"pad: widths ({before}, {after}) crop more than the "
                             f"{n} entries of axis {axis} of an input of shape {shape}")
        limit = {"reflect": n - 1, "circular": n}.get(mode)
        if limit is not None and max(before, after) > limit:
            raise ValueError(f"pad: mode {mode!r} with widths ({before}, {after}) at axis "
                             f"{axis} of an input of shape {shape}; expected widths "
                             f"{'below' if mode == 'reflect' else 'at most'} the axis's "
                             f"size {n}")
        if mode == "constant":
            kept = np.arange(max(-before, 0), n - max(-after, 0))
            if len(kept) != n:
                input = ops.take(input, kept, axis)
            widths_here = [(0, 0)] * len(shape)
            widths_here[axis] = (max(before, 0), max(after, 0))
            input = ops.pad(input, widths_here, constant_values=0.0 if value is None
                            else value)
        elif before or after:
            input = ops.take(input, _positions(n, before, after, mode), axis)
    return input


def _widths(padding, d, name):
    widths = (padding,) * (2 * d) if isinstance(padding, Integral) else tuple(padding)
    if len(widths) != 2 * d or not all(isinstance(w, Integral) for w in widths):
        raise ValueError(f"{name}: padding must be an int or {2 * d} ints, got {padding!r}")
    return tuple(int(w) for w in widths)


class _Pad(Module):
    d, mode = 1, "constant"

    def __init__(self, padding: int | tuple[int, ...]) -> None:
        self.padding = _widths(padding, self.d, type(self).__name__)

    def forward(self, x: ArrayLike) -> Result:
        """x padded by ``self.padding``."""
        return pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        """The widths, as torch shows them."""
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding: int | tuple[int, ...], value: float) -> None:
        super().__init__(padding)
        if not isinstance(value, Real):
            raise ValueError(f"{type(self).__name__}: value must be a number, got {value!r}")
        self.value = value

    def forward(self, x: ArrayLike) -> Result:
        """x padded by ``self.padding`` with ``self.value``."""
        return pad(x, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """The widths and the value, as torch shows them."""
        return f"padding={self.padding}, value={self.value}"


class _ZeroPad(_ConstantPad):
    def __init__(self, padding: int | tuple[int, ...]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The widths, as torch shows them."""
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad):
    """Pads the last axis with zeros (torch's ``nn.ZeroPad1d``): ``padding`` an int or
    (left, right); input (N, C, W) or (C, W).

    >>> cr.nn.ZeroPad1d((1, 2))(cr.ones(1, 2)).data.tolist()
    [[0.0, 1.0, 1.0, 0.0, 0.0]]
    """

    d, mode = 1, "constant"


class ZeroPad2d(_ZeroPad):
    """Pads the last two axes with zeros (torch's ``nn.ZeroPad2d``): ``padding`` an int
    or (left, right, top, bottom); input (N, C, H, W) or (C, H, W).

    >>> cr.nn.ZeroPad2d(1)
    ZeroPad2d((1, 1, 1, 1))
    """

    d, mode = 2, "constant"


class ZeroPad3d(_ZeroPad):
    """Pads the last three axes with zeros (torch's ``nn.ZeroPad3d``): ``padding`` an
    int or (left, right, top, bottom, front, back); input (N, C, D, H, W) or (C, D,
    H, W).

    >>> cr.nn.ZeroPad3d(1)(cr.ones(2, 1, 1, 1)).shape
    (2, 3, 3, 3)
    """

    d, mode = 3, "constant"


class ConstantPad1d(_ConstantPad):
    """Pads the last axis with ``value`` (torch's ``nn.ConstantPad1d``): ``padding`` an
    int or (left, right); input (N, C, W) or (C, W).

    >>> cr.nn.ConstantPad1d(1, 3.5)(cr.zeros(1, 1)).data.tolist()
    [[3.5, 0.0, 3.5]]
    """

    d, mode = 1, "constant"

    def __init__(self, padding: int | tuple[int, ...], value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_ConstantPad):
    """Pads the last two axes with ``value`` (torch's ``nn.ConstantPad2d``): ``padding``
    an int or (left, right, top, bottom); input (N, C, H, W) or (C, H, W).

    >>> cr.nn.ConstantPad2d((1, 0, 0, 1), 2.0)
    ConstantPad2d(padding=(1, 0, 0, 1), value=2.0)
    """

    d, mode = 2, "constant"

    def __init__(self, padding: int | tuple[int, ...], value: float) -> None:
        super().__init__(padding, value)


class ConstantPad3d(_ConstantPad):
    """Pads the last three axes with ``value`` (torch's ``nn.ConstantPad3d``):
    ``padding`` an int or (left, right, top, bottom, front, back); input (N, C, D,
    H, W) or (C, D, H, W).

    >>> cr.nn.ConstantPad3d(1, 0.5)(cr.ones(1, 1, 1, 1)).shape
    (1, 3, 3, 3)
    """

    d, mode = 3, "constant"

    def __init__(self, padding: int | tuple[int, ...], value: float) -> None:
        super().__init__(padding, value)


class ReflectionPad1d(_Pad):
    """Pads the last axis with its reflection about the edge entries (torch's
    ``nn.ReflectionPad1d``): ``padding`` an int or (left, right); input (N, C, W) or (C,
    W).

    >>> cr.nn.ReflectionPad1d(2)(cr.tensor([[1.0, 2.0, 3.0]])).data.tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    d, mode = 1, "reflect"


class ReflectionPad2d(_Pad):
    """Pads the last two axes with their reflection about the edge entries (torch's
    ``nn.ReflectionPad2d``): ``padding`` an int or (left, right, top, bottom); input (N,
    C, H, W) or (C, H, W).

    >>> cr.nn.ReflectionPad2d((1, 1, 0, 0))(cr.tensor([[[1.0, 2.0]]])).data.tolist()
    [[[2.0, 1.0, 2.0, 1.0]]]
    """

    d, mode = 2, "reflect"


class ReflectionPad3d(_Pad):
    """Pads the last three axes with their reflection about the edge entries (torch's
    ``nn.ReflectionPad3d``): ``padding`` an int or (left, right, top, bottom, front,
    back); input (N, C, D, H, W) or (C, D, H, W).

    >>> cr.nn.ReflectionPad3d(1)(cr.ones(1, 2, 2, 2)).shape
    (1, 4, 4, 4)
    """

    d, mode = 3, "reflect"


class ReplicationPad1d(_Pad):
    """Pads the last axis by repeating its edge entries (torch's
    ``nn.ReplicationPad1d``): ``padding`` an int or (left, right); input (N, C, W) or
    (C, W).

    >>> cr.nn.ReplicationPad1d((2, 1))(cr.tensor([[1.0, 2.0]])).data.tolist()
    [[1.0, 1.0, 1.0, 2.0, 2.0]]
    """

    d, mode = 1, "replicate"


class ReplicationPad2d(_Pad):
    """Pads the last two axes by repeating their edge entries (torch's
    ``nn.ReplicationPad2d``): ``padding`` an int or (left, right, top, bottom); input
    (N, C, H, W) or (C, H, W).

    >>> cr.nn.ReplicationPad2d(1)(cr.ones(1, 2, 2)).shape
    (1, 4, 4)
    """

    d, mode = 2, "replicate"


class ReplicationPad3d(_Pad):
    """Pads the last three axes by repeating their edge entries (torch's
    ``nn.ReplicationPad3d``): ``padding`` an int or (left, right, top, bottom, front,
    back); input (N, C, D, H, W) or (C, D, H, W).

    >>> cr.nn.ReplicationPad3d(1)
    ReplicationPad3d((1, 1, 1, 1, 1, 1))
    """

    d, mode = 3, "replicate"


class CircularPad1d(_Pad):
    """Pads the last axis by wrapping around (torch's ``nn.CircularPad1d``): ``padding``
    an int or (left, right); input (N, C, W) or (C, W).

    >>> cr.nn.CircularPad1d((1, 2))(cr.tensor([[1.0, 2.0, 3.0]])).data.tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0, 2.0]]
    """

    d, mode = 1, "circular"


class CircularPad2d(_Pad):
    """Pads the last two axes by wrapping around (torch's ``nn.CircularPad2d``):
    ``padding`` an int or (left, right, top, bottom); input (N, C, H, W) or (C, H, W).

    >>> cr.nn.CircularPad2d(1)(cr.ones(1, 2, 2)).shape
    (1, 4, 4)
    """

    d, mode = 2, "circular"


class CircularPad3d(_Pad):
    """Pads the last three axes by wrapping around (torch's ``nn.CircularPad3d``):
    ``padding`` an int or (left, right, top, bottom, front, back); input (N, C, D,
    H, W) or (C, D, H, W).

    >>> cr.nn.CircularPad3d(1)(cr.ones(1, 1, 1, 1)).shape
    (1, 3, 3, 3)
    """

    d, mode = 3, "circular"

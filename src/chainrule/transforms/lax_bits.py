"""``jax.lax``'s comparisons and integer operations: ``eq``, ``ne``, ``lt``, ``le``,
``gt``, ``ge``, the bitwise ``and``/``or``/``xor``/``not``, the shifts (JAX's: a shift
by the width or more gives 0, or the sign for the arithmetic right shift),
``population_count`` and ``clz`` (on the two's complement, as XLA's), and
``bitcast_convert_type``. None has a derivative (their results are bools or integers,
or a float read from another type's bits).

>>> cr.lax.shift_right_logical(np.array([-1], np.int8), 4).tolist()
[15]
"""

from typing import Any

import numpy as np

from .. import arrays as xp
from ..api import numpy as cnp
from ..primitive import Primitive, raw
from ..rules import predicates as P

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "shift_left", "shift_right_arithmetic", "shift_right_logical",
           "population_count", "clz", "bitcast_convert_type"]


def eq(x: Any, y: Any) -> Any:
    """x == y, elementwise.

    >>> cr.lax.eq(np.array([1.0, 2.0]), 2.0).tolist()
    [False, True]
    """
    return P.equal(x, y)


def ne(x: Any, y: Any) -> Any:
    """x != y, elementwise.

    >>> cr.lax.ne(np.array([1.0, 2.0]), 2.0).tolist()
    [True, False]
    """
    return P.not_equal(x, y)


def lt(x: Any, y: Any) -> Any:
    """x < y, elementwise.

    >>> cr.lax.lt(np.array([1.0, 2.0]), 2.0).tolist()
    [True, False]
    """
    return P.less(x, y)


def le(x: Any, y: Any) -> Any:
    """x <= y, elementwise.

    >>> cr.lax.le(np.array([1.0, 3.0]), 2.0).tolist()
    [True, False]
    """
    return P.less_equal(x, y)


def gt(x: Any, y: Any) -> Any:
    """x > y, elementwise.

    >>> cr.lax.gt(np.array([1.0, 3.0]), 2.0).tolist()
    [False, True]
    """
    return P.greater(x, y)


def ge(x: Any, y: Any) -> Any:
    """x >= y, elementwise.

    >>> cr.lax.ge(np.array([1.0, 2.0]), 2.0).tolist()
    [False, True]
    """
    return P.greater_equal(x, y)


def bitwise_and(x: Any, y: Any) -> Any:
    """x & y on integers or bools, elementwise.

    >>> cr.lax.bitwise_and(np.array([12]), 10).tolist()
    [8]
    """
    return cnp.bitwise_and(x, y)


def bitwise_or(x: Any, y: Any) -> Any:
    """x | y on integers or bools, elementwise.

    >>> cr.lax.bitwise_or(np.array([12]), 10).tolist()
    [14]
    """
    return cnp.bitwise_or(x, y)


def bitwise_xor(x: Any, y: Any) -> Any:
    """x ^ y on integers or bools, elementwise.

    >>> cr.lax.bitwise_xor(np.array([12]), 10).tolist()
    [6]
    """
    return cnp.bitwise_xor(x, y)


def bitwise_not(x: Any) -> Any:
    """~x on integers (every bit flipped) or bools (not), elementwise.

    >>> cr.lax.bitwise_not(np.array([0, 5])).tolist(), cr.lax.bitwise_not(np.array([True])).tolist()
    ([-1, -6], [False])
    """
    return cnp.invert(x)


def _bits(x):
    return np.result_type(raw(x)).itemsize * 8


def _in_range(shift, bits):
    """The shift where 0 <= shift < bits (others are taken care of apart), else 0."""
    ok = P.logical_and(P.greater_equal(shift, 0), P.less(shift, bits))
    return ok, cnp.where(ok, shift, 0)


def shift_left(x: Any, y: Any) -> Any:
    """x shifted left by y bits, elementwise; 0 where y is negative or the width or more.

    >>> cr.lax.shift_left(np.array([1, 1], np.int8), np.array([3, 8], np.int8)).tolist()
    [8, 0]
    """
    dtype = np.result_type(raw(x))
    ok, y = _in_range(y, _bits(x))
    return cnp.where(ok, cnp.left_shift(x, cnp.astype(y, dtype)), np.zeros((), dtype))


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """x shifted right by y bits, the sign bit copied in, elementwise; by the width or
    more: 0, or -1 for negative x.

    >>> cr.lax.shift_right_arithmetic(np.array([-16, 16], np.int8), 2).tolist()
    [-4, 4]
    """
    dtype, bits = np.result_type(raw(x)), _bits(x)
    ok, y = _in_range(y, bits)
    y = cnp.where(ok, y, bits - 1)
    y = cnp.astype(y, dtype)
    shifted = cnp.right_shift(x, y)
    if dtype.kind == "u":  # the top bit read as a sign, as XLA's: copied into the high bits
        ones = np.asarray(np.iinfo(dtype).max, dtype)
        top = P.equal(cnp.right_shift(x, np.asarray(bits - 1, dtype)), 1)
        fill = cnp.where(top, cnp.invert(cnp.right_shift(ones, y)), np.zeros((), dtype))
        shifted = cnp.bitwise_or(shifted, cnp.astype(fill, dtype))
    return shifted


def shift_right_logical(x: Any, y: Any) -> Any:
    """x shifted right by y bits, zeros shifted in (the bits read as unsigned),
    elementwise; 0 where y is negative or the width or more.

    >>> cr.lax.shift_right_logical(np.array([-16], np.int8), 2).tolist()
    [60]
    """
    dtype, bits = np.result_type(raw(x)), _bits(x)
    ok, y = _in_range(y, bits)
    shifted = cnp.right_shift(x, cnp.astype(y, dtype))
    if dtype.kind == "i":  # the sign bits the arithmetic shift copied in, cleared
        keep = cnp.where(P.equal(y, 0), -1,
                         cnp.left_shift(np.ones((), dtype), cnp.astype(
                             cnp.where(P.equal(y, 0), 1, bits - y), dtype)) - 1)
        shifted = cnp.bitwise_and(shifted, cnp.astype(keep, dtype))
    return cnp.where(ok, shifted, np.zeros((), dtype))


def population_count(x: Any) -> Any:
    """The number of 1 bits of each integer (its two's complement), in x's dtype.

    >>> cr.lax.population_count(np.array([7, -1], np.int8)).tolist()
    [3, 8]
    """
    dtype, bits = np.result_type(raw(x)), _bits(x)
    count = cnp.astype(cnp.bitwise_count(x), dtype)
    if dtype.kind == "i":  # NumPy counts |x|'s bits; x < 0 has bits - count(~x)
        flipped = cnp.astype(cnp.bitwise_count(cnp.invert(x)), dtype)
        count = cnp.where(P.less(x, 0), np.asarray(bits, dtype) - flipped, count)
    return count


def clz(x: Any) -> Any:
    """The number of leading 0 bits of each integer (its two's complement), in x's
    dtype: the width for 0, 0 for a negative x.

    >>> cr.lax.clz(np.array([1, 0, -3, 16], np.int8)).tolist()
    [7, 8, 0, 3]
    """
    dtype, bits = np.result_type(raw(x)), _bits(x)
    count = np.zeros((), dtype)
    y, step = x, bits // 2
    while step:  # a binary search for the highest 1 bit
        top_clear = P.equal(cnp.right_shift(y, np.asarray(bits - step, dtype)), 0)
        count = cnp.where(top_clear, count + np.asarray(step, dtype), count)
        y = cnp.where(top_clear, cnp.left_shift(y, np.asarray(step, dtype)), y)
        step //= 2
    return cnp.astype(cnp.where(P.equal(x, 0), np.asarray(bits, dtype), count), dtype)


def _reinterpreted(x, new_dtype):
    x, new = np.array(x, order="C"), np.dtype(new_dtype)  # (a 0-d array stays 0-d)
    old = x.dtype
    if new.itemsize == old.itemsize:
        return x.view(new)
    if new.itemsize < old.itemsize:  # each entry becomes a last axis of narrower ones
        return x.view(new).reshape(x.shape + (old.itemsize // new.itemsize,))
    ratio = new.itemsize // old.itemsize
    if not x.shape or x.shape[-1] != ratio:
        raise ValueError(f"lax.bitcast_convert_type: {old} to {new} reads {ratio} entries "
                         f"as one, so the last axis must have {ratio}; got shape {x.shape}")
    return x.view(new).reshape(x.shape[:-1])


# (no rules: a derivative through reinterpreted bits raises, as in JAX)
_bitcast = Primitive(lambda x, new_dtype: xp.call(_reinterpreted, x, new_dtype),
                     "bitcast_convert_type")


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """operand's bits read as ``new_dtype``: to a narrower type each entry becomes a
    new last axis of its pieces (in the machine's byte order), to a wider one the last
    axis is read as one entry.

    >>> cr.lax.bitcast_convert_type(np.float32(1.0), np.int32).tolist()
    1065353216
    """
    return _bitcast(operand, new_dtype=np.dtype(new_dtype))

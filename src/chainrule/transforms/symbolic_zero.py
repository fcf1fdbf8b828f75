"""JAX's symbolic zeros for custom derivative rules (``custom_derivatives.py``):
``SymbolicZero``, the tangent or cotangent a rule is given for a value no transform
differentiates; ``CustomVJPPrimal``, the argument ``fwd`` is given in its place; and
``zero_from_primal``. They reach the user's rules only where ``symbolic_zeros=True``
asked for them (``custom_jvp.defjvp``, ``custom_vjp.defvjp``): ``custom_primitive.py``
makes them from which of a call's values the transform at hand perturbs.
"""

import dataclasses
from typing import Any

import numpy as np

from ..primitive import raw, shape_of

__all__ = ["SymbolicZero", "CustomVJPPrimal", "zero_from_primal"]

# JAX's dtype of the tangent of an integer or boolean value: no bytes, a type of its own
FLOAT0 = np.dtype([("float0", np.void, 0)])


def tangent_dtype(value: Any) -> np.dtype:
    """The dtype of a tangent of ``value``: its own where it is inexact, float0 where it
    is an integer or a boolean (as JAX's)."""
    x = raw(value)
    dtype = getattr(x, "dtype", None)
    dtype = np.result_type(x) if dtype is None else np.dtype(dtype)
    return dtype if dtype.kind in "fc" else FLOAT0


class SymbolicZero:
    """A tangent (or cotangent) known to be zero without an array, as JAX's
    ``jax.custom_derivatives.SymbolicZero``: what a rule defined with
    ``symbolic_zeros=True`` is given for a value the transform does not differentiate.
    It has the zero's ``shape``, ``dtype``, ``ndim`` and ``size``, and no arithmetic: test
    for it with ``isinstance`` and leave its term out. A rule may return one for a zero
    tangent or gradient.

    >>> z = SymbolicZero.from_primal_value(np.ones((2, 3)))
    >>> z, z.shape, z.dtype
    (SymbolicZero, (2, 3), dtype('float64'))
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype: Any) -> None:
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    @property
    def ndim(self) -> int:
        """The number of axes of the zero."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of entries of the zero."""
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return "SymbolicZero"

    @staticmethod
    def from_primal_value(value: Any) -> "SymbolicZero":
        """The symbolic zero tangent of ``value`` (its shape; its dtype, float0 for an
        integer).

        >>> SymbolicZero.from_primal_value(3.0).shape
        ()
        """
        return SymbolicZero(shape_of(value), tangent_dtype(value))

    def instantiate(self) -> np.ndarray:
        """The zero as an array.

        >>> SymbolicZero((2,), np.float64).instantiate()
        array([0., 0.])
        """
        return np.zeros(self.shape, self.dtype)


@dataclasses.dataclass
class CustomVJPPrimal:
    """What a ``custom_vjp``'s ``fwd`` is given for each leaf of a differentiable
    argument when ``defvjp(fwd, bwd, symbolic_zeros=True)``, as JAX's: ``value``, the
    argument, and ``perturbed``, whether the transform differentiates it (where it is
    False, that argument's gradient is not asked for).

    >>> CustomVJPPrimal(2.0, True)
    CustomVJPPrimal(value=2.0, perturbed=True)
    """

    value: Any
    perturbed: bool


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """A zero tangent for every leaf of the pytree ``val``: arrays of zeros, or
    ``SymbolicZero``s where ``symbolic_zeros`` (JAX's ``zero_from_primal``).

    >>> zero_from_primal((1.0, np.ones(2)))
    (array(0.), array([0., 0.]))
    >>> zero_from_primal(np.ones(2), symbolic_zeros=True)
    SymbolicZero
    """
    from .pytrees import tree_map

    def zero(x):
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else z.instantiate()
    return tree_map(zero, val)


def instantiated(t: Any, like: Any = None) -> Any:
    """``t`` where it is an array; an array of zeros where it is a SymbolicZero (of the
    shape of ``like`` where given, a primal that may carry batch axes)."""
    if not isinstance(t, SymbolicZero):
        return t
    if like is None:
        return t.instantiate()
    dtype = tangent_dtype(like)
    return np.zeros(shape_of(like), dtype if dtype.kind in "fc" else np.float64)

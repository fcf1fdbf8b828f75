"""PyTorch's tests and logical and bitwise operations as Tensor methods:
``x.signbit()``, ``x.isposinf()``, ``x.isnan()``, ``x.logical_and(y)``,
``x.bitwise_xor(y)``... Their results are booleans or integers, which carry no
derivative (as in PyTorch): a Tensor gives a Tensor outside the graph, a traced value
its kind's plain result.
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..primitive import raw

__all__ = ["TorchLogic"]


def _plain(x, array):
    """A result with no derivative (an integer or boolean one), as ``x``'s kind gives it."""
    return type(x)._plain(array) if hasattr(type(x), "_plain") else array


class TorchLogic:
    """PyTorch's tests and logical and bitwise methods, for Tensors and traced values."""

    __slots__ = ()

    def signbit(self) -> Any:
        """Whether each entry's sign bit is set (True for -0.0), as torch.signbit.

        >>> cr.tensor([-1.0, -0.0, 2.0]).signbit().tolist()
        [True, True, False]
        """
        return _plain(self, np.signbit(raw(self)))

    def isposinf(self) -> Any:
        """Whether each entry is +inf.

        >>> cr.tensor([np.inf, -np.inf, 1.0]).isposinf().tolist()
        [True, False, False]
        """
        return _plain(self, np.isposinf(raw(self)))

    def isneginf(self) -> Any:
        """Whether each entry is -inf.

        >>> cr.tensor([np.inf, -np.inf, 1.0]).isneginf().tolist()
        [False, True, False]
        """
        return _plain(self, np.isneginf(raw(self)))

    def isreal(self) -> Any:
        """Whether each entry is real (its imaginary part 0; True for a real dtype).

        >>> cr.tensor([1.0 + 0.0j, 1.0j]).isreal().tolist()
        [True, False]
        """
        return _plain(self, np.isreal(raw(self)))

    def isnan(self) -> Any:
        """Whether each entry is NaN.

        >>> cr.tensor([np.nan, 1.0]).isnan().tolist()
        [True, False]
        """
        return _plain(self, np.isnan(raw(self)))

    def isinf(self) -> Any:
        """Whether each entry is +inf or -inf.

        >>> cr.tensor([np.inf, 1.0]).isinf().tolist()
        [True, False]
        """
        return _plain(self, np.isinf(raw(self)))

    def isfinite(self) -> Any:
        """Whether each entry is neither infinite nor NaN.

        >>> cr.tensor([np.inf, 1.0]).isfinite().tolist()
        [False, True]
        """
        return _plain(self, np.isfinite(raw(self)))

    def logical_not(self) -> Any:
        """Whether each entry is zero (False), as torch.logical_not.

        >>> cr.tensor([0.0, 2.0]).logical_not().tolist()
        [True, False]
        """
        return _plain(self, np.logical_not(raw(self)))

    def logical_and(self, other: ArrayLike) -> Any:
        """Whether both are nonzero, entry by entry.

        >>> cr.tensor([0.0, 2.0]).logical_and(cr.tensor([1.0, 1.0])).tolist()
        [False, True]
        """
        return _plain(self, np.logical_and(raw(self), raw(other)))

    def logical_or(self, other: ArrayLike) -> Any:
        """Whether either is nonzero, entry by entry.

        >>> cr.tensor([0.0, 2.0]).logical_or(cr.tensor([0.0, 0.0])).tolist()
        [False, True]
        """
        return _plain(self, np.logical_or(raw(self), raw(other)))

    def logical_xor(self, other: ArrayLike) -> Any:
        """Whether exactly one is nonzero, entry by entry.

        >>> cr.tensor([0.0, 2.0]).logical_xor(cr.tensor([1.0, 1.0])).tolist()
        [True, False]
        """
        return _plain(self, np.logical_xor(raw(self), raw(other)))

    def bitwise_not(self) -> Any:
        """The bits of each integer flipped (``not`` for booleans), as torch's.

        >>> cr.tensor([0, 5]).bitwise_not().tolist()
        [-1, -6]
        """
        return _plain(self, np.invert(_integral("bitwise_not", self)))

    def bitwise_and(self, other: ArrayLike) -> Any:
        """The bits set in both, entry by entry (integer or boolean tensors).

        >>> cr.tensor([12, 10]).bitwise_and(6).tolist()
        [4, 2]
        """
        return _plain(self, np.bitwise_and(_integral("bitwise_and", self), raw(other)))

    def bitwise_or(self, other: ArrayLike) -> Any:
        """The bits set in either, entry by entry (integer or boolean tensors).

        >>> cr.tensor([12, 10]).bitwise_or(1).tolist()
        [13, 11]
        """
        return _plain(self, np.bitwise_or(_integral("bitwise_or", self), raw(other)))

    def bitwise_xor(self, other: ArrayLike) -> Any:
        """The bits set in exactly one, entry by entry (integer or boolean tensors).

        >>> cr.tensor([12, 10]).bitwise_xor(6).tolist()
        [10, 12]
        """
        return _plain(self, np.bitwise_xor(_integral("bitwise_xor", self), raw(other)))

    def bitwise_left_shift(self, other: ArrayLike) -> Any:
        """Each integer's bits shifted left by ``other``.

        >>> cr.tensor([1, 3]).bitwise_left_shift(2).tolist()
        [4, 12]
        """
        return _plain(self, np.left_shift(_integral("bitwise_left_shift", self), raw(other)))

    def bitwise_right_shift(self, other: ArrayLike) -> Any:
        """Each integer's bits shifted right by ``other`` (arithmetic shift).

        >>> cr.tensor([8, -8]).bitwise_right_shift(2).tolist()
        [2, -2]
        """
        return _plain(self, np.right_shift(_integral("bitwise_right_shift", self), raw(other)))


def _integral(name, x):
    data = raw(x)
    if np.result_type(data).kind not in "biu":
        raise TypeError(f"{name}: expected an integer or boolean tensor, got dtype "
                        f"{np.result_type(data)}")
    return data

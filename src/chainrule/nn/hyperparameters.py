"""Checks of the optimizers' and the schedules' hyperparameters: each raises a one-line
error naming the owner, the hyperparameter, what it should be and what it got.

>>> from chainrule.nn.hyperparameters import require_nonnegative
>>> require_nonnegative("SGD", "momentum", -0.9)
Traceback (most recent call last):
ValueError: SGD: momentum must be >= 0, got -0.9
"""

from numbers import Real
from typing import Any

import numpy as np

__all__ = ["require_number", "require_nonnegative", "require_flag", "require_positive_int",
           "require_fraction", "require_betas"]


def require_number(owner: str, name: str, value: Any) -> None:
    """A real number (True and False are refused: a switch where a number belongs)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{owner}: {name} must be a real number, got "
                        f"{type(value).__name__} {value!r}")


def require_nonnegative(owner: str, name: str, value: Any) -> None:
    """A real number >= 0 (NaN is refused)."""
    require_number(owner, name, value)
    if not value >= 0:  # also refuses NaN
        raise ValueError(f"{owner}: {name} must be >= 0, got {value!r}")


def require_flag(owner: str, name: str, value: Any) -> None:
    """True or False."""
    # 0 and 1 are refused too: a number where a switch belongs is more often a
    # hyperparameter passed to the wrong name than a switch
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be True or False, got "
                        f"{type(value).__name__} {value!r}")


def require_positive_int(owner: str, name: str, value: Any) -> None:
    """An integer >= 1 (a float such as 2.5, or True, is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{owner}: {name} must be a positive integer, got {value!r}")


def require_fraction(owner: str, name: str, value: Any) -> None:
    """A real number in [0, 1]."""
    require_number(owner, name, value)
    if not 0 <= value <= 1:
        raise ValueError(f"{owner}: {name} must be in [0, 1], got {value!r}")


def require_betas(owner: str, group: dict[str, Any]) -> None:
    """``group["betas"]``, the decays of Adam's family, a pair of real numbers each in
    [0, 1); kept as a tuple."""
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"{owner}: betas must be a pair (beta1, beta2), got {betas!r}")
    for i, beta in enumerate(betas):
        require_number(owner, f"betas[{i}]", beta)
        if not 0 <= beta < 1:
            raise ValueError(f"{owner}: betas[{i}] must be in [0, 1), got {beta!r}")
    group["betas"] = tuple(betas)

"""ReduceLROnPlateau: the schedule driven by a metric rather than by the step count
(``lr_scheduler.py`` gathers it). As PyTorch's, it is an LRScheduler by class (so
``isinstance(s, LRScheduler)`` holds for every schedule) but takes none of its steps:
``step(metrics)`` reads the metric and cuts the rate when it stops improving.

>>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
>>> sched = cr.optim.ReduceLROnPlateau(opt, patience=1, factor=0.5)
>>> for loss in [3.0, 2.0, 2.0, 2.0, 2.0]:
...     sched.step(loss)
>>> sched.get_last_lr()
[0.5]
"""

import math
from typing import Any

import numpy as np

from ..hyperparameters import require_nonnegative, require_number
from .optimizer import Optimizer
from .scheduler import LRScheduler, per_group, require_optimizer

__all__ = ["ReduceLROnPlateau"]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` once the metric has not improved for
    more than ``patience`` calls of ``step(metric)``, then wait ``cooldown`` calls
    before counting again; never below ``min_lr`` (one number, or one per group), and
    not at all when the cut would be smaller than ``eps``.

    Improving means, in ``mode="min"`` (a loss), falling below the best so far by more
    than ``threshold``: relatively (``best * (1 - threshold)``, ``threshold_mode="rel"``)
    or absolutely (``best - threshold``, ``"abs"``); in ``mode="max"`` (an accuracy),
    rising above it.

        sched = ReduceLROnPlateau(opt, factor=0.5, patience=5)
        for epoch in range(100):
            train(...)
            sched.step(validation_loss)

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.ReduceLROnPlateau(opt, mode="max", patience=0, factor=0.1)
    >>> for accuracy in [0.5, 0.6, 0.6]:
    ...     sched.step(accuracy)
    >>> round(sched.get_last_lr()[0], 12)
    0.1
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0,
                 eps: float = 1e-8) -> None:
        name = "ReduceLROnPlateau"
        require_number(name, "factor", factor)
        if not 0 <= factor < 1:
            raise ValueError(f"{name}: factor must be in [0, 1) (it cuts the rate), "
                             f"got {factor!r}")
        self.factor = factor
        self.optimizer = require_optimizer(name, optimizer)
        self.min_lrs = per_group(name, "min_lr", min_lr, optimizer)
        for value in self.min_lrs:
            require_nonnegative(name, "min_lr", value)
        # A single min_lr also covers a group added later; a list cannot guess one.
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        require_count(name, "patience", patience)
        require_count(name, "cooldown", cooldown)
        require_nonnegative(name, "eps", eps)
        self.patience, self.cooldown, self.eps = int(patience), int(cooldown), eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        name = "ReduceLROnPlateau"
        if mode not in ("min", "max"):
            raise ValueError(f"{name}: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"{name}: threshold_mode must be 'rel' or 'abs', "
                             f"got {threshold_mode!r}")
        require_number(name, "threshold", threshold)
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """Whether a cut was made less than ``cooldown`` steps ago."""
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        """Whether the metric ``a`` improves on ``best`` by more than the threshold."""
        if self.mode == "min":
            bound = best * (1.0 - self.threshold) if self.threshold_mode == "rel" \
                else best - self.threshold
            return a < bound
        bound = best * (self.threshold + 1.0) if self.threshold_mode == "rel" \
            else best + self.threshold
        return a > bound

    def step(self, metrics: Any) -> None:  # type: ignore[override]
        """Read this step's metric (a number, or a 0-d array or tensor) and cut the
        learning rates if it has stopped improving."""
        current = float(metrics)
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0       # a bad step in the cooldown does not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: the optimizer has {len(groups)} "
                                   f"param groups, min_lr was given for "
                                   f"{len(self.min_lrs)}: set min_lrs to one per group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what state_dict() returned (its mode and threshold checked again)."""
        super().load_state_dict(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


def require_count(owner: str, name: str, value: Any) -> None:
    """An integer >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{owner}: {name} must be an integer >= 0, got {value!r}")

"""The base of the learning-rate schedules (``lr_scheduler.py`` gathers them), with
PyTorch's chainable form: a step scales the rate the group has, so a rate changed by
hand, or by another schedule on the same optimizer, is carried on.

>>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
>>> sched = cr.optim.ExponentialLR(opt, gamma=0.5)
>>> opt.param_groups[0]["lr"] = 4.0          # changed by hand: the schedule goes on from it
>>> sched.step(); sched.get_last_lr()
[2.0]
"""

import copy
from typing import Any

from ..hyperparameters import require_number
from .optimizer import Optimizer

__all__ = ["LRScheduler"]


class LRScheduler:
    """The base of the schedules: ``lr_at(base_lr, k)`` is the learning rate after ``k``
    calls of ``step()`` of this schedule alone, from each group's learning rate at
    construction; ``next_lr(lr, base_lr, k)`` the rate a step sets, from the rate ``lr``
    the group has (by default ``lr_at``'s, outright).

    Constructing a schedule takes step 0 at once (as PyTorch does). A new schedule
    defines ``lr_at``, and ``next_lr`` where it scales the rate it finds.

    >>> class Halving(cr.optim.LRScheduler):
    ...     def lr_at(self, base_lr, k):
    ...         return base_lr / 2 ** k
    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = Halving(opt)
    >>> sched.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = require_optimizer(type(self).__name__, optimizer)
        for group in optimizer.param_groups:
            # The first schedule records the starting lr; later ones reuse it, so a
            # schedule made after another does not start from an already-decayed lr.
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = -1
        self.step()

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """The learning rate step ``k`` sets, from ``lr``, the group's rate before it:
        by default ``lr_at(base_lr, k)`` (the rate set outright)."""
        return self.lr_at(base_lr, k)

    def lr_at(self, base_lr: float, k: int) -> float:
        """The learning rate after ``k`` steps; each schedule defines its own."""
        raise TypeError(f"{type(self).__name__} defines no schedule: use StepLR, "
                        f"CosineAnnealingLR, LinearLR, LinearWarmup or LambdaLR, or "
                        f"subclass LRScheduler and define lr_at(self, base_lr, k)")

    def step(self) -> None:
        """Advance the schedule by one and set the groups' learning rates."""
        self.last_epoch += 1
        self._set(self._rates())

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group, as last set: a list, one per group."""
        return list(self._last_lr)

    def _rates(self) -> list[float]:
        """The rates this step sets (the chainable form); a schedule that moves more
        than ``lr`` (the cyclic ones move momentum too) does so here."""
        return [self.next_lr(group["lr"], base, self.last_epoch)
                for group, base in zip(self.optimizer.param_groups, self.base_lrs)]

    def _closed_form_rates(self) -> list[float]:
        """The rates at ``last_epoch`` from the base rates alone."""
        return [self.lr_at(base, self.last_epoch) for base in self.base_lrs]

    def _jump(self, epoch: int) -> None:
        """Go to step ``epoch`` and set its rates from the closed form: what SequentialLR
        does to the schedule it hands over to (PyTorch's ``_update_lr(epoch)``)."""
        self.last_epoch = epoch
        self._set(self._closed_form_rates())

    def _set(self, rates: list[float]) -> None:
        for group, lr in zip(self.optimizer.param_groups, rates, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The schedule's position and settings, to save with a checkpoint: as PyTorch's,
        every attribute but the optimizer and functions (a lambda does not pickle, and
        code is not state: it comes back with the schedule's constructor)."""
        return {key: copy.copy(value) for key, value in vars(self).items()
                if key != "optimizer" and not callable(value)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what state_dict() returned. As PyTorch's, the optimizer's rates are
        left as they are: they come back with the optimizer's own ``load_state_dict``
        (its groups hold ``lr``), and the next step scales them."""
        vars(self).update({key: copy.copy(value) for key, value in state_dict.items()})
        if not state_dict.get("_last_lr") and hasattr(self, "base_lrs"):
            self._last_lr = self._closed_form_rates()


def require_optimizer(owner: str, optimizer: Any) -> Optimizer:
    """The optimizer a schedule drives, refused in one line if it is something else."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{owner}: expected an Optimizer, got {type(optimizer).__name__}")
    return optimizer


def per_group(owner: str, name: str, value: Any, optimizer: Optimizer) -> list[Any]:
    """A setting given once for all groups or as a list of one per group (PyTorch's
    max_lr, base_lr, min_lr, momenta): a list, one per group."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{owner}: {name} has {len(value)} values but the optimizer "
                             f"has {n} param groups: give one value or one per group")
        values = list(value)
    else:
        values = [value] * n
    for v in values:
        require_number(owner, name, v)
    return values

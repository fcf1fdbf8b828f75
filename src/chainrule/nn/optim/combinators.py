"""Schedules made of schedules (``lr_scheduler.py`` gathers them): SequentialLR hands
the optimizer from one to the next at given steps, ChainedScheduler steps all of them
at once (their factors multiply). Each keeps its schedules' states in its own
``state_dict``, as PyTorch's.

>>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
>>> warm = cr.optim.LinearLR(opt, start_factor=0.5, total_iters=2)
>>> decay = cr.optim.ExponentialLR(opt, gamma=0.5)
>>> sched = cr.optim.ChainedScheduler([warm, decay])
>>> lrs = [sched.get_last_lr()[0]]
>>> for _ in range(3):
...     sched.step(); lrs.append(sched.get_last_lr()[0])
>>> lrs
[0.5, 0.375, 0.25, 0.125]
"""

import bisect
from collections.abc import Sequence
from typing import Any

from .optimizer import Optimizer
from .plateau import ReduceLROnPlateau, require_count
from .scheduler import LRScheduler, require_optimizer

__all__ = ["SequentialLR", "ChainedScheduler"]


def require_schedulers(owner: str, schedulers: Sequence[Any], optimizer: Any) -> None:
    """Schedules, at least one, all on ``optimizer``, none of them ReduceLROnPlateau
    (whose step needs a metric)."""
    if len(schedulers) < 1:
        raise ValueError(f"{owner}: schedulers is empty: give at least one schedule")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner}: schedulers[{i}] is {type(scheduler).__name__}, "
                            f"not a schedule (it has no optimizer)")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{owner}: schedulers[{i}] is ReduceLROnPlateau, whose step "
                             f"needs a metric: step it on its own")
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{owner}: schedulers[{i}] ({type(scheduler).__name__}) "
                             f"drives another optimizer than {type(optimizer).__name__} "
                             f"given: all must drive the same one")


class Combined(LRScheduler):
    """What the two have in common: their schedules' states go in their own."""

    _schedulers: list[Any]

    def state_dict(self) -> dict[str, Any]:
        """Its own position, and each schedule's state_dict under ``"_schedulers"``."""
        state = {key: value for key, value in super().state_dict().items()
                 if key != "_schedulers"}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what state_dict() returned, each schedule's part into that schedule
        (the dict given is left as it was)."""
        own = {key: value for key, value in state_dict.items() if key != "_schedulers"}
        vars(self).update(own)
        for scheduler, state in zip(self._schedulers, state_dict["_schedulers"],
                                    strict=True):
            scheduler.load_state_dict(state)


class SequentialLR(Combined):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]`` from its
    start until ``milestones[1]``, and so on: a warm-up, then a decay. At a milestone
    the next schedule starts at step 0 of its closed form, from the base rates.

        warm = LinearLR(opt, start_factor=0.1, total_iters=5)
        decay = CosineAnnealingLR(opt, T_max=95)
        sched = SequentialLR(opt, [warm, decay], milestones=[5])

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> first = cr.optim.ConstantLR(opt, factor=0.1, total_iters=10)
    >>> then = cr.optim.ExponentialLR(opt, gamma=0.5)
    >>> sched = cr.optim.SequentialLR(opt, [first, then], milestones=[2])
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int]) -> None:
        name = "SequentialLR"
        require_optimizer(name, optimizer)
        require_schedulers(name, schedulers, optimizer)
        milestones = list(milestones)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"{name}: milestones has {len(milestones)} steps for "
                             f"{len(schedulers)} schedulers: give one fewer milestone "
                             f"than schedulers")
        for m in milestones:
            require_count(name, "each milestone", m)
        if milestones != sorted(milestones):
            raise ValueError(f"{name}: milestones must be in increasing order, "
                             f"got {milestones!r}")
        self._schedulers = list(schedulers)
        self._milestones = [int(m) for m in milestones]
        self.last_epoch = 0
        self.optimizer = optimizer
        # Each schedule took its step 0 when it was made: take those back, from the
        # starting rates, and let only the first schedule take its step 0 again.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo_first_steps(self)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first.step()
        self._last_lr = first.get_last_lr()

    def _undo_first_steps(self, scheduler: Any) -> None:
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo_first_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Advance by one: the schedule whose turn it is steps, or starts at its
        milestone."""
        self.last_epoch += 1
        i = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._jump(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(Combined):
    """Step every schedule in ``schedulers`` at each ``step()``, in order: each scales
    the rate the one before it set, so their factors multiply. ``optimizer`` defaults
    to the first schedule's.

        sched = ChainedScheduler([LinearLR(opt, 0.1, total_iters=5),
                                  ExponentialLR(opt, gamma=0.9)])

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.ChainedScheduler([cr.optim.ConstantLR(opt, 0.5, total_iters=1),
    ...                                    cr.optim.ExponentialLR(opt, gamma=0.5)])
    >>> sched.get_last_lr(), (sched.step(), sched.get_last_lr())[1]
    ([0.5], [0.5])
    """

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        name = "ChainedScheduler"
        if len(schedulers) >= 1 and optimizer is None:
            optimizer = getattr(schedulers[0], "optimizer", None)
        require_schedulers(name, schedulers, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = require_optimizer(name, optimizer)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def step(self) -> None:  # type: ignore[override]
        """Step each schedule, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

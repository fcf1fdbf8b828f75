"""The schedules with a closed form, ``lr = base_lr * f(k)`` (``lr_scheduler.py`` gathers
them): each steps in PyTorch's chainable form (``next_lr`` scales the rate the group
has) and gives the closed form as ``lr_at(base_lr, k)``.

>>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
>>> sched = cr.optim.PolynomialLR(opt, total_iters=4, power=2.0)
>>> [sched.lr_at(1.0, k) for k in range(6)]
[1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
"""

import bisect
import math
import types
from collections import Counter
from collections.abc import Iterable
from typing import Any, Callable

from ..hyperparameters import require_fraction, require_nonnegative, require_positive_int
from .optimizer import Optimizer
from .scheduler import LRScheduler, require_optimizer

__all__ = ["StepLR", "MultiStepLR", "ConstantLR", "ExponentialLR", "PolynomialLR",
           "CosineAnnealingLR", "LinearLR", "LinearWarmup", "LambdaLR", "MultiplicativeLR"]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` steps:
    ``lr = base_lr * gamma ** (k // step_size)``.

        sched = StepLR(opt, step_size=10, gamma=0.5)   # 10 steps at lr, 10 at lr/2, ...

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.StepLR(opt, step_size=2, gamma=0.5)
    >>> [sched.lr_at(1.0, k) for k in range(5)]     # the lr after k calls of step()
    [1.0, 1.0, 0.5, 0.5, 0.25]
    >>> sched.step(); sched.step(); opt.param_groups[0]["lr"]
    0.5
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        require_positive_int("StepLR", "step_size", step_size)
        require_nonnegative("StepLR", "gamma", gamma)
        self.step_size, self.gamma = int(step_size), gamma
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * gamma ** (k // step_size)."""
        return base_lr * self.gamma ** (k // self.step_size)

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """lr * gamma at every step_size-th step, else lr."""
        return lr * self.gamma if k and k % self.step_size == 0 else lr


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each of the ``milestones`` (step
    counts; one repeated multiplies as many times): ``lr = base_lr * gamma ** (number of
    milestones <= k)``.

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    >>> [sched.lr_at(1.0, k) for k in range(6)]
    [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int],
                 gamma: float = 0.1) -> None:
        milestones = list(milestones)
        for m in milestones:
            require_positive_int("MultiStepLR", "each milestone", m)
        require_nonnegative("MultiStepLR", "gamma", gamma)
        self.milestones, self.gamma = Counter(int(m) for m in milestones), gamma
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * gamma ** (the number of milestones <= k)."""
        return base_lr * self.gamma ** bisect.bisect_right(
            sorted(self.milestones.elements()), k)

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """lr * gamma for each milestone at k, else lr."""
        return lr * self.gamma ** self.milestones[k] if k in self.milestones else lr

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what state_dict() returned; the milestones come back a Counter of
        step counts also where a checkpoint file kept them as a plain mapping (cr.save's
        header writes its keys as text)."""
        super().load_state_dict(state_dict)
        self.milestones = Counter({int(k): int(n) for k, n in self.milestones.items()})


class ConstantLR(LRScheduler):
    """Scale the learning rate by ``factor`` for the first ``total_iters`` steps, then
    restore it: ``lr = base_lr * factor`` for ``k < total_iters``, ``base_lr`` after.

        sched = ConstantLR(opt, factor=0.1, total_iters=5)   # lr/10 for 5 steps, then lr

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> [sched.lr_at(1.0, k) for k in range(4)]
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3,
                 total_iters: int = 5) -> None:
        require_fraction("ConstantLR", "factor", factor)
        require_positive_int("ConstantLR", "total_iters", total_iters)
        self.factor, self.total_iters = factor, int(total_iters)
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * factor before total_iters, base_lr from there on."""
        return base_lr * (self.factor + (k >= self.total_iters) * (1 - self.factor))

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """lr * factor at step 0, lr / factor at step total_iters, else lr. A factor of 0
        (where PyTorch divides by zero at total_iters) sets the closed form outright."""
        if self.factor == 0:
            return self.lr_at(base_lr, k)
        if k == 0:
            return lr * self.factor
        # times 1/factor rather than over factor: PyTorch's rounding, to the last bit
        return lr * (1.0 / self.factor) if k == self.total_iters else lr


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at every step: ``lr = base_lr * gamma **
    k``.

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.ExponentialLR(opt, gamma=0.5)
    >>> [sched.lr_at(1.0, k) for k in range(4)]
    [1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float) -> None:
        require_nonnegative("ExponentialLR", "gamma", gamma)
        self.gamma = gamma
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * gamma ** k."""
        return base_lr * self.gamma ** k

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """lr * gamma, after step 0."""
        return lr * self.gamma if k else lr


class PolynomialLR(LRScheduler):
    """Decay the learning rate to 0 over ``total_iters`` steps along a polynomial:
    ``lr = base_lr * (1 - min(k, total_iters) / total_iters) ** power``.

        sched = PolynomialLR(opt, total_iters=100, power=0.9)   # 0 from step 100 on

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.PolynomialLR(opt, total_iters=4)
    >>> [sched.lr_at(1.0, k) for k in range(6)]
    [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5,
                 power: float = 1.0) -> None:
        require_positive_int("PolynomialLR", "total_iters", total_iters)
        require_nonnegative("PolynomialLR", "power", power)
        self.total_iters, self.power = int(total_iters), power
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * (1 - min(k, total_iters) / total_iters) ** power."""
        return base_lr * (1.0 - min(self.total_iters, k) / self.total_iters) ** self.power

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """lr times the ratio of this step's polynomial to the last one's, until
        total_iters; lr at step 0 and after."""
        if k == 0 or k > self.total_iters:
            return lr
        T = self.total_iters
        return lr * ((1.0 - k / T) / (1.0 - (k - 1) / T)) ** self.power


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from the base learning rate down to ``eta_min`` over ``T_max``
    steps: ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * k / T_max)) / 2``.

    Past ``T_max`` it rises again (the cosine goes on), as in PyTorch.

        sched = CosineAnnealingLR(opt, T_max=100)     # lr/2 after 50 steps, 0 after 100

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.CosineAnnealingLR(opt, T_max=4)
    >>> [round(sched.lr_at(1.0, k), 4) for k in range(5)]
    [1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None:
        require_positive_int("CosineAnnealingLR", "T_max", T_max)
        require_nonnegative("CosineAnnealingLR", "eta_min", eta_min)
        self.T_max, self.eta_min = int(T_max), eta_min
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """eta_min + (base_lr - eta_min) * (1 + cos(pi * k / T_max)) / 2."""
        cosine = math.cos(math.pi * k / self.T_max)
        return self.eta_min + (base_lr - self.eta_min) * (1 + cosine) / 2

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """PyTorch's recursive form: lr's distance to eta_min scaled by the ratio of two
        consecutive (1 + cos) terms; at the bottom of each period (where that ratio
        would divide by 0) the step of the cosine's rise is added instead."""
        if k == 0:
            return lr
        T, low = self.T_max, self.eta_min
        if (k - 1 - T) % (2 * T) == 0:
            return lr + (base_lr - low) * (1 - math.cos(math.pi / T)) / 2
        return (1 + math.cos(math.pi * k / T)) / (1 + math.cos(math.pi * (k - 1) / T)) \
            * (lr - low) + low


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` steps, then staying there (PyTorch's LinearLR).

        sched = LinearLR(opt, start_factor=0.5, total_iters=4)   # lr * .5 .625 .75 .875 1

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.LinearLR(opt, start_factor=0.5, total_iters=4)
    >>> [sched.lr_at(1.0, k) for k in range(6)]
    [0.5, 0.625, 0.75, 0.875, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5) -> None:
        name = type(self).__name__
        require_fraction(name, "start_factor", start_factor)
        require_fraction(name, "end_factor", end_factor)
        require_positive_int(name, "total_iters", total_iters)
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = int(total_iters)
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr times a factor going linearly from start_factor to end_factor."""
        done = min(k, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)

    def next_lr(self, lr: float, base_lr: float, k: int) -> float:
        """lr * start_factor at step 0; then lr times the ratio of this step's factor
        to the last one's, until total_iters; then lr. From start_factor 0 (which
        PyTorch refuses) no ratio leaves 0: the closed form, outright."""
        start, end, total = self.start_factor, self.end_factor, self.total_iters
        if start == 0:
            return self.lr_at(base_lr, k)
        if k == 0:
            return lr * start
        if k > total:
            return lr
        return lr * (1.0 + (end - start) / (total * start + (k - 1) * (end - start)))


class LinearWarmup(LinearLR):
    """Warm up: the learning rate rises linearly from ``start_factor * lr`` to ``lr``
    over ``warmup_steps`` steps, then stays at ``lr``.

    ``start_factor=0`` starts at 0. The same as
    ``LinearLR(optimizer, start_factor, 1.0, warmup_steps)``.

        sched = LinearWarmup(opt, warmup_steps=3, start_factor=0.25)  # lr * .25 .5 .75 1 1

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.LinearWarmup(opt, warmup_steps=3, start_factor=0.25)
    >>> [sched.lr_at(1.0, k) for k in range(5)]
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int,
                 start_factor: float = 1.0 / 3) -> None:
        require_positive_int("LinearWarmup", "warmup_steps", warmup_steps)
        super().__init__(optimizer, start_factor=start_factor, end_factor=1.0,
                         total_iters=warmup_steps)


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(k)``, for any schedule of the step count k.

    For instance a warm-up then a cosine::

        warm, total = 100, 1000
        LambdaLR(opt, lambda k: min(1, (k + 1) / warm)
                 * (1 + math.cos(math.pi * min(k, total) / total)) / 2)

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.LambdaLR(opt, lambda k: 0.5 ** k)
    >>> [sched.lr_at(1.0, k) for k in range(4)]
    [1.0, 0.5, 0.25, 0.125]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float]) -> None:
        if not callable(lr_lambda):
            raise TypeError(f"LambdaLR: lr_lambda must be a function of the step count, "
                            f"got {type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """base_lr * lr_lambda(k)."""
        return base_lr * self.lr_lambda(k)

    def state_dict(self) -> dict[str, Any]:
        """As LRScheduler's, with PyTorch's ``lr_lambdas``, one per group: None for a
        function, the attributes of a callable object (its state)."""
        fn = self.lr_lambda
        saved = None if isinstance(fn, types.FunctionType) else dict(vars(fn))
        return {**super().state_dict(), "lr_lambdas": [saved] * len(self.base_lrs)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As LRScheduler's; a callable object's saved attributes are put back on the
        lr_lambda this schedule was made with."""
        state = dict(state_dict)
        saved = state.pop("lr_lambdas", None) or [None]
        super().load_state_dict(state)
        if saved[0] is not None:
            vars(self.lr_lambda).update(saved[0])


class MultiplicativeLR(LRScheduler):
    """Multiply each group's learning rate by ``lr_lambda(k)`` at step ``k`` (from 1):
    ``lr = base_lr * lr_lambda(1) * ... * lr_lambda(k)``. ``lr_lambda`` is one function
    for every group, or a list of one per group.

        sched = MultiplicativeLR(opt, lambda k: 0.95)   # 5% less every step

    As PyTorch's, a step scales the rate the group has (chainable); started by
    SequentialLR at its milestone, it scales the rate it finds by ``lr_lambda(0)``.

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.MultiplicativeLR(opt, lambda k: 0.5 if k % 2 else 1.0)
    >>> [sched.lr_at(1.0, k) for k in range(5)]
    [1.0, 0.5, 0.5, 0.25, 0.25]
    >>> sched.step(); opt.param_groups[0]["lr"]
    0.5
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]]) -> None:
        n = len(require_optimizer("MultiplicativeLR", optimizer).param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"MultiplicativeLR: lr_lambda has {len(lr_lambda)} "
                                 f"functions but the optimizer has {n} param groups: give "
                                 f"one function or one per group")
            functions = list(lr_lambda)
        else:
            functions = [lr_lambda] * n
        for fn in functions:
            if not callable(fn):
                raise TypeError(f"MultiplicativeLR: lr_lambda must be a function of the "
                                f"step count, got {type(fn).__name__} {fn!r}")
        self.lr_lambdas = functions
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int, group: int = 0) -> float:
        """base_lr * lr_lambda(1) * ... * lr_lambda(k), with group ``group``'s function."""
        fn, lr = self.lr_lambdas[group], base_lr
        for j in range(1, k + 1):
            lr = lr * fn(j)
        return lr

    def _rates(self) -> list[float]:
        k = self.last_epoch
        return [group["lr"] * fn(k) if k else group["lr"]
                for group, fn in zip(self.optimizer.param_groups, self.lr_lambdas)]

    def _closed_form_rates(self) -> list[float]:
        return [self.lr_at(base, self.last_epoch, i) for i, base in enumerate(self.base_lrs)]

    def _jump(self, epoch: int) -> None:
        # PyTorch's has no closed form: at a hand-over it scales the rate the group has
        # by lr_lambda(epoch) (SequentialLR passes 0).
        self.last_epoch = epoch
        self._set([group["lr"] * fn(epoch)
                   for group, fn in zip(self.optimizer.param_groups, self.lr_lambdas)])

    def state_dict(self) -> dict[str, Any]:
        """As LRScheduler's, with PyTorch's ``lr_lambdas``, one per group: None for a
        function, the attributes of a callable object (its state)."""
        state = {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}
        return {**state, "lr_lambdas": [
            None if isinstance(fn, types.FunctionType) else dict(vars(fn))
            for fn in self.lr_lambdas]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As LRScheduler's; a callable object's saved attributes are put back on the
        functions this schedule was made with."""
        state = dict(state_dict)
        saved = state.pop("lr_lambdas", None) or []
        super().load_state_dict(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                vars(fn).update(attributes)

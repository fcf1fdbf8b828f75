"""The schedules that go up as well as down (``lr_scheduler.py`` gathers them):
cosine annealing with warm restarts, the cyclical rate between two bounds, and the
one-cycle policy. None is chainable (PyTorch's are not either): each sets the rate
outright from its own position, and the last two move momentum too, inversely: an
SGD-style group's ``momentum``, an Adam-style group's ``betas[0]``.

>>> opt = cr.optim.SGD([cr.Value(0.0)], lr=0.1, momentum=0.9)
>>> sched = cr.optim.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
>>> rates = []
>>> for _ in range(4):
...     rates.append(round(opt.param_groups[0]["lr"], 6)); sched.step()
>>> rates
[0.1, 0.3, 0.5, 0.3]
"""

import math
import types
from typing import Any, Callable

from ..hyperparameters import (require_flag, require_fraction, require_nonnegative,
                               require_number, require_positive_int)
from .optimizer import Optimizer
from .scheduler import LRScheduler, per_group, require_optimizer

__all__ = ["CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Half a cosine from the base learning rate down to ``eta_min`` over ``T_0`` steps,
    then a restart at the base rate; each period ``T_mult`` times the last (SGDR):
    ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``.

    ``step(epoch)`` goes to ``epoch``, which may be fractional, to anneal within an
    epoch: ``sched.step(epoch + i / iters)`` after batch ``i`` of ``iters``.

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    >>> [sched.lr_at(1.0, k) for k in range(7)]
    [1.0, 0.5, 1.0, 0.8535533905932737, 0.5, 0.14644660940672627, 1.0]
    >>> sched.step(1.5); round(sched.get_last_lr()[0], 6)
    0.146447
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,
                 eta_min: float = 0.0) -> None:
        name = "CosineAnnealingWarmRestarts"
        require_positive_int(name, "T_0", T_0)
        require_positive_int(name, "T_mult", T_mult)
        require_number(name, "eta_min", eta_min)
        self.T_0 = self.T_i = int(T_0)
        self.T_mult, self.eta_min = int(T_mult), eta_min
        self.T_cur: float = -1
        super().__init__(optimizer)

    def _period(self, epoch: float) -> tuple[float, int]:
        """(T_cur, T_i) at ``epoch``: the position in its period, and the period."""
        T_0, mult = self.T_0, self.T_mult
        if epoch < T_0:
            return epoch, T_0
        if mult == 1:
            return epoch % T_0, T_0
        # the periods before the n-th restart sum to T_0 (mult^n - 1) / (mult - 1);
        # math.log's rounding at a restart is PyTorch's too, kept so both agree there
        n = int(math.log(epoch / T_0 * (mult - 1) + 1, mult))
        return epoch - T_0 * (mult ** n - 1) / (mult - 1), T_0 * mult ** n

    def lr_at(self, base_lr: float, k: float) -> float:
        """The rate at step ``k`` from the start, restarts included."""
        T_cur, T_i = self._period(k)
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2

    def step(self, epoch: float | None = None) -> None:
        """Advance by one step, or go to ``epoch`` (a number >= 0, fractional within an
        epoch), and set the groups' learning rates."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        else:
            require_nonnegative("CosineAnnealingWarmRestarts", "epoch", epoch)
            T_cur, T_i = self._period(epoch)
            # Before T_0 the period goes back to T_0; with T_mult 1 it is T_0 anyway.
            self.T_cur = T_cur
            if epoch < self.T_0 or self.T_mult != 1:
                self.T_i = T_i
        self.last_epoch = math.floor(epoch)
        self._set(self._rates())

    def _rates(self) -> list[float]:
        cosine = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * cosine / 2 for base in self.base_lrs]

    # SequentialLR hands over with the position the schedule has (as PyTorch's)
    _closed_form_rates = _rates


def require_momentum(owner: str, optimizer: Optimizer) -> bool:
    """Whether the groups' momentum is ``betas[0]`` (Adam's) rather than ``momentum``;
    refused in one line for an optimizer with neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(f"{owner}: cycle_momentum=True needs an optimizer with momentum "
                         f"or betas, {type(optimizer).__name__} has neither: pass "
                         f"cycle_momentum=False")
    return "betas" in optimizer.defaults


def set_momentum(group: dict[str, Any], momentum: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class CyclicLR(LRScheduler):
    """The cyclical learning rate (CLR): up from ``base_lr`` to ``max_lr`` in
    ``step_size_up`` steps, down in ``step_size_down`` (default the same), again and
    again; the height of each cycle scaled by ``mode``: ``"triangular"`` (1),
    ``"triangular2"`` (halved each cycle), ``"exp_range"`` (``gamma ** k``), or by your
    ``scale_fn`` of the cycle (``scale_mode="cycle"``) or step (``"iterations"``).
    Step it after every batch. With ``cycle_momentum`` momentum goes the other way,
    between ``max_momentum`` and ``base_momentum``. ``base_lr``, ``max_lr`` and the
    momenta are one number or one per group.

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=0.1, momentum=0.9)
    >>> sched = cr.optim.CyclicLR(opt, 0.1, 0.5, step_size_up=1, mode="triangular2")
    >>> lrs = []
    >>> for _ in range(5):
    ...     sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.5, 0.1, 0.3, 0.1, 0.2]
    """

    MODES = ("triangular", "triangular2", "exp_range")

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: float = 2000,
                 step_size_down: float | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9) -> None:
        name = "CyclicLR"
        require_optimizer(name, optimizer)
        base_lrs = per_group(name, "base_lr", base_lr, optimizer)
        self.max_lrs = per_group(name, "max_lr", max_lr, optimizer)
        require_positive_number(name, "step_size_up", step_size_up)
        if step_size_down is not None:
            require_nonnegative(name, "step_size_down", step_size_down)
        if scale_fn is None and mode not in self.MODES:
            raise ValueError(f"{name}: mode must be one of {', '.join(self.MODES)} "
                             f"(or pass scale_fn), got {mode!r}")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"{name}: scale_fn must be a function of the cycle or the "
                            f"step, got {type(scale_fn).__name__}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{name}: scale_mode must be 'cycle' or 'iterations', "
                             f"got {scale_mode!r}")
        require_number(name, "gamma", gamma)
        require_flag(name, "cycle_momentum", cycle_momentum)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_mode()
        self.cycle_momentum = cycle_momentum
        for lr, group in zip(base_lrs, optimizer.param_groups):
            group["lr"] = lr
        if cycle_momentum:
            self.use_beta1 = require_momentum(name, optimizer)
            self.base_momentums = per_group(name, "base_momentum", base_momentum, optimizer)
            self.max_momentums = per_group(name, "max_momentum", max_momentum, optimizer)
            for top, bottom, group in zip(self.max_momentums, self.base_momentums,
                                          optimizer.param_groups):
                set_momentum(group, top, self.use_beta1)
                group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer)
        # After step 0 (as PyTorch's): a group whose initial_lr another schedule set
        # starts there, and cycles from base_lr from step 1 on.
        self.base_lrs = base_lrs

    def lr_at(self, base_lr: float, k: int) -> float:
        """Not defined: the rate at step k depends on the group's max_lr as well."""
        raise TypeError("CyclicLR: a group's rate depends on its max_lr too, not on "
                        "base_lr alone: read get_last_lr() after k steps")

    def _init_scale_mode(self) -> None:
        # The built-in modes fix what they scale by, whatever scale_mode says.
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The height of the cycle at ``x`` (the cycle, or the step), as a fraction."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def _rates(self) -> list[float]:
        k = self.last_epoch
        cycle = math.floor(1 + k / self.total_size)
        x = 1.0 + k / self.total_size - cycle      # how far into this cycle, in [0, 1)
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else k)
        lrs = [base + (top - base) * rise * scale
               for base, top in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums,
                                          self.max_momentums, strict=True):
                set_momentum(group, top - (top - bottom) * rise * scale, self.use_beta1)
        return lrs

    _closed_form_rates = _rates

    def state_dict(self) -> dict[str, Any]:
        """As LRScheduler's, and as PyTorch's: a scale_fn that is a function is saved as
        None; one that is a callable object, as its attributes."""
        state = super().state_dict()
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else dict(vars(fn)))
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As LRScheduler's; a callable object's saved attributes are put back on the
        scale_fn this schedule was made with."""
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)
        if fn is not None:
            vars(self._scale_fn_custom).update(fn)
        self._init_scale_mode()


class OneCycleLR(LRScheduler):
    """The one-cycle policy: the rate warms up from ``max_lr / div_factor`` to ``max_lr``
    over the first ``pct_start`` of ``total_steps`` (or ``epochs * steps_per_epoch``),
    then anneals (``anneal_strategy`` ``"cos"`` or ``"linear"``) to
    ``max_lr / div_factor / final_div_factor``; with ``three_phase`` it comes back down
    to the start symmetrically first, then anneals. Momentum cycles inversely between
    ``max_momentum`` and ``base_momentum``. Step it after every batch; a step past
    ``total_steps`` is refused. ``max_lr`` and the momenta are one number or one per
    group.

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=0.1, momentum=0.9)
    >>> sched = cr.optim.OneCycleLR(opt, max_lr=1.0, total_steps=4, pct_start=0.5,
    ...                             anneal_strategy="linear", div_factor=4.0,
    ...                             final_div_factor=25.0)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.25, 1.0, 0.505, 0.01]
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False) -> None:
        name = "OneCycleLR"
        require_optimizer(name, optimizer)
        if total_steps is not None:
            require_positive_int(name, "total_steps", total_steps)
            self.total_steps = int(total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            require_positive_int(name, "epochs", epochs)
            require_positive_int(name, "steps_per_epoch", steps_per_epoch)
            self.total_steps = int(epochs) * int(steps_per_epoch)
        else:
            raise ValueError(f"{name}: give total_steps, or epochs and steps_per_epoch, "
                             f"got total_steps={total_steps!r}, epochs={epochs!r}, "
                             f"steps_per_epoch={steps_per_epoch!r}")
        require_fraction(name, "pct_start", pct_start)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{name}: anneal_strategy must be 'cos' or 'linear', "
                             f"got {anneal_strategy!r}")
        require_positive_number(name, "div_factor", div_factor)
        require_positive_number(name, "final_div_factor", final_div_factor)
        require_flag(name, "cycle_momentum", cycle_momentum)
        require_flag(name, "three_phase", three_phase)
        max_lrs = per_group(name, "max_lr", max_lr, optimizer)
        self._schedule_phases = phases(pct_start * self.total_steps, self.total_steps,
                                       three_phase)
        self._anneal_func_type = anneal_strategy
        # The bounds live in the groups (as PyTorch's): a checkpoint of the optimizer
        # carries them, and the schedule reads them at each step.
        for top, group in zip(max_lrs, optimizer.param_groups):
            group["initial_lr"] = top / div_factor
            group["max_lr"] = top
            group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = require_momentum(name, optimizer)
            tops = per_group(name, "max_momentum", max_momentum, optimizer)
            bottoms = per_group(name, "base_momentum", base_momentum, optimizer)
            for top, bottom, group in zip(tops, bottoms, optimizer.param_groups):
                set_momentum(group, top, self.use_beta1)
                group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer)

    def lr_at(self, base_lr: float, k: int) -> float:
        """Not defined: the rate at step k comes from the group's max_lr."""
        raise TypeError("OneCycleLR: a group's rate comes from its max_lr, not from a "
                        "base rate: read get_last_lr() after k steps")

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _rates(self) -> list[float]:
        k = self.last_epoch
        if k > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {k} times, but total_steps is "
                             f"{self.total_steps}")
        # the phase k is in: the first whose end it has not passed (the last at worst)
        last = len(self._schedule_phases) - 1
        start = 0.0
        for i, phase in enumerate(self._schedule_phases):
            if k <= phase["end_step"] or i == last:
                break
            start = phase["end_step"]
        pct = (k - start) / (phase["end_step"] - start)
        lrs = []
        for group in self.optimizer.param_groups:
            lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                set_momentum(group, self._anneal(group[phase["start_momentum"]],
                                                 group[phase["end_momentum"]], pct),
                             self.use_beta1)
        return lrs

    _closed_form_rates = _rates


def phases(warm: float, total: int, three_phase: bool) -> list[dict[str, Any]]:
    """OneCycleLR's phases, each ending at a step (PyTorch's table): which group
    entries the rate and the momentum go from and to."""
    def phase(end, lr_from, lr_to, m_from, m_to):
        return {"end_step": end, "start_lr": lr_from, "end_lr": lr_to,
                "start_momentum": m_from, "end_momentum": m_to}
    up = phase(float(warm) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum")
    if not three_phase:
        return [up, phase(total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
    return [up,
            phase(float(2 * warm) - 2, "max_lr", "initial_lr", "base_momentum",
                  "max_momentum"),
            phase(total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]


def require_positive_number(owner: str, name: str, value: Any) -> None:
    """A real number > 0."""
    require_number(owner, name, value)
    if not value > 0:  # also refuses NaN
        raise ValueError(f"{owner}: {name} must be > 0, got {value!r}")

"""SWALR, as PyTorch's ``torch.optim.swa_utils.SWALR`` (``swa_utils.py`` gathers it):
the learning rate annealed to a constant for stochastic weight averaging.

>>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
>>> sched = cr.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2,
...                                  anneal_strategy="linear")
>>> [sched.lr_at(1.0, k) for k in range(4)]
[1.0, 0.75, 0.5, 0.5]
"""

import math
from numbers import Integral
from typing import Literal

from .optimizer import Optimizer
from .scheduler import LRScheduler, per_group, require_optimizer

__all__ = ["SWALR"]


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps, then
    hold it there: ``lr = swa_lr * a + base_lr * (1 - a)``, with ``a`` rising from 0 to 1
    along half a cosine (``anneal_strategy="cos"``) or a line (``"linear"``).

    ``swa_lr`` is one rate or a list of one per group; each group keeps its own as
    ``group["swa_lr"]``, as PyTorch's. As PyTorch's, a step works from the rate the group
    has (it recovers the rate the annealing started from, then moves on), so a rate
    changed by hand is carried on. ``anneal_epochs=0`` sets ``swa_lr`` at the first step.

        swa_model = AveragedModel(model)
        sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5)
        for epoch in range(epochs):
            train_one_epoch(model, opt)
            if epoch >= swa_start:
                swa_model.update_parameters(model)
                sched.step()

    >>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
    >>> sched = cr.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2)
    >>> sched.step(); round(opt.param_groups[0]["lr"], 6)    # halfway along the cosine
    0.55
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10,
                 anneal_strategy: Literal["cos", "linear"] = "cos") -> None:
        require_optimizer("SWALR", optimizer)
        for lr, group in zip(per_group("SWALR", "swa_lr", swa_lr, optimizer),
                             optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"SWALR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, Integral) \
                or anneal_epochs < 0:
            raise ValueError(f"SWALR: anneal_epochs must be an integer >= 0, got "
                             f"{anneal_epochs!r}")
        self._anneal_strategy = anneal_strategy  # (PyTorch's name, in the state_dict)
        self.anneal_epochs = int(anneal_epochs)
        super().__init__(optimizer)

    def _anneal(self, t: float) -> float:
        """How far along the annealing (0 to 1) at the fraction ``t`` of its steps."""
        t = max(0.0, min(1.0, t))
        return t if self._anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    def _weights(self, k: int) -> tuple[float, float]:
        """The annealing's progress before step ``k`` and after it."""
        if self.anneal_epochs == 0:
            k = max(1, k)
        span = max(1, self.anneal_epochs)
        return self._anneal((k - 1) / span), self._anneal(k / span)

    def lr_at(self, base_lr: float, k: int, group: int = 0) -> float:
        """swa_lr * a + base_lr * (1 - a), with group ``group``'s swa_lr."""
        alpha = self._weights(k)[1]
        return self.optimizer.param_groups[group]["swa_lr"] * alpha + base_lr * (1 - alpha)

    def _rates(self) -> list[float]:
        before, alpha = self._weights(self.last_epoch)
        rates = []
        for group in self.optimizer.param_groups:
            swa_lr = group["swa_lr"]
            # the rate the annealing started from, recovered from the group's (PyTorch's
            # chainable form); fully annealed, it is swa_lr itself
            start = swa_lr if before == 1 else (group["lr"] - before * swa_lr) / (1 - before)
            rates.append(swa_lr * alpha + start * (1 - alpha))
        return rates

    def _closed_form_rates(self) -> list[float]:
        return [self.lr_at(base, self.last_epoch, i) for i, base in enumerate(self.base_lrs)]

    def _jump(self, epoch: int) -> None:
        # PyTorch's has no closed form: handed over to by SequentialLR, it steps from
        # the rate the group has
        self.last_epoch = epoch
        self._set(self._rates())

"""Adagrad, as PyTorch's ``torch.optim.Adagrad``."""

import numpy as np

from ..hyperparameters import require_flag, require_nonnegative
from ..updates import rmsprop_step
from .optimizer import Optimizer, Params

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan and Singer), as PyTorch computes it.

    Each parameter's squared gradients add up in ``sum`` (started at
    ``initial_accumulator_value``), and its step is ``lr_t * g / (sqrt(sum) + eps)``,
    with a learning rate decayed over the steps, ``lr_t = lr / (1 + (t-1) * lr_decay)``
    at step ``t``: RMSprop's step on a sum instead of a mean. ``weight_decay`` adds
    ``weight_decay * p`` to the gradient; ``maximize=True`` flips its sign first.

    As in PyTorch, the state (``step`` at 0, ``sum``) exists from the start for every
    parameter, so ``state_dict()`` lists them all before the first step. Each group's
    ``sum`` starts at that group's ``initial_accumulator_value``; PyTorch starts every
    group's at the constructor's value, ignoring a group's own.

    >>> x = cr.Value(1.0); opt = cr.optim.Adagrad([x], lr=0.1)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # 1 - 0.1 * 2 / sqrt(4)
    0.9
    """

    def __init__(self, params: Params, lr: float = 1e-2, *, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=maximize))
        for group in self.param_groups:
            for p in group["params"]:
                data = np.asarray(p.data, dtype=getattr(p, "dtype", np.float64))
                self.state[p] = {"step": 0, "sum": np.full_like(
                    data, group["initial_accumulator_value"])}

    def _check(self, group):
        super()._check(group)
        for name in ("lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            require_nonnegative("Adagrad", name, group[name])
        require_flag("Adagrad", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        p, g = self._decayed(p, g, group)
        if not state:  # a group added after the start, or a state loaded without it
            state["step"] = 0
            state["sum"] = np.full_like(p, group["initial_accumulator_value"])
        t = state["step"] = state["step"] + 1
        lr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
        total = state["sum"] = state["sum"] + g * g
        return p - rmsprop_step(g, total, lr, group["eps"], eps_under_root=False)

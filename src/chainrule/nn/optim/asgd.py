"""ASGD, as PyTorch's ``torch.optim.ASGD``."""

import numpy as np

from ..hyperparameters import require_flag, require_nonnegative, require_number
from .optimizer import Optimizer, Params

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (Polyak and Juditsky), as PyTorch computes it.

    Each step shrinks and moves the parameter with a decaying rate ``eta``,
    ``p = p * (1 - lambd * eta) - eta * g``, then sets ``eta = lr / (1 + lambd * lr *
    t) ** alpha`` for the next step ``t + 1``. The running average of the iterates is
    kept in ``ax``: it follows the parameter (``ax = p``) until step ``t0``, then
    averages, ``ax += mu * (p - ax)`` with ``mu = 1 / (t - t0)``. The parameters
    themselves are the SGD iterates; ``ax`` is the average to evaluate with.
    ``weight_decay`` adds ``weight_decay * p`` to the gradient; ``maximize=True`` flips
    its sign first.

    The state is PyTorch's: ``step``, ``eta``, ``mu`` and ``ax``.

    >>> x = cr.Value(1.0); opt = cr.optim.ASGD([x], lr=0.1, lambd=0.0)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # 1 - 0.1 * 2
    0.8
    >>> float(opt.state[x]["ax"]) == x.data               # (before step t0, ax = p)
    True
    """

    def __init__(self, params: Params, lr: float = 1e-2, *, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize))

    def _check(self, group):
        super()._check(group)
        # PyTorch checks only lr and weight_decay; lambd, alpha and t0 may be any number
        for name in ("lambd", "alpha", "t0"):
            require_number("ASGD", name, group[name])
        require_nonnegative("ASGD", "weight_decay", group["weight_decay"])
        require_flag("ASGD", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        lr, lambd = group["lr"], group["lambd"]
        p, g = self._decayed(p, g, group)
        if not state:
            state["step"] = 0
            state["eta"] = lr
            state["mu"] = 1.0
            state["ax"] = np.zeros_like(p)
        t = state["step"] = state["step"] + 1
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        p = p * (1 - lambd * eta) - eta * g
        # mu is 1 before t0: ax is the parameter itself there (not ax + (p - ax), which
        # rounds); a choice on the state, so np.where's under cr.jit
        state["ax"] = np.where(mu == 1, p, ax + (p - ax) * mu)
        state["eta"] = lr / (1 + lambd * lr * t) ** group["alpha"]
        state["mu"] = _number(1 / np.maximum(t - group["t0"], 1.0))
        return p


def _number(x):
    """A NumPy scalar as a Python float (a float64 scalar would widen float32 state);
    a traced value (under cr.jit) as it is."""
    return float(x) if isinstance(x, np.generic) else x

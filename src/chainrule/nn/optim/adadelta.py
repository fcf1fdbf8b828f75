"""Adadelta, as PyTorch's ``torch.optim.Adadelta``."""

import numpy as np

from ..hyperparameters import require_flag, require_fraction, require_nonnegative
from ..updates import moving_average
from .optimizer import Optimizer, Params

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler), as PyTorch computes it.

    Two running means with the same decay ``rho``: of the squared gradients,
    ``v = rho*v + (1-rho)*g*g``, and of the squared updates, ``u``. The update is the
    gradient rescaled by their ratio, ``d = sqrt(u + eps) / sqrt(v + eps) * g``, so it
    carries the parameter's units; then ``u = rho*u + (1-rho)*d*d`` and ``p -= lr * d``
    (``lr`` 1 by default, as in the paper). ``weight_decay`` adds ``weight_decay * p``
    to the gradient; ``maximize=True`` flips its sign first.

    The state is PyTorch's: ``step``, ``square_avg`` (v) and ``acc_delta`` (u).

    >>> x = cr.Value(1.0); opt = cr.optim.Adadelta([x], rho=0.75, eps=0.25)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # 1 - sqrt(.25)/sqrt(1.25)*2
    0.105573
    """

    def __init__(self, params: Params, lr: float = 1.0, *, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))

    def _check(self, group):
        super()._check(group)
        require_fraction("Adadelta", "rho", group["rho"])
        require_nonnegative("Adadelta", "eps", group["eps"])
        require_nonnegative("Adadelta", "weight_decay", group["weight_decay"])
        require_flag("Adadelta", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        rho, eps = group["rho"], group["eps"]
        p, g = self._decayed(p, g, group)
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p)
            state["acc_delta"] = np.zeros_like(p)
        state["step"] = state["step"] + 1
        v = state["square_avg"] = moving_average(state["square_avg"], g * g, rho)
        # PyTorch's order: the ratio of the roots first, then times g
        delta = np.sqrt(state["acc_delta"] + eps) / np.sqrt(v + eps) * g
        state["acc_delta"] = moving_average(state["acc_delta"], delta * delta, rho)
        return p - group["lr"] * delta

"""Adamax, as PyTorch's ``torch.optim.Adamax``."""

import numpy as np

from ..hyperparameters import require_betas, require_flag, require_nonnegative
from ..updates import adamax_step, moving_average
from .optimizer import Optimizer, Params

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma and Ba's Adam with the infinity norm), as PyTorch computes it.

    The first moment is Adam's, ``m = beta1*m + (1-beta1)*g``; the second is replaced
    by a decayed maximum of the gradients' sizes, ``u = max(beta2*u, |g| + eps)`` (eps
    inside the maximum, as PyTorch puts it), and ``p -= lr/(1-beta1**t) * m/u`` at step
    ``t``. ``weight_decay`` adds ``weight_decay * p`` to the gradient;
    ``maximize=True`` flips its sign first.

    The state is PyTorch's: ``step``, ``exp_avg`` (m) and ``exp_inf`` (u).

    >>> x = cr.Value(1.0); opt = cr.optim.Adamax([x], lr=0.1)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # the first step is ~lr long
    0.9
    """

    def __init__(self, params: Params, lr: float = 2e-3, *,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps,
                                      weight_decay=weight_decay, maximize=maximize))

    def _check(self, group):
        super()._check(group)
        require_betas("Adamax", group)
        require_nonnegative("Adamax", "eps", group["eps"])
        require_nonnegative("Adamax", "weight_decay", group["weight_decay"])
        require_flag("Adamax", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        beta1, beta2 = group["betas"]
        p, g = self._decayed(p, g, group)
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p)
            state["exp_inf"] = np.zeros_like(p)
        t = state["step"] = state["step"] + 1
        m = state["exp_avg"] = moving_average(state["exp_avg"], g, beta1)
        u = state["exp_inf"] = np.maximum(beta2 * state["exp_inf"], np.abs(g) + group["eps"])
        return p - adamax_step(m, u, t, group["lr"], beta1)

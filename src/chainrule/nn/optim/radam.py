"""RAdam, as PyTorch's ``torch.optim.RAdam``."""

import numpy as np

from ..hyperparameters import require_betas, require_flag, require_nonnegative
from .adam import adam_moments
from .optimizer import Optimizer, Params

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (Liu et al.'s rectified Adam), as PyTorch computes it.

    Adam's moments ``m`` and ``v``; Adam's adaptive step only once the variance of
    ``1/sqrt(v)`` can be estimated. With ``rho_inf = 2/(1-beta2) - 1`` and, at step
    ``t``, ``rho_t = rho_inf - 2t beta2**t / (1 - beta2**t)``::

        p -= lr * m_hat * r_t * sqrt(1 - beta2**t) / (sqrt(v) + eps)    # rho_t > 5
        p -= lr * m_hat                                                 # otherwise

    where ``m_hat = m / (1 - beta1**t)`` and ``r_t`` is the rectification
    ``sqrt((rho_t-4)(rho_t-2) rho_inf / ((rho_inf-4)(rho_inf-2) rho_t))``: the first
    steps are SGD with momentum. ``weight_decay`` adds ``weight_decay * p`` to the
    gradient, or, with ``decoupled_weight_decay=True``, shrinks ``p *= 1 - lr *
    weight_decay`` first. ``maximize=True`` flips the gradient's sign first.

    The state is PyTorch's: ``step``, ``exp_avg`` and ``exp_avg_sq``.

    >>> x = cr.Value(1.0); opt = cr.optim.RAdam([x], lr=0.1)
    >>> (x * x).backward(); opt.step(); round(x.data, 6)   # 1 - 0.1 * 2: momentum SGD
    0.8
    """

    def __init__(self, params: Params, lr: float = 1e-3, *,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _check(self, group):
        super()._check(group)
        require_betas("RAdam", group)
        require_nonnegative("RAdam", "eps", group["eps"])
        require_nonnegative("RAdam", "weight_decay", group["weight_decay"])
        require_flag("RAdam", "decoupled_weight_decay", group["decoupled_weight_decay"])
        require_flag("RAdam", "maximize", group["maximize"])

    def _update(self, p, g, state, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        p, g = self._decayed(p, g, group, decoupled=group["decoupled_weight_decay"])
        t, m, v = adam_moments(state, p, g, beta1, beta2)
        m_hat = m / (1 - beta1 ** t)
        rho_inf = 2 / (1 - beta2) - 1
        if rho_inf <= 5:  # rho_t < rho_inf: never rectified (known without the step)
            return p - m_hat * lr
        correction2 = 1 - beta2 ** t
        rho_t = rho_inf - 2 * t * beta2 ** t / correction2
        # The step count is traced under cr.jit, so the choice is np.where's, not an
        # if; rho_t is held at 5 or more, where the rectification is a real number.
        rho = np.maximum(rho_t, 5.0)
        rect = ((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho)) ** 0.5
        # (with eps = 0, an entry whose v is 0 divides by zero in the branch not taken;
        # PyTorch does not compute it there, so no warning either)
        with np.errstate(divide="ignore", invalid="ignore"):
            adaptive = correction2 ** 0.5 / (np.sqrt(v) + eps)
            return p - m_hat * lr * np.where(rho_t > 5, adaptive * rect, 1.0)
